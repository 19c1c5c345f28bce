"""Escaping Extinction from a position: checking one (every count, card
and Dino where the rulebook allows it), setting one up, redacting it."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from domain.chance import Rng
from domain.errors import (
    InvalidCommand,
    position_invalid,
    quote,
)
from domain.escaping_extinction.content import (
    CONTENT,
    Dino,
    Terrain,
)
from domain.escaping_extinction.model import (
    UNSEEN,
    DinoState,
    Event,
    Place,
    Position,
    RocketDocketCardRevealed,
    Scenario,
    State,
    Supply,
    TurnBegan,
    WorldSetUp,
)
from domain.escaping_extinction.readings import (
    COUNTED,
    DINOS,
    KEEP_CARDS,
    OASIS,
    RESOURCE_FIELD,
    TURN_INDEX,
    dino_name,
    dino_of,
    max_health,
    meteor_shuffle,
)
from domain.frozen import replace

# -- starting from a position -----------------------------------------------------


def fresh_dinos() -> tuple[DinoState, ...]:
    """The four Dinos at set-up: on the Oasis, full of Food and Health."""
    return tuple(
        DinoState(d, OASIS, CONTENT.dinos[d].energy, 0, 0, False, max_health(d), ())
        for d in DINOS
    )


def fresh_places() -> tuple[Place, ...]:
    oasis = Place(CONTENT.oasis.id, True, False, False, False)
    return (oasis,) + (Place("", False, False, False, False),) * (CONTENT.positions - 1)


def position_places(position: Position) -> tuple[Place, ...]:
    return position.places or fresh_places()


def position_dinos(position: Position) -> tuple[DinoState, ...]:
    return position.dinos or fresh_dinos()


def position_supply(position: Position) -> dict[str, int]:
    """What the Supply holds when every token the position places elsewhere
    is taken out of the game's content (may be negative: too many)."""
    left = dict(CONTENT.supply)
    for place in position_places(position):
        resource = CONTENT.tile(place.tile).resource if place.tile else None
        if place.token and resource is not None:
            left[RESOURCE_FIELD[resource]] -= 1
        left["lava_flows"] -= place.lava
    for d in position_dinos(position):
        left["food"] -= d.food
        left["wood"] -= d.wood
        left["vines"] -= d.vines
        left["rocket_parts"] -= d.rocket_part
    left["wood"] -= position.launchpad_wood
    left["rocket_parts"] -= position.launchpad_parts
    return left


def _check_scenario_beside(scenario: Scenario) -> None:
    """The position says the World and the decks: the scenario's own stay
    empty (the die, Earthquakes and reshuffles to come may still be fixed)."""
    for name in ("layout", "meteor_deck", "rocket_docket_deck", "exploration_deck"):
        if getattr(scenario, name):
            raise InvalidCommand(
                "POSITION_INVALID",
                f"With a position, leave the scenario's {name} empty: the "
                "position says it.",
                name,
            )


def _check_places(places: tuple[Place, ...]) -> None:
    if not places:
        return
    if len(places) != CONTENT.positions:
        raise position_invalid(
            "places",
            f"The position lists {len(places)} places; the World has "
            f"{CONTENT.positions} (the Oasis first), or list none.",
        )
    oasis = places[0]
    if (
        oasis.tile != CONTENT.oasis.id
        or not oasis.revealed
        or oasis.token
        or oasis.lava
    ):
        raise position_invalid(
            "places[0]",
            f'Position 0 is the Oasis: tile "{CONTENT.oasis.id}", face up, no '
            "token, no Lava Flow (nobody Explores it).",
        )
    if oasis.cave:
        raise position_invalid("places[0].cave", "No Secret Cave goes on the Oasis.")
    seen: set[str] = set()
    for i, place in enumerate(places[1:], start=1):
        _check_place(i, place, seen)
    caves = sum(p.cave for p in places)
    if caves not in (0, 2):
        raise position_invalid(
            "places", f"{caves} Secret Caves lie out; there are two or none."
        )


def _check_place(i: int, place: Place, seen: set[str]) -> None:
    if place.tile:
        if place.tile not in CONTENT.tiles:
            raise position_invalid(
                f"places[{i}].tile", f"No terrain tile {quote(place.tile)}."
            )
        if place.tile in seen:
            raise position_invalid(
                f"places[{i}].tile", f"Tile {place.tile!r} lies twice."
            )
        seen.add(place.tile)
    elif place.revealed:
        raise position_invalid(
            f"places[{i}].tile", f"Face-up place {i} must name its tile."
        )
    if place.token:
        if not place.revealed:
            raise position_invalid(
                f"places[{i}].token", f"Face-down place {i} has no token."
            )
        if CONTENT.tile(place.tile).resource is None:
            raise position_invalid(
                f"places[{i}].token", f"Tile {place.tile!r} has no resource."
            )
    if place.lava and not place.revealed:
        raise position_invalid(
            f"places[{i}].lava", f"Face-down place {i} has no Lava Flow."
        )
    if place.lava and CONTENT.tile(place.tile).terrain is Terrain.VOLCANO:
        raise position_invalid(
            f"places[{i}].lava",
            "No Lava Flow on the Volcano: a Lava Flow comes of Exploring, "
            "which the Volcano cannot be.",
        )


def _check_dinos(position: Position, places: tuple[Place, ...]) -> None:
    dinos = position.dinos
    if not dinos:
        return
    if tuple(d.dino for d in dinos) != DINOS:
        raise position_invalid(
            "dinos",
            "The position lists the four Dinos in turn order: Terry, Rex, Sara, "
            "Long Neck.",
        )
    for i, d in enumerate(dinos):
        card = CONTENT.dinos[d.dino]
        if not 0 <= d.position < CONTENT.positions:
            raise position_invalid(
                f"dinos[{i}].position", f"No World position {d.position}."
            )
        if not places[d.position].revealed:
            raise position_invalid(
                f"dinos[{i}].position",
                f"{card.name} stands on position {d.position}, face down; a Dino "
                "stands only on a face-up tile.",
            )
        if not 0 <= d.food <= card.energy:
            raise position_invalid(
                f"dinos[{i}].food", f"{card.name} holds 0 to {card.energy} Food."
            )
        if min(d.wood, d.vines) < 0 or d.wood + d.vines > card.satchel:
            raise position_invalid(
                f"dinos[{i}].wood",
                f"{card.name}'s Satchel holds 0 to {card.satchel} Wood and Vines.",
            )
        if not 0 <= d.health <= card.health:
            raise position_invalid(
                f"dinos[{i}].health", f"{card.name}'s Health is 0 to {card.health}."
            )
        for n, held in enumerate(d.held_cards):
            if held not in KEEP_CARDS:
                raise position_invalid(
                    f"dinos[{i}].held_cards[{n}]",
                    f"{quote(held)} is no Exploration card kept for later.",
                )


def _check_unique(
    lists: Sequence[tuple[str, Sequence[str]]], known: Collection[str], what: str
) -> None:
    """Each card of ``lists`` (field name, ids) known, and named once in all."""
    seen: set[str] = set()
    for name, cards in lists:
        for n, card in enumerate(cards):
            if card not in known:
                raise position_invalid(f"{name}[{n}]", f"No {what} card {quote(card)}.")
            if card in seen:
                raise position_invalid(
                    f"{name}[{n}]", f"{what} card {card!r} is named twice."
                )
            seen.add(card)


def _check_cards(position: Position) -> None:
    p = position
    _check_unique(
        (("meteor_deck", p.meteor_deck), ("meteor_drawn", p.meteor_drawn)),
        CONTENT.meteor,
        "Meteor",
    )
    _check_unique(
        (
            ("rocket_docket_deck", p.rocket_docket_deck),
            ("rocket_docket_open", p.rocket_docket_open),
            ("rocket_docket_done", p.rocket_docket_done),
        ),
        CONTENT.docket,
        "Rocket Docket",
    )
    held = [(f"dinos[{i}].held_cards", d.held_cards) for i, d in enumerate(p.dinos)]
    _check_unique(
        (
            ("exploration_deck", p.exploration_deck),
            ("exploration_discard", p.exploration_discard),
            *held,
        ),
        CONTENT.exploration,
        "Exploration",
    )


def _check_counts(position: Position) -> None:
    """The tokens add up to the game's: the Supply holds the rest."""
    left = position_supply(position)
    given = position.supply
    for name in COUNTED:
        if left[name] < 0:
            raise position_invalid(
                f"supply.{name}",
                f"The position uses {CONTENT.supply[name] - left[name]} "
                f"{name.replace('_', ' ')}; the game has {CONTENT.supply[name]}.",
            )
        if given is not None and getattr(given, name) != left[name]:
            raise position_invalid(
                f"supply.{name}",
                f"The Supply holds what the rest leaves: {left[name]} "
                f"{name.replace('_', ' ')} (or leave the supply unset).",
            )


def _check_docket(position: Position) -> None:
    """One flipped Rocket Docket card per part collected; all face-up ones
    flip with the fifth."""
    collected = (
        CONTENT.supply["rocket_parts"] - position_supply(position)["rocket_parts"]
    )
    done = len(position.rocket_docket_done)
    if collected < CONTENT.launch_parts and done != collected:
        raise position_invalid(
            "rocket_docket_done",
            f"{collected} Rocket Parts were collected: as many cards are flipped "
            f"(not {done}).",
        )
    if done < collected:
        raise position_invalid(
            "rocket_docket_done",
            f"Every Rocket Part was collected: at least {collected} cards are flipped.",
        )
    if collected >= CONTENT.launch_parts and position.rocket_docket_open:
        raise position_invalid(
            "rocket_docket_open",
            "With every Rocket Part collected, every face-up card has flipped.",
        )


#: The highest round a position may be in (the round is an int32 on the
#: wire, and no game lasts anywhere near it).
MAX_ROUND = 1_000_000


def _check_turn(position: Position, dinos: tuple[DinoState, ...], earth: int) -> None:
    if position.round is not None and not 1 <= position.round <= MAX_ROUND:
        raise position_invalid(
            "round", f"Round {position.round}: rounds count from 1 to {MAX_ROUND}."
        )
    actions = position.actions_left
    if actions is not None and not 0 <= actions <= CONTENT.actions_per_turn:
        raise position_invalid(
            "actions_left", f"A turn has 0 to {CONTENT.actions_per_turn} actions left."
        )
    if not 0 <= position.meteor < earth:
        raise position_invalid(
            "meteor",
            f"The Meteor is on space 0 to {earth - 1} "
            f"({earth} is Earth: the game would be over).",
        )
    if position.launchpad_wood < 0 or position.launchpad_parts < 0:
        raise position_invalid(
            "launchpad_wood", "The Launchpad holds no negative counts."
        )
    d = dinos[TURN_INDEX[position.current_dino or DINOS[0]]]
    if d.health == 0 and d.vines == 0:
        raise position_invalid(
            "current_dino",
            f"{dino_name(d.dino)} is Injured with no Vine to heal itself: its turn "
            "would pass at once.",
        )
    if (
        position.launchpad_parts >= CONTENT.launch_parts
        and position.launchpad_wood >= CONTENT.launch_wood
        and all(x.position == OASIS for x in dinos)
    ):
        raise position_invalid(
            "launchpad_parts",
            "The Rocket is complete and every Dino is home: the game is won.",
        )


def validate_position(
    position: Position, scenario: Scenario, track_length: int = 0
) -> None:
    """Every field of ``position`` within the game, nothing in two places,
    the counts adding up to the content (the lifecycle then checks that the
    game is not over and a seat may act). ``track_length``: the game's
    ``meteor_track_length`` option (0: the rulebook's track)."""
    _check_scenario_beside(scenario)
    _check_places(position.places)
    places = position_places(position)
    _check_dinos(position, places)
    _check_cards(position)
    _check_turn(
        position, position_dinos(position), track_length or CONTENT.track_length
    )
    _check_counts(position)
    _check_docket(position)


def world_set_up(
    layout: tuple[str, ...],
    meteor_deck: tuple[str, ...],
    rocket_docket_deck: tuple[str, ...],
    exploration_deck: tuple[str, ...],
) -> WorldSetUp:
    """The deal, with the sizes of its decks (which a player's copy keeps)."""
    return WorldSetUp(
        layout,
        meteor_deck,
        rocket_docket_deck,
        exploration_deck,
        len(meteor_deck),
        len(rocket_docket_deck),
        len(exploration_deck),
    )


def turn_began(state: State, dino: Dino, round_: int) -> TurnBegan:
    """``dino``'s turn begins: the turn's actions, and whether it is for
    healing only (the Dino is Injured: it may heal itself with its Vines
    first, and its turn does not end by itself meanwhile)."""
    injured = dino_of(state, dino).health == 0
    return TurnBegan(dino, round_, CONTENT.actions_per_turn, injured)


def _deck(
    listed: tuple[str, ...], named: Collection[str], every: Sequence[str], rng: Rng
) -> tuple[str, ...]:
    """``listed``, then the cards of ``every`` named nowhere, shuffled."""
    return (*listed, *rng.shuffled([c for c in every if c not in named]))


def position_set_up(position: Position, rng: Rng) -> list[Event]:
    """The deal a position leaves to chance: blank face-down tiles and the
    cards it names nowhere."""
    p = position
    places = position_places(p)
    named = {x.tile for x in places}
    unnamed = iter(rng.shuffled([t for t in CONTENT.tile_order if t not in named]))
    layout = tuple(place.tile or next(unnamed) for place in places[1:])
    meteor_named = (*p.meteor_deck, *p.meteor_drawn)
    meteor = (
        _deck(p.meteor_deck, meteor_named, CONTENT.meteor_order, rng)
        if meteor_named
        else meteor_shuffle(rng)
    )
    docket_named = (*p.rocket_docket_deck, *p.rocket_docket_open, *p.rocket_docket_done)
    docket = _deck(p.rocket_docket_deck, docket_named, CONTENT.docket_order, rng)
    held = [c for d in position_dinos(p) for c in d.held_cards]
    exploration = _deck(
        p.exploration_deck,
        (*p.exploration_deck, *p.exploration_discard, *held),
        CONTENT.exploration_order,
        rng,
    )
    events: list[Event] = [world_set_up(layout, meteor, docket, exploration)]
    if not docket_named:
        events.append(RocketDocketCardRevealed(docket[0]))
    return events


def position_state(state: State, position: Position) -> State:
    """``state`` (at set-up) as ``position`` has it: the turn under way."""
    dinos = position_dinos(position)
    left = position_supply(position)
    current = TURN_INDEX[position.current_dino or DINOS[0]]
    actions = position.actions_left
    return replace(
        state,
        places=position_places(position),
        dinos=dinos,
        supply=Supply(**{name: left[name] for name in COUNTED}),
        launchpad_wood=position.launchpad_wood,
        launchpad_parts=position.launchpad_parts,
        meteor=position.meteor,
        meteor_deck=position.meteor_deck,
        meteor_drawn=position.meteor_drawn,
        docket_deck=position.rocket_docket_deck,
        docket_open=position.rocket_docket_open,
        docket_done=position.rocket_docket_done,
        exploration_deck=position.exploration_deck,
        exploration_discard=position.exploration_discard,
        round=position.round or 1,
        current=current,
        turn_open=True,
        actions_left=CONTENT.actions_per_turn if actions is None else actions,
        waiting_to_heal=dinos[current].health == 0,
    )


def redacted_position(position: Position) -> Position:
    """``position`` as a player sees it: face-down tiles and the decks'
    cards unseen (:data:`~domain.escaping_extinction.model.UNSEEN`, as in
    ``WorldSetUp``; the decks keep their sizes)."""
    places = tuple(
        p if p.revealed else replace(p, tile=UNSEEN) for p in position.places
    )
    return replace(
        position,
        places=places,
        meteor_deck=(UNSEEN,) * len(position.meteor_deck),
        rocket_docket_deck=(UNSEEN,) * len(position.rocket_docket_deck),
        exploration_deck=(UNSEEN,) * len(position.exploration_deck),
    )
