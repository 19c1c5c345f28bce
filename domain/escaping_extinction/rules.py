"""Escaping Extinction: the cooperative race to build Dr Raptor's Rocket.

Read top-down, like the rulebook:

1. Shape. 1-4 players share the four Dinos (Terry, Rex, Sara, Long Neck,
   always taking their turns in that order): four players one each, three
   players one each and the fourth to seat 0 (or to all of them, an
   option), two players two each, one player all four. Chance: the face-down
   World, three shuffled decks and a six-sided die. Nobody knows a
   face-down tile or a deck order; everything else is open.
2. Set-up. The 18 terrain tiles lie face down around the Oasis (a radius-2
   hex map); the Meteor deck is shuffled the special way (three piles with
   one Earthquake each, the 5-card pile on top); the first Rocket Docket
   card is revealed; every Dino starts full of Food on the Oasis.
3. A turn. Up to two actions - Travel, Explore, Resupply, Collect a Rocket
   Part (what a face-up Rocket Docket card asks) and Sara's Heal Teammates -
   plus, for no action, trading with a Dino on the same tile, healing with
   Vines and playing held Exploration cards. A Dino reduced to 0 Health is
   Injured: its turn ends at once and it acts again only once healed.
4. A round is every Dino's turn, then one Meteor card: the Meteor moves
   (an Earthquake moves it back and reshuffles every unoccupied tile but
   the Oasis), and some cards carry a hazard.
5. The end. 5 Rocket Parts and 8 Wood on the Launchpad with all four Dinos
   on the Oasis wins for everyone; the Meteor reaching Earth, or a Meteor
   card needed from an empty deck, loses for everyone.

The module follows that order: the end (``the_end``, checked after every
event ``decide`` emits and recorded as ``RocketLaunched`` or
``MeteorHitEarth``), who may act (``legal_actions`` lists candidates and
keeps those the rule checks accept), the checks (``_check``: seat, turn,
pending decision, then ``_check_rule``: one check per command type, from a
table), ``decide`` (a ``match`` over the command, played out on a scratch
table that applies every event as it is emitted, then settled: ending a
turn, passing to the next Dino, drawing the Meteor card), views and
redaction, and last ``evolve``, the pure fold, which decides nothing. Rules
versions 2 (``RULES_V2``: trades without consent) and 1 (``RULES_V1``) close
the module.

Consent (version 3): a trade from a Dino the sending seat does not control
is only offered (``TradeOffered``); that Dino's seat answers with
``AcceptTrade`` or ``DeclineTrade``, and the offer lapses when the turn
ends (``_Table.lapse``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

from domain.chance import Rng
from domain.errors import (
    InvalidCommand,
    NotYourSeat,
    RuleViolation,
    position_invalid,
    quote,
)
from domain.escaping_extinction.bots import heuristic_bot
from domain.escaping_extinction.content import (
    CONTENT,
    CardEffect,
    DieColour,
    DieFace,
    Dino,
    MeteorHazard,
    Resource,
    Terrain,
)
from domain.escaping_extinction.model import (
    COMMAND_TYPES,
    EVENT_TYPES,
    UNSEEN,
    AcceptTrade,
    ActionKind,
    ActionTaken,
    CardGiven,
    CollectRocketPart,
    Command,
    DeclineTrade,
    DieRolled,
    DinoControl,
    DinoDamaged,
    DinoHealed,
    DinoReturnedToOasis,
    DinosHandedOver,
    DinoState,
    DinoTravelled,
    EarthquakeStruck,
    EndTurn,
    Event,
    ExplorationCardDiscarded,
    ExplorationCardDrawn,
    ExplorationCardKept,
    ExplorationCardPlayed,
    ExplorationCardRedrawn,
    ExplorationDeckReshuffled,
    Explore,
    ExtraActionGained,
    GiveCard,
    GiveItem,
    HealTeammates,
    HealWithVines,
    Item,
    ItemGiven,
    KeepCard,
    LavaFlowPlaced,
    LeaveResource,
    LeaveSecretCaves,
    MakeRoom,
    MeteorCardDrawn,
    MeteorDeckRanOut,
    MeteorHitEarth,
    MeteorMoved,
    Options,
    Pending,
    PendingKind,
    Place,
    PlaceSecretCave,
    PlaceView,
    PlayCard,
    Position,
    RedrawCard,
    RedrawDeclined,
    RedrawOffered,
    ResourceGained,
    ResourceLeft,
    ResourceReturned,
    ResourceTaken,
    Resupplied,
    Resupply,
    RocketDocketCardRevealed,
    RocketDocketClosed,
    RocketLaunched,
    RocketPartCollected,
    RollPurpose,
    RoomMade,
    RoomNeeded,
    Scenario,
    SecretCavePlacementOffered,
    SecretCavesLeft,
    SecretCavesPlaced,
    Source,
    State,
    Supply,
    TarpitHeld,
    TileRevealed,
    TokenReturned,
    TradeAccepted,
    TradeDeclined,
    TradeOffer,
    TradeOffered,
    TradeOfferLapsed,
    Travel,
    TravelMode,
    TurnBegan,
    TurnEnded,
    View,
    VineSpent,
    WorldSetUp,
    earthquake_struck_v1_to_v2,
    tile_revealed_v1_to_v2,
    token_returned_v1_to_v2,
    turn_began_v1_to_v2,
    world_set_up_v1_to_v2,
)
from domain.escaping_extinction.search import SEARCH
from domain.frozen import replace, without
from domain.rules import (
    Bot,
    GameConfig,
    GameRules,
    ImplicitDecisions,
    Outcome,
    Search,
    Upcaster,
    Viewer,
)

DINOS: tuple[Dino, ...] = tuple(Dino)
_TURN_INDEX = {d: i for i, d in enumerate(DINOS)}
_RESOURCE_FIELD = {Resource.FOOD: "food", Resource.WOOD: "wood", Resource.VINE: "vines"}
OASIS = 0
ESCAPED = "escaped"
METEOR_HIT_EARTH = "meteor_hit_earth"
METEOR_DECK_EMPTY = "meteor_deck_empty"

_ACTIONS = (Travel, Explore, Resupply, CollectRocketPart, HealTeammates)
_TRADES = (GiveItem, GiveCard)
_ANSWERS = (AcceptTrade, DeclineTrade)
_NOT_WHILE_INJURED = (*_ACTIONS, PlayCard)
_NAMING_CARDS = (CollectRocketPart, PlayCard, GiveCard)
_SORTED_NEIGHBOURS = tuple(tuple(sorted(n)) for n in CONTENT.neighbours)
_DECISIONS: dict[PendingKind, tuple[type, ...]] = {
    PendingKind.MAKE_ROOM: (MakeRoom, LeaveResource),
    PendingKind.REDRAW: (KeepCard, RedrawCard),
    PendingKind.SECRET_CAVES: (PlaceSecretCave, LeaveSecretCaves),
}
_ALL_DECISIONS = tuple(t for ts in _DECISIONS.values() for t in ts)
_GAIN_RESOURCE = {
    CardEffect.GAIN_FOOD: Resource.FOOD,
    CardEffect.GAIN_WOOD: Resource.WOOD,
    CardEffect.GAIN_VINE: Resource.VINE,
}


# -- who controls which Dino ---------------------------------------------------


def dino_control(players: int, shared_fourth_dino: bool) -> tuple[DinoControl, ...]:
    """The rulebook's table: which seats control each Dino."""
    if players == 4:
        seats: list[tuple[int, ...]] = [(0,), (1,), (2,), (3,)]
    elif players == 3:
        seats = [(0,), (1,), (2,), (0, 1, 2) if shared_fourth_dino else (0,)]
    elif players == 2:
        seats = [(0,), (0,), (1,), (1,)]
    else:
        seats = [(0,)] * 4
    return tuple(DinoControl(d, s) for d, s in zip(DINOS, seats, strict=True))


def controls(state: State, seat: int, dino: Dino) -> bool:
    return seat in state.control[_TURN_INDEX[dino]].seats


# -- small readings of the state ----------------------------------------------


def _seats_of(state: State, dino: Dino) -> tuple[int, ...]:
    """The seats controlling ``dino``."""
    return state.control[_TURN_INDEX[dino]].seats


def dino_of(state: State, dino: Dino) -> DinoState:
    return state.dinos[_TURN_INDEX[dino]]


def current_dino(state: State) -> DinoState:
    return state.dinos[state.current]


def terrain_at(state: State, position: int) -> Terrain | None:
    place = state.places[position]
    if not place.tile:
        return None
    return CONTENT.tile(place.tile).terrain


def satchel_room(d: DinoState) -> int:
    return CONTENT.dinos[d.dino].satchel - d.wood - d.vines


def food_room(d: DinoState) -> int:
    return CONTENT.dinos[d.dino].energy - d.food


def max_health(dino: Dino) -> int:
    return CONTENT.dinos[dino].health


def holds(d: DinoState, resource: Resource) -> int:
    return int(getattr(d, _RESOURCE_FIELD[resource]))


def in_supply(supply: Supply, resource: Resource) -> int:
    return int(getattr(supply, _RESOURCE_FIELD[resource]))


def _has_item(d: DinoState, item: Item) -> bool:
    if item is Item.ROCKET_PART:
        return d.rocket_part
    return holds(d, Resource[item.name]) > 0


def parts_collected(state: State) -> int:
    return CONTENT.supply["rocket_parts"] - state.supply.rocket_parts


def _travel_cost(mode: TravelMode, in_tarpit: bool) -> int:
    """The Food a journey costs (a push is only made from the Tarpit)."""
    if mode is TravelMode.CAVE:
        return CONTENT.tarpit_cave_food if in_tarpit else 0
    if mode is TravelMode.PUSH:
        return CONTENT.tarpit_push_food
    return CONTENT.tarpit_walk_food if in_tarpit else 1


def caves(state: State) -> tuple[int, ...]:
    return tuple(i for i, p in enumerate(state.places) if p.cave)


def _name(dino: Dino) -> str:
    return CONTENT.dinos[dino].name


# -- the end ---------------------------------------------------------------------


def escaped(state: State) -> bool:
    """The win: the Rocket complete on the Launchpad, every Dino on the Oasis."""
    return (
        state.launchpad_parts >= CONTENT.launch_parts
        and state.launchpad_wood >= CONTENT.launch_wood
        and all(d.position == OASIS for d in state.dinos)
    )


def the_end(state: State, event: Event) -> Event | None:
    """The end of the game that ``event`` brought about (``state`` is the
    state right after it), or None: the Meteor moving onto Earth loses, the
    Rocket complete with every Dino home wins. It is checked after every
    event, and once the game is over nothing more ends it."""
    if state.result:
        return None
    if isinstance(event, MeteorMoved) and state.meteor >= state.earth:
        return MeteorHitEarth()
    if escaped(state):
        return RocketLaunched()
    return None


# -- the scratch table decide plays on ------------------------------------------


class _Table:
    """The state as events are emitted, and the chance ``decide`` may draw."""

    def __init__(self, state: State, rng: Rng) -> None:
        self.state = state
        self.events: list[Event] = []
        self.rng = rng

    def emit(self, *events: Event) -> None:
        for event in events:
            if isinstance(event, TurnEnded):
                self.lapse()
            self.events.append(event)
            self.state = evolve(self.state, event)
            # The end is checked after every event, and recorded at once.
            end = the_end(self.state, event)
            if end is not None:
                self.lapse()
                self.emit(end)

    def lapse(self) -> None:
        """An unanswered trade offer lapses (the turn or the game ends)."""
        offer = self.state.offer
        if offer is not None:
            self.emit(TradeOfferLapsed(offer.dino))

    @property
    def over(self) -> bool:
        return bool(self.state.result)

    def dino(self, dino: Dino) -> DinoState:
        return dino_of(self.state, dino)

    def roll(self, dino: Dino, purpose: RollPurpose) -> DieFace:
        scenario = self.state.scenario
        used = self.state.dice_used
        if scenario is not None and used < len(scenario.die_faces):
            face = scenario.die_faces[used]
        else:
            face = self.rng.roll(len(CONTENT.die))
        die = CONTENT.die[face]
        self.emit(DieRolled(dino, purpose, face, die.number, die.colour))
        return die

    def damage(self, dino: Dino, amount: int) -> None:
        health = self.dino(dino).health
        amount = min(amount, health)
        if amount > 0:
            self.emit(DinoDamaged(dino, amount, health - amount))

    def heal(self, dino: Dino, amount: int) -> None:
        health = self.dino(dino).health
        amount = min(amount, max_health(dino) - health)
        if amount > 0:
            self.emit(DinoHealed(dino, amount, health + amount))


def _fixed_order(
    items: Sequence[str], priority: Sequence[str], rng: Rng
) -> tuple[str, ...]:
    """``items`` in the order ``priority`` lists them, the rest shuffled after."""
    rank = {x: i for i, x in enumerate(priority)}
    listed = sorted((x for x in items if x in rank), key=rank.__getitem__)
    rest = rng.shuffled([x for x in items if x not in rank])
    return (*listed, *rest)


def meteor_shuffle(rng: Rng) -> tuple[str, ...]:
    """The special shuffle: Earthquakes aside, shuffle the rest, split into
    piles (the 5-card pile on top), shuffle one Earthquake into each pile,
    stack the piles."""
    quakes = [
        c
        for c in CONTENT.meteor_order
        if CONTENT.meteor[c].hazard is MeteorHazard.EARTHQUAKE
    ]
    rest = list(rng.shuffled([c for c in CONTENT.meteor_order if c not in quakes]))
    quakes = list(rng.shuffled(quakes))
    deck: list[str] = []
    for size, quake in zip(CONTENT.piles, quakes, strict=True):
        pile, rest = rest[:size], rest[size:]
        deck.extend(rng.shuffled([*pile, quake]))
    return tuple(deck)


def picked_up(state: State, positions: Sequence[int]) -> Supply:
    """The tokens and Lava Flows lying on ``positions`` (an Earthquake picks
    them up with their tiles, back to the Supply)."""
    counts = dict.fromkeys(_COUNTED, 0)
    for position in positions:
        place = state.places[position]
        resource = CONTENT.tile(place.tile).resource if place.tile else None
        if place.token and resource is not None:
            counts[_RESOURCE_FIELD[resource]] += 1
        counts["lava_flows"] += place.lava
    return Supply(**counts)


# -- starting from a position -----------------------------------------------------

_KEEP_CARDS = frozenset(c for c, card in CONTENT.exploration.items() if card.keep)
_COUNTED = ("food", "wood", "vines", "rocket_parts", "lava_flows")


def fresh_dinos() -> tuple[DinoState, ...]:
    """The four Dinos at set-up: on the Oasis, full of Food and Health."""
    return tuple(
        DinoState(d, OASIS, CONTENT.dinos[d].energy, 0, 0, False, max_health(d), ())
        for d in DINOS
    )


def _fresh_places() -> tuple[Place, ...]:
    oasis = Place(CONTENT.oasis.id, True, False, False, False)
    return (oasis,) + (Place("", False, False, False, False),) * (CONTENT.positions - 1)


def position_places(position: Position) -> tuple[Place, ...]:
    return position.places or _fresh_places()


def position_dinos(position: Position) -> tuple[DinoState, ...]:
    return position.dinos or fresh_dinos()


def position_supply(position: Position) -> dict[str, int]:
    """What the Supply holds when every token the position places elsewhere
    is taken out of the game's content (may be negative: too many)."""
    left = dict(CONTENT.supply)
    for place in position_places(position):
        resource = CONTENT.tile(place.tile).resource if place.tile else None
        if place.token and resource is not None:
            left[_RESOURCE_FIELD[resource]] -= 1
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
            if held not in _KEEP_CARDS:
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
    for name in _COUNTED:
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
#: The longest Meteor track ``Options.meteor_track_length`` may ask for.
MAX_TRACK_LENGTH = 20


def _check_turn(position: Position, dinos: tuple[DinoState, ...]) -> None:
    if position.round is not None and not 1 <= position.round <= MAX_ROUND:
        raise position_invalid(
            "round", f"Round {position.round}: rounds count from 1 to {MAX_ROUND}."
        )
    actions = position.actions_left
    if actions is not None and not 0 <= actions <= CONTENT.actions_per_turn:
        raise position_invalid(
            "actions_left", f"A turn has 0 to {CONTENT.actions_per_turn} actions left."
        )
    if not 0 <= position.meteor < CONTENT.track_length:
        raise position_invalid(
            "meteor",
            f"The Meteor is on space 0 to {CONTENT.track_length - 1} "
            f"({CONTENT.track_length} is Earth: the game would be over).",
        )
    if position.launchpad_wood < 0 or position.launchpad_parts < 0:
        raise position_invalid(
            "launchpad_wood", "The Launchpad holds no negative counts."
        )
    d = dinos[_TURN_INDEX[position.current_dino or DINOS[0]]]
    if d.health == 0 and d.vines == 0:
        raise position_invalid(
            "current_dino",
            f"{_name(d.dino)} is Injured with no Vine to heal itself: its turn "
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


def validate_position(position: Position, scenario: Scenario) -> None:
    """Every field of ``position`` within the game, nothing in two places,
    the counts adding up to the content (the lifecycle then checks that the
    game is not over and a seat may act)."""
    _check_scenario_beside(scenario)
    _check_places(position.places)
    places = position_places(position)
    _check_dinos(position, places)
    _check_cards(position)
    _check_turn(position, position_dinos(position))
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
    current = _TURN_INDEX[position.current_dino or DINOS[0]]
    actions = position.actions_left
    return replace(
        state,
        places=position_places(position),
        dinos=dinos,
        supply=Supply(**{name: left[name] for name in _COUNTED}),
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


# -- the commands that may be legal ---------------------------------------------


def _decision_candidates(pending: Pending, dino: Dino) -> list[Command]:
    if pending.kind is PendingKind.MAKE_ROOM:
        return [
            MakeRoom(dino, Resource.WOOD),
            MakeRoom(dino, Resource.VINE),
            LeaveResource(dino),
        ]
    if pending.kind is PendingKind.REDRAW:
        return [KeepCard(dino), RedrawCard(dino)]
    return [
        *(PlaceSecretCave(dino, p) for p in range(1, CONTENT.positions)),
        LeaveSecretCaves(dino),
    ]


def _action_candidates(state: State, d: DinoState) -> list[Command]:
    dino = d.dino
    here = state.places[d.position]
    out: list[Command] = _travel_candidates(state, d)
    out.append(Explore(dino, False))
    if dino is Dino.LONG_NECK and here.token:
        out.append(Explore(dino, True))
    if d.position == OASIS:
        out.append(Resupply(dino))
    out.extend(
        CollectRocketPart(dino, c)
        for c in state.docket_open
        if CONTENT.docket[c].tile == here.tile
    )
    if dino is Dino.SARA:
        out.append(HealTeammates(dino))
    return out


def _travel_candidates(state: State, d: DinoState) -> list[Command]:
    # Most travel a Dino cannot pay for: its Food rules it out here.
    dino = d.dino
    in_tarpit = terrain_at(state, d.position) is Terrain.TARPIT
    walk = d.food >= _travel_cost(TravelMode.WALK, in_tarpit)
    push = in_tarpit and d.food >= _travel_cost(TravelMode.PUSH, in_tarpit)
    out: list[Command] = []
    for p in _SORTED_NEIGHBOURS[d.position]:
        if walk:
            out.append(Travel(dino, p, TravelMode.WALK))
        if push:
            out.append(Travel(dino, p, TravelMode.PUSH))
    if state.places[d.position].cave and d.food >= _travel_cost(
        TravelMode.CAVE, in_tarpit
    ):
        out.extend(Travel(dino, p, TravelMode.CAVE) for p in caves(state))
    return out


def _free_candidates(state: State, d: DinoState) -> list[Command]:
    """Healing with Vines, trades with the Dinos on the tile, held cards."""
    dino = d.dino
    out: list[Command] = []
    if d.vines:
        out.extend(
            HealWithVines(dino, o.dino) for o in state.dinos if o.position == d.position
        )
    for other in state.dinos:
        if other.dino is not dino and other.position == d.position:
            out += _trade_candidates(d, other)
    for card in d.held_cards:
        if CONTENT.exploration[card].effect is CardEffect.HEALING_HERBS:
            out.extend(PlayCard(dino, card, o) for o in DINOS)
        else:
            out.append(PlayCard(dino, card, dino))
    return out


def _trade_candidates(d: DinoState, other: DinoState) -> list[Command]:
    """Every item and card either of two Dinos on one tile may hand over."""
    dino = d.dino
    out: list[Command] = []
    for item in Item:
        if _has_item(d, item):
            out.append(GiveItem(dino, other.dino, item))
        if _has_item(other, item):
            out.append(GiveItem(other.dino, dino, item))
    out.extend(GiveCard(dino, other.dino, c) for c in d.held_cards)
    out.extend(GiveCard(other.dino, dino, c) for c in other.held_cards)
    return out


# -- checking a command: one check per command ------------------------------------
#
# ``_check`` (in the rules class) settles the seat, the turn and a pending
# decision; then :func:`_check_rule` asks what every action shares (a named
# card exists, the Dino is not Injured, an action is left) and the one check
# of the command's type, from ``_RULE_CHECKS``. Each raises the reason the
# command is refused now, or returns.


def _check_rule(state: State, command: Command) -> None:
    """The rule-specific half of the checks (turn and seat already fine)."""
    d = dino_of(state, command.dino)
    if isinstance(command, _NAMING_CARDS):
        catalogue: Collection[str] = (
            CONTENT.docket
            if isinstance(command, CollectRocketPart)
            else CONTENT.exploration
        )
        if command.card not in catalogue:
            raise InvalidCommand("UNKNOWN_CARD", f"There is no card {command.card!r}.")
    if isinstance(command, _NOT_WHILE_INJURED) and d.health == 0:
        raise RuleViolation(
            "DINO_INJURED", f"{_name(d.dino)} is Injured and cannot act."
        )
    if isinstance(command, _ACTIONS) and state.actions_left <= 0:
        raise RuleViolation("NO_ACTIONS_LEFT", "This turn has no action left.")
    check = _RULE_CHECKS.get(type(command))
    if check is not None:
        check(state, d, command)


def _check_travel(state: State, d: DinoState, command: Travel) -> None:
    destination = command.destination
    if not 0 <= destination < CONTENT.positions:
        raise InvalidCommand(
            "POSITION_OUT_OF_RANGE", f"There is no position {destination}."
        )
    in_tarpit = terrain_at(state, d.position) is Terrain.TARPIT
    if command.mode is TravelMode.CAVE:
        _check_cave_travel(state, d, destination)
    else:
        if destination not in CONTENT.neighbours[d.position]:
            raise RuleViolation(
                "NOT_ADJACENT", f"Position {destination} is not adjacent."
            )
        if command.mode is TravelMode.PUSH and not in_tarpit:
            raise RuleViolation(
                "NOT_IN_TARPIT", "Only a Dino in the Tarpit pushes out."
            )
    cost = _travel_cost(command.mode, in_tarpit)
    if d.food < cost:
        raise RuleViolation(
            "NOT_ENOUGH_FOOD", f"{_name(d.dino)} needs {cost} Food to travel."
        )


def _check_cave_travel(state: State, d: DinoState, destination: int) -> None:
    here = caves(state)
    if d.position not in here:
        raise RuleViolation("NO_SECRET_CAVE", "There is no Secret Cave here.")
    if destination == d.position or destination not in here:
        raise RuleViolation(
            "NOT_THE_OTHER_CAVE", "The Secret Cave leads to the other Cave only."
        )


def _check_explore(state: State, d: DinoState, command: Explore) -> None:
    here = terrain_at(state, d.position)
    if here is Terrain.OASIS:
        raise RuleViolation("CANNOT_EXPLORE_OASIS", "The Oasis cannot be Explored.")
    if here is Terrain.VOLCANO:
        raise RuleViolation("CANNOT_EXPLORE_VOLCANO", "The Volcano cannot be Explored.")
    if command.gamble and d.dino is not Dino.LONG_NECK:
        raise RuleViolation("NOT_LONG_NECK", "Only Long Neck rolls double or nothing.")
    if command.gamble and not state.places[d.position].token:
        raise RuleViolation(
            "NO_RESOURCE_TO_GAMBLE", "There is no resource here to roll for."
        )


def _check_resupply(state: State, d: DinoState, command: Resupply) -> None:
    if d.position != OASIS:
        raise RuleViolation("NOT_ON_OASIS", "Resupply only on the Oasis.")
    refill = food_room(d) > 0 and state.supply.food > 0
    if not (refill or d.wood or d.rocket_part):
        raise RuleViolation(
            "NOTHING_TO_RESUPPLY",
            f"{_name(d.dino)} has no Food to refill and nothing to unload.",
        )


def _check_collect(state: State, d: DinoState, command: CollectRocketPart) -> None:
    card = command.card
    if card not in state.docket_open:
        raise RuleViolation(
            "CARD_NOT_FACE_UP", f"{card} is not a face-up Rocket Docket card."
        )
    docket = CONTENT.docket[card]
    if d.rocket_part:
        raise RuleViolation(
            "ALREADY_HOLDS_ROCKET_PART",
            f"{_name(d.dino)} already carries a Rocket Part.",
        )
    if state.places[d.position].tile != docket.tile:
        raise RuleViolation(
            "NOT_ON_THAT_TILE",
            f"{docket.name} is found on {CONTENT.tile(docket.tile).name}.",
        )
    if d.food < docket.food or d.wood < docket.wood or d.vines < docket.vines:
        raise RuleViolation(
            "CANNOT_PAY", f"{_name(d.dino)} cannot pay what {docket.name} asks."
        )


def _check_heal_teammates(state: State, d: DinoState, command: HealTeammates) -> None:
    if d.dino is not Dino.SARA:
        raise RuleViolation("NOT_SARA", "Only Sara can heal her teammates.")
    if not any(
        o.position == d.position and o.health < max_health(o.dino) for o in state.dinos
    ):
        raise RuleViolation("NOBODY_TO_HEAL", "Nobody here needs healing.")


def _check_heal_with_vines(state: State, d: DinoState, command: HealWithVines) -> None:
    target = command.target
    if d.vines == 0:
        raise RuleViolation("NO_VINES", f"{_name(d.dino)} has no Vines.")
    if d.health == 0 and target is not d.dino:
        raise RuleViolation(
            "INJURED_HEALS_ONLY_ITSELF", "An Injured Dino can only heal itself."
        )
    _check_hurt_beside(state, d, target)


def _check_hurt_beside(state: State, d: DinoState, target: Dino) -> None:
    """``target`` stands on ``d``'s tile and is not at full Health."""
    t = dino_of(state, target)
    if t.position != d.position:
        raise RuleViolation("NOT_ON_YOUR_TILE", f"{_name(target)} is not on this tile.")
    if t.health >= max_health(target):
        raise RuleViolation("FULL_HEALTH", f"{_name(target)} is at full Health.")


def _check_give_item(state: State, d: DinoState, command: GiveItem) -> None:
    giver, recipient, item = command.dino, command.recipient, command.item
    g, rec = _check_trade(state, giver, recipient)
    if item is Item.ROCKET_PART:
        has, room = g.rocket_part, not rec.rocket_part
    elif item is Item.FOOD:
        has, room = g.food > 0, food_room(rec) > 0
    else:
        has, room = holds(g, Resource[item.name]) > 0, satchel_room(rec) > 0
    if not has:
        raise RuleViolation("NOTHING_TO_GIVE", f"{_name(giver)} has no {item.value}.")
    if not room:
        raise RuleViolation(
            "NO_ROOM", f"{_name(recipient)} has no room for {item.value}."
        )


def _check_give_card(state: State, d: DinoState, command: GiveCard) -> None:
    g, _ = _check_trade(state, command.dino, command.recipient)
    if command.card not in g.held_cards:
        raise RuleViolation(
            "CARD_NOT_HELD", f"{_name(command.dino)} does not hold {command.card}."
        )


def _check_trade(
    state: State, giver: Dino, recipient: Dino
) -> tuple[DinoState, DinoState]:
    if giver is recipient:
        raise InvalidCommand("SAME_DINO", "A Dino cannot trade with itself.")
    cur = current_dino(state).dino
    if cur not in (giver, recipient):
        raise RuleViolation(
            "NOT_PART_OF_TRADE",
            f"Trades on {_name(cur)}'s turn involve {_name(cur)}.",
        )
    g, rec = dino_of(state, giver), dino_of(state, recipient)
    if g.position != rec.position:
        raise RuleViolation(
            "NOT_ON_YOUR_TILE", "Only Dinos on the same tile can trade."
        )
    if g.health == 0 and rec.health == 0:
        raise RuleViolation("BOTH_INJURED", "Two Injured Dinos cannot trade.")
    return g, rec


def offered_trade(offer: TradeOffer) -> GiveItem | GiveCard:
    """The trade ``offer`` stands for."""
    if offer.item is not None:
        return GiveItem(offer.dino, offer.recipient, offer.item)
    return GiveCard(offer.dino, offer.recipient, offer.card)


def _check_accept(state: State, offer: TradeOffer) -> None:
    """The offered trade can happen now (what changed since it was offered,
    the tile, the giver's goods, the recipient's room, may forbid it)."""
    if state.pending is not None:
        raise RuleViolation(
            "DECISION_PENDING",
            f"{_name(state.pending.dino)} must first decide "
            f"({state.pending.kind.value.replace('_', ' ')}).",
        )
    _check_rule(state, offered_trade(offer))


def _check_play_card(state: State, d: DinoState, command: PlayCard) -> None:
    card, target = command.card, command.target
    if card not in d.held_cards:
        raise RuleViolation("CARD_NOT_HELD", f"{_name(d.dino)} does not hold {card}.")
    effect = CONTENT.exploration[card].effect
    if effect is CardEffect.HEALING_HERBS:
        _check_hurt_beside(state, d, target)
    elif target is not d.dino:
        raise InvalidCommand(
            "TARGET_NOT_ALLOWED", "Only Healing Herbs targets another Dino."
        )
    if effect is CardEffect.TRAIL_MIX and not (
        food_room(d) > 0 and state.supply.food > 0
    ):
        raise RuleViolation("NO_ROOM", f"{_name(d.dino)} has no room for Food.")


def _check_make_room(state: State, d: DinoState, command: MakeRoom) -> None:
    if command.discard is Resource.FOOD:
        raise InvalidCommand(
            "NOT_IN_SATCHEL", "Only Wood and Vines are in the Satchel."
        )
    if holds(d, command.discard) == 0:
        raise RuleViolation(
            "NOTHING_TO_DISCARD", f"{_name(d.dino)} has no {command.discard.value}."
        )


def _check_place_cave(state: State, d: DinoState, command: PlaceSecretCave) -> None:
    position = command.position
    if not 0 <= position < CONTENT.positions:
        raise InvalidCommand(
            "POSITION_OUT_OF_RANGE", f"There is no position {position}."
        )
    if position == OASIS:
        raise RuleViolation(
            "CAVE_NOT_ON_OASIS", "A Secret Cave cannot go on the Oasis."
        )
    if position == d.position:
        raise RuleViolation(
            "SAME_TILE", "The two Secret Caves need two different tiles."
        )


def _check_leave_caves(state: State, d: DinoState, command: LeaveSecretCaves) -> None:
    if not caves(state):
        raise RuleViolation("NO_CAVES_TO_LEAVE", "The Secret Caves are not placed yet.")


#: The check of each command type (those without one, LeaveResource,
#: KeepCard, RedrawCard and EndTurn, have nothing to check beyond the turn).
_RULE_CHECKS: dict[type, Callable[[State, DinoState, Any], None]] = {
    Travel: _check_travel,
    Explore: _check_explore,
    Resupply: _check_resupply,
    CollectRocketPart: _check_collect,
    HealTeammates: _check_heal_teammates,
    HealWithVines: _check_heal_with_vines,
    GiveItem: _check_give_item,
    GiveCard: _check_give_card,
    PlayCard: _check_play_card,
    MakeRoom: _check_make_room,
    PlaceSecretCave: _check_place_cave,
    LeaveSecretCaves: _check_leave_caves,
}


# -- the rules -------------------------------------------------------------------


class EscapingExtinctionRules(GameRules[State, Command, Event, View]):
    """Escaping Extinction: Based on a True Story."""

    game_type: ClassVar[str] = "escaping_extinction"
    title: ClassVar[str] = "Escaping Extinction"
    rules_version: ClassVar[str] = "4"
    min_players: ClassVar[int] = 1
    max_players: ClassVar[int] = 4
    options_type: ClassVar[type] = Options
    scenario_type: ClassVar[type] = Scenario
    position_type: ClassVar[type | None] = Position
    state_type: ClassVar[type] = State
    view_type: ClassVar[type] = View
    command_types: ClassVar[tuple[type, ...]] = COMMAND_TYPES
    # Set up front; a seat leaving hands its Dinos over.
    character_events: ClassVar[frozenset[type] | None] = frozenset({DinosHandedOver})
    event_types: ClassVar[tuple[type, ...]] = EVENT_TYPES
    bots: ClassVar[Mapping[str, Bot]] = {"heuristic": heuristic_bot}
    search: ClassVar[Search | None] = SEARCH
    upcasters: ClassVar[Mapping[tuple[str, int], Upcaster]] = {
        ("WorldSetUp", 1): world_set_up_v1_to_v2,
        ("TurnBegan", 1): turn_began_v1_to_v2,
        ("TileRevealed", 1): tile_revealed_v1_to_v2,
        ("TokenReturned", 1): token_returned_v1_to_v2,
        ("EarthquakeStruck", 1): earthquake_struck_v1_to_v2,
    }
    cooperative: ClassVar[bool] = True
    #: A trade from a Dino the sending seat does not control is an offer its
    #: seat accepts or declines (version 3 on); before, it happened at once.
    trades_need_consent: ClassVar[bool] = True

    # -- configuration and set-up -------------------------------------------

    def validate_config(self, config: GameConfig[State]) -> None:
        track = config.options.meteor_track_length
        if track and not CONTENT.track_length < track <= MAX_TRACK_LENGTH:
            raise InvalidCommand(
                "METEOR_TRACK_OUT_OF_RANGE",
                f"The Meteor track is the rulebook's (0) or {CONTENT.track_length + 1} "
                f"to {MAX_TRACK_LENGTH} spaces long, not {track}.",
                "options.meteor_track_length",
            )
        scenario = config.scenario
        if scenario is None:
            return

        def permutation(given: Sequence[Any], of: Sequence[Any], what: str) -> None:
            if given and sorted(given) != sorted(of):
                raise InvalidCommand(
                    "SCENARIO_INVALID", f"The scenario's {what} is not a full order."
                )

        def subset(given: Sequence[str], of: Sequence[str], what: str) -> None:
            if len(set(given)) != len(given) or not set(given) <= set(of):
                raise InvalidCommand(
                    "SCENARIO_INVALID", f"The scenario's {what} names unknown ids."
                )

        permutation(scenario.layout, CONTENT.tile_order, "layout")
        permutation(scenario.meteor_deck, CONTENT.meteor_order, "Meteor deck")
        permutation(
            scenario.rocket_docket_deck, CONTENT.docket_order, "Rocket Docket deck"
        )
        permutation(
            scenario.exploration_deck, CONTENT.exploration_order, "Exploration deck"
        )
        if any(face not in CONTENT.die for face in scenario.die_faces):
            raise InvalidCommand(
                "SCENARIO_INVALID", "The scenario's die faces must be 1 to 6."
            )
        for order in scenario.earthquake_orders:
            subset(order.tiles, CONTENT.tile_order, "Earthquake order")
        for cards in scenario.exploration_reshuffles:
            subset(cards.cards, CONTENT.exploration_order, "Exploration reshuffle")
        if scenario.position is not None:
            validate_position(scenario.position, scenario)

    def initial_state(self, config: GameConfig[State]) -> State:
        options: Options = config.options
        dinos = fresh_dinos()
        s = CONTENT.supply
        supply = Supply(
            food=s["food"] - sum(d.food for d in dinos),
            wood=s["wood"],
            vines=s["vines"],
            rocket_parts=s["rocket_parts"],
            lava_flows=s["lava_flows"],
        )
        state = State(
            players=config.players,
            control=dino_control(config.players, options.shared_fourth_dino),
            track_length=options.meteor_track_length,
            scenario=config.scenario,
            places=_fresh_places(),
            dinos=dinos,
            supply=supply,
            launchpad_wood=0,
            launchpad_parts=0,
            meteor=0,
            meteor_deck=(),
            meteor_drawn=(),
            docket_deck=(),
            docket_open=(),
            docket_done=(),
            exploration_deck=(),
            exploration_discard=(),
        )
        position = self.position(config)
        return state if position is None else position_state(state, position)

    def start(self, state: State, rng: Rng) -> list[Event]:
        scenario = state.scenario or Scenario()
        table = _Table(state, rng)
        if scenario.position is not None:
            # The turn is under way already: only the deal is left to chance.
            table.emit(*position_set_up(scenario.position, rng))
            return table.events
        docket = scenario.rocket_docket_deck or rng.shuffled(CONTENT.docket_order)
        table.emit(
            world_set_up(
                layout=scenario.layout or rng.shuffled(CONTENT.tile_order),
                meteor_deck=scenario.meteor_deck or meteor_shuffle(rng),
                rocket_docket_deck=docket,
                exploration_deck=scenario.exploration_deck
                or rng.shuffled(CONTENT.exploration_order),
            ),
            RocketDocketCardRevealed(docket[0]),
        )
        table.emit(turn_began(table.state, DINOS[0], 1))
        return table.events

    def redact_position(self, position: Position, viewer: Viewer) -> Position:
        if viewer.sees_everything:
            return position
        return redacted_position(position)

    # -- who may do what -------------------------------------------------------

    def active_seats(self, state: State) -> frozenset[int]:
        if state.result or not state.turn_open:
            return frozenset()
        seats = set(state.control[state.current].seats)
        if state.offer is not None:
            seats.update(_seats_of(state, state.offer.dino))
        return frozenset(seats)

    def legal_actions(self, state: State, seat: int) -> list[Command]:
        if state.result or not state.turn_open:
            return []
        legal: list[Command] = []
        offer = state.offer
        if offer is not None and seat in _seats_of(state, offer.dino):
            # The seat asked for its consent answers (accepting only while
            # the trade can still happen).
            try:
                _check_accept(state, offer)
                legal.append(AcceptTrade(offer.dino))
            except (RuleViolation, InvalidCommand):
                pass
            legal.append(DeclineTrade(offer.dino))
        if seat not in state.control[state.current].seats:
            return legal
        # The candidates are all for the Dino whose turn it is, decisions
        # only while one is pending: the rule-specific checks remain.
        for command in self._candidates(state):
            try:
                _check_rule(state, command)
                self._check_consent(state, seat, command)
            except (RuleViolation, InvalidCommand):
                continue
            legal.append(command)
        return legal

    def _candidates(self, state: State) -> list[Command]:
        """Every command that may be legal now for the Dino whose turn it is:
        decisions only while one is pending; otherwise its actions (cheap
        filters first), then its free moves. ``_check`` has the last word
        on each."""
        d = current_dino(state)
        if state.pending is not None:
            return _decision_candidates(state.pending, d.dino)
        out: list[Command] = []
        if d.health > 0 and state.actions_left > 0:
            out += _action_candidates(state, d)
        out += _free_candidates(state, d)
        out.append(EndTurn(d.dino))
        return out

    # -- checking a command ----------------------------------------------------

    def _check(self, state: State, seat: int, command: Command) -> None:
        """Raise the reason ``command`` from ``seat`` is refused now, if any."""
        if state.result:
            raise RuleViolation("GAME_OVER", "The game is over.")
        if not isinstance(command, COMMAND_TYPES):
            raise InvalidCommand(
                "UNKNOWN_COMMAND", f"{type(command).__name__} is not a command."
            )
        if isinstance(command, _ANSWERS):
            self._check_answer(state, seat, command)
            return
        cur = current_dino(state)
        acting = cur.dino if isinstance(command, _TRADES) else command.dino
        if not controls(state, seat, acting):
            raise NotYourSeat(
                "NOT_YOUR_DINO", f"Seat {seat} does not control {_name(acting)}."
            )
        if not state.turn_open or (
            command.dino is not cur.dino and not isinstance(command, _TRADES)
        ):
            raise RuleViolation(
                "NOT_THIS_DINOS_TURN", f"It is {_name(cur.dino)}'s turn."
            )
        pending = state.pending
        if pending is not None:
            if not isinstance(command, _DECISIONS[pending.kind]):
                raise RuleViolation(
                    "DECISION_PENDING",
                    f"{_name(pending.dino)} must first decide "
                    f"({pending.kind.value.replace('_', ' ')}).",
                )
        elif isinstance(command, _ALL_DECISIONS):
            raise RuleViolation("NO_DECISION_PENDING", "There is nothing to decide.")
        _check_rule(state, command)
        self._check_consent(state, seat, command)

    def needs_consent(self, state: State, seat: int, command: Command) -> bool:
        """True when ``command`` from ``seat`` is a trade from a Dino the seat
        does not control: its seat must agree (an offer)."""
        return (
            self.trades_need_consent
            and isinstance(command, _TRADES)
            and not controls(state, seat, command.dino)
        )

    def _check_consent(self, state: State, seat: int, command: Command) -> None:
        """One offer at a time: another waits for the first to be answered."""
        if state.offer is not None and self.needs_consent(state, seat, command):
            raise RuleViolation(
                "TRADE_OFFER_PENDING",
                f"The trade offered from {_name(state.offer.dino)} waits for an "
                "answer.",
            )

    def _check_answer(
        self, state: State, seat: int, command: AcceptTrade | DeclineTrade
    ) -> None:
        offer = state.offer
        if offer is None or offer.dino is not command.dino or not state.turn_open:
            raise RuleViolation(
                "NO_TRADE_OFFER", f"No trade from {_name(command.dino)} is offered."
            )
        if not controls(state, seat, command.dino):
            raise NotYourSeat(
                "NOT_YOUR_DINO",
                f"Seat {seat} does not control {_name(command.dino)}.",
            )
        if isinstance(command, AcceptTrade):
            _check_accept(state, offer)

    # -- deciding ----------------------------------------------------------------

    def decide(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> list[Event]:
        return self.decide_and_evolve(state, seat, command, rng)[0]

    def decide_and_evolve(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> tuple[list[Event], State]:
        self._check(state, seat, command)
        t = _Table(state, rng)
        if self.needs_consent(state, seat, command):
            self._offer(t, command)
        else:
            self._play_command(t, command)
        self._settle(t)
        return t.events, t.state

    @staticmethod
    def _offer(t: _Table, trade: Command) -> None:
        """A trade from another seat's Dino waits for that seat's consent."""
        match trade:
            case GiveItem(dino=dino, recipient=recipient, item=item):
                t.emit(TradeOffered(dino, recipient, item, ""))
            case GiveCard(dino=dino, recipient=recipient, card=card):
                t.emit(TradeOffered(dino, recipient, None, card))

    def _play_command(self, t: _Table, command: Command) -> None:  # noqa: C901 (a flat match table)
        """What ``command`` (checked) does, one case per command type."""
        dino = command.dino
        match command:
            case Travel():
                self._travel(t, command)
            case Explore(gamble=gamble):
                self._explore(t, dino, gamble)
            case Resupply():
                self._resupply(t, dino)
            case CollectRocketPart(card=card):
                self._collect(t, dino, card)
            case HealTeammates():
                self._heal_teammates(t, dino)
            case HealWithVines(target=target):
                t.emit(VineSpent(dino))
                t.heal(target, 1)
            case GiveItem(recipient=recipient, item=item):
                t.emit(ItemGiven(dino, recipient, item))
            case GiveCard(recipient=recipient, card=card):
                t.emit(CardGiven(dino, recipient, card))
            case PlayCard(card=card, target=target):
                self._play(t, dino, card, target)
            case MakeRoom(discard=discard):
                self._resolve_room(t, discard)
            case LeaveResource():
                self._resolve_room(t, None)
            case KeepCard():
                self._keep_card(t, dino)
            case RedrawCard():
                t.emit(ExplorationCardRedrawn(dino, self._pending(t).card))
                self._draw(t, dino)
            case PlaceSecretCave(position=position):
                t.emit(SecretCavesPlaced(t.dino(dino).position, position))
            case LeaveSecretCaves():
                t.emit(SecretCavesLeft(dino))
            case EndTurn():
                t.emit(TurnEnded(dino))
            case AcceptTrade():
                offer = t.state.offer
                if offer is not None:  # _check guarantees one
                    t.emit(TradeAccepted(dino))
                    self._play_command(t, offered_trade(offer))
            case DeclineTrade():
                t.emit(TradeDeclined(dino))

    def _heal_teammates(self, t: _Table, dino: Dino) -> None:
        t.emit(ActionTaken(dino, ActionKind.HEAL_TEAMMATES))
        here = t.dino(dino).position
        for other in DINOS:
            if t.dino(other).position == here:
                t.heal(other, CONTENT.sara_heal)

    def _keep_card(self, t: _Table, dino: Dino) -> None:
        card = self._pending(t).card
        t.emit(RedrawDeclined(dino, card))
        self._follow(t, dino, card)

    @staticmethod
    def _pending(t: _Table) -> Pending:
        pending = t.state.pending
        if pending is None:  # _check guarantees one
            raise RuleViolation("NO_DECISION_PENDING", "There is nothing to decide.")
        return pending

    # Travel: Food, revealing, the Tarpit, the Volcano, Lava Flows, Caves.

    def _travel(self, t: _Table, command: Travel) -> None:
        dino, destination, mode = command.dino, command.destination, command.mode
        origin = t.dino(dino).position
        in_tarpit = terrain_at(t.state, origin) is Terrain.TARPIT
        t.emit(ActionTaken(dino, ActionKind.TRAVEL))
        if mode is TravelMode.PUSH:
            cost = CONTENT.tarpit_push_food
            if t.roll(dino, RollPurpose.TARPIT).number != CONTENT.tarpit_push_needs:
                t.emit(TarpitHeld(dino, cost))
                return
        elif mode is TravelMode.CAVE:
            cost = CONTENT.tarpit_cave_food if in_tarpit else 0
        else:
            cost = CONTENT.tarpit_walk_food if in_tarpit else 1
        t.emit(DinoTravelled(dino, origin, destination, mode, cost))
        self._arrive(t, dino, destination)

    def _arrive(self, t: _Table, dino: Dino, position: int) -> None:
        place = t.state.places[position]
        tile = CONTENT.tile(place.tile)
        if not place.revealed:
            resource = tile.resource
            token = resource is not None and in_supply(t.state.supply, resource) > 0
            t.emit(TileRevealed(position, place.tile, token, resource))
        if tile.terrain is Terrain.VOLCANO:
            t.damage(dino, t.roll(dino, RollPurpose.VOLCANO).number)
        if place.lava:
            t.damage(dino, CONTENT.lava_damage)

    # Explore: the tile's resource, then an Exploration card.

    def _explore(self, t: _Table, dino: Dino, gamble: bool) -> None:
        t.emit(ActionTaken(dino, ActionKind.EXPLORE))
        position = t.dino(dino).position
        place = t.state.places[position]
        resource = CONTENT.tile(place.tile).resource
        if not place.token or resource is None:
            self._draw(t, dino)
            return
        extra = 0
        if gamble:
            if t.roll(dino, RollPurpose.DOUBLE_OR_NOTHING).colour is DieColour.RED:
                t.emit(TokenReturned(position, resource))
                self._draw(t, dino)
                return
            extra = 1
        self._gain(t, dino, resource, 1, extra, draw_after=True)

    def _gain(
        self,
        t: _Table,
        dino: Dino,
        resource: Resource,
        from_tile: int,
        from_supply: int,
        draw_after: bool,
    ) -> None:
        """Take resources one by one; stop at the first that does not fit the
        Satchel, for its owner to decide (Food that does not fit is left)."""
        while from_tile + from_supply > 0:
            source = Source.TILE if from_tile else Source.SUPPLY
            if source is Source.SUPPLY and in_supply(t.state.supply, resource) == 0:
                from_supply = 0
                continue
            d = t.dino(dino)
            fits = (
                food_room(d) > 0 if resource is Resource.FOOD else satchel_room(d) > 0
            )
            if fits:
                t.emit(
                    ResourceTaken(dino, resource)
                    if source is Source.TILE
                    else ResourceGained(dino, resource)
                )
            elif resource is Resource.FOOD:
                t.emit(ResourceLeft(dino, resource, source))
            else:
                t.emit(RoomNeeded(dino, resource, from_tile, from_supply, draw_after))
                return
            if source is Source.TILE:
                from_tile -= 1
            else:
                from_supply -= 1
        if draw_after:
            self._draw(t, dino)

    def _resolve_room(self, t: _Table, discard: Resource | None) -> None:
        pending = self._pending(t)
        dino, resource = pending.dino, pending.resource
        if resource is None:  # a MAKE_ROOM decision always names it
            raise RuleViolation("NO_DECISION_PENDING", "There is nothing to decide.")
        source = Source.TILE if pending.from_tile else Source.SUPPLY
        if discard is None:
            t.emit(ResourceLeft(dino, resource, source))
        else:
            t.emit(RoomMade(dino, discard))
            if source is Source.TILE:
                t.emit(ResourceTaken(dino, resource))
            else:
                t.emit(ResourceGained(dino, resource))
        from_tile = pending.from_tile - (source is Source.TILE)
        from_supply = pending.from_supply - (source is Source.SUPPLY)
        self._gain(t, dino, resource, from_tile, from_supply, pending.draw_after)

    def _draw(self, t: _Table, dino: Dino) -> None:
        if not t.state.exploration_deck:
            discard = t.state.exploration_discard
            if not discard:
                return
            scenario = t.state.scenario
            n = t.state.reshuffles_used
            priority: Sequence[str] = ()
            if scenario is not None and n < len(scenario.exploration_reshuffles):
                priority = scenario.exploration_reshuffles[n].cards
            t.emit(ExplorationDeckReshuffled(_fixed_order(discard, priority, t.rng)))
        card = t.state.exploration_deck[0]
        t.emit(ExplorationCardDrawn(dino, card))
        if dino is Dino.TERRY and not t.state.redraw_used:
            t.emit(RedrawOffered(dino, card))
            return
        self._follow(t, dino, card)

    def _follow(self, t: _Table, dino: Dino, card_id: str) -> None:
        """Do what a drawn Exploration card says."""
        card = CONTENT.exploration[card_id]
        if card.keep:
            t.emit(ExplorationCardKept(dino, card_id))
            return
        t.emit(ExplorationCardDiscarded(card_id))
        d = t.dino(dino)
        match card.effect:
            case CardEffect.GAIN_FOOD | CardEffect.GAIN_WOOD | CardEffect.GAIN_VINE:
                resource = _GAIN_RESOURCE[card.effect]
                self._gain(t, dino, resource, 0, card.amount, draw_after=False)
            case CardEffect.DAMAGE:
                t.damage(dino, card.amount)
            case CardEffect.HEAL:
                t.heal(dino, card.amount)
            case CardEffect.LOSE_FOOD:
                for _ in range(min(card.amount, d.food)):
                    t.emit(ResourceReturned(dino, Resource.FOOD))
            case CardEffect.RETURN_TO_OASIS:
                if d.position != OASIS:
                    t.emit(DinoReturnedToOasis(dino, d.position))
            case CardEffect.REVEAL_ROCKET_DOCKET:
                if t.state.supply.rocket_parts > 0 and t.state.docket_deck:
                    t.emit(RocketDocketCardRevealed(t.state.docket_deck[0]))
            case CardEffect.LAVA_FLOW:
                if (
                    t.state.supply.lava_flows > 0
                    and not t.state.places[d.position].lava
                ):
                    t.emit(LavaFlowPlaced(d.position))
            case CardEffect.SECRET_CAVES:
                t.emit(SecretCavePlacementOffered(dino))
            case _:
                raise ValueError(f"{card.effect} is a card kept for later")

    def _play(self, t: _Table, dino: Dino, card_id: str, target: Dino) -> None:
        card = CONTENT.exploration[card_id]
        t.emit(ExplorationCardPlayed(dino, card_id, target))
        match card.effect:
            case CardEffect.TRAIL_MIX:
                self._gain(t, dino, Resource.FOOD, 0, card.amount, draw_after=False)
            case CardEffect.HEALING_HERBS:
                t.heal(target, card.amount)
            case CardEffect.BURST_OF_ENERGY:
                t.emit(ExtraActionGained(dino))
            case _:
                raise ValueError(f"{card.effect} is not a card kept for later")

    # Resupply and the Rocket Docket.

    def _resupply(self, t: _Table, dino: Dino) -> None:
        t.emit(ActionTaken(dino, ActionKind.RESUPPLY))
        d = t.dino(dino)
        food = min(food_room(d), t.state.supply.food)
        t.emit(Resupplied(dino, food, d.wood, d.rocket_part))
        if d.rocket_part and t.state.supply.rocket_parts > 0 and t.state.docket_deck:
            t.emit(RocketDocketCardRevealed(t.state.docket_deck[0]))

    def _collect(self, t: _Table, dino: Dino, card_id: str) -> None:
        card = CONTENT.docket[card_id]
        t.emit(ActionTaken(dino, ActionKind.COLLECT_ROCKET_PART))
        for resource, n in (
            (Resource.FOOD, card.food),
            (Resource.WOOD, card.wood),
            (Resource.VINE, card.vines),
        ):
            for _ in range(n):
                t.emit(ResourceReturned(dino, resource))
        t.emit(RocketPartCollected(dino, card_id))
        if t.state.supply.rocket_parts == 0 and t.state.docket_open:
            t.emit(RocketDocketClosed(t.state.docket_open))
        t.damage(dino, card.damage)

    # Ending turns and rounds.

    def _settle(self, t: _Table) -> None:
        """End a turn the rules end, then pass to the next Dino, drawing the
        Meteor card after the last, until a Dino can act or the game ends."""
        state = t.state
        cur = current_dino(state)
        if (
            not t.over
            and state.turn_open
            and state.pending is None
            and cur.health == 0
            and not state.waiting_to_heal
        ):
            t.emit(TurnEnded(cur.dino))
        while not t.over and not t.state.turn_open:
            following = t.state.current + 1
            round_ = t.state.round
            if following == len(DINOS):
                self._meteor(t)
                if t.over:
                    return
                following, round_ = 0, round_ + 1
            dino = DINOS[following]
            t.emit(turn_began(t.state, dino, round_))
            d = t.dino(dino)
            if d.health == 0 and d.vines == 0:
                t.emit(TurnEnded(dino))

    def _meteor(self, t: _Table) -> None:
        if not t.state.meteor_deck:
            t.emit(MeteorDeckRanOut())
            return
        card_id = t.state.meteor_deck[0]
        card = CONTENT.meteor[card_id]
        t.emit(MeteorCardDrawn(card_id))
        meteor = t.state.meteor
        if card.hazard is MeteorHazard.EARTHQUAKE:
            self._earthquake(t)
        destination = min(t.state.earth, max(0, meteor + card.advance))
        t.emit(MeteorMoved(meteor, destination))
        if t.over:
            return
        for d in t.state.dinos:
            if card.hazard is MeteorHazard.ASH_RAIN and d.position != OASIS:
                t.damage(d.dino, 1)
            if card.hazard is MeteorHazard.HEATWAVE and d.food > 0:
                t.emit(ResourceReturned(d.dino, Resource.FOOD))

    def _earthquake(self, t: _Table) -> None:
        """Every unoccupied tile but the Oasis is picked up, with its token
        and Lava Flow (back to the Supply), and laid again face down."""
        occupied = {d.position for d in t.state.dinos}
        positions = tuple(p for p in range(1, CONTENT.positions) if p not in occupied)
        tiles = [t.state.places[p].tile for p in positions]
        scenario = t.state.scenario
        n = t.state.earthquakes_used
        priority: Sequence[str] = ()
        if scenario is not None and n < len(scenario.earthquake_orders):
            priority = scenario.earthquake_orders[n].tiles
        layout = _fixed_order(tiles, priority, t.rng)
        t.emit(EarthquakeStruck(positions, layout, picked_up(t.state, positions)))

    # -- the end (the_end above decides it) ----------------------------------

    def evolve(self, state: State, event: Event) -> State:
        return evolve(state, event)

    def is_terminal(self, state: State) -> bool:
        return bool(state.result)

    def outcome(self, state: State) -> Outcome:
        if state.result == ESCAPED:
            return Outcome(tuple(range(state.players)), ESCAPED)
        return Outcome((), state.result)

    # -- what a viewer sees ------------------------------------------------------

    def view(self, state: State, viewer: Viewer) -> View:
        see_all = viewer.sees_everything
        places = []
        for i, p in enumerate(state.places):
            q, r = CONTENT.coords[i]
            shown = p.revealed or (see_all and bool(p.tile))
            tile = CONTENT.tile(p.tile) if shown else None
            places.append(
                PlaceView(
                    position=i,
                    q=q,
                    r=r,
                    tile=p.tile if shown else "",
                    terrain=tile.terrain if tile else None,
                    revealed=p.revealed,
                    token=tile.resource if tile and p.token else None,
                    lava=p.lava,
                    cave=p.cave,
                )
            )
        return View(
            round=state.round,
            current_dino=current_dino(state).dino,
            turn_open=state.turn_open,
            actions_left=state.actions_left,
            your_dinos=tuple(
                c.dino for c in state.control if any(viewer.plays(s) for s in c.seats)
            ),
            control=state.control,
            places=tuple(places),
            dinos=state.dinos,
            supply=state.supply,
            launchpad_wood=state.launchpad_wood,
            launchpad_parts=state.launchpad_parts,
            meteor=state.meteor,
            meteor_track_length=state.earth,
            meteor_cards_left=len(state.meteor_deck),
            meteor_drawn=state.meteor_drawn,
            rocket_docket_cards_left=len(state.docket_deck),
            rocket_docket_open=state.docket_open,
            rocket_docket_done=state.docket_done,
            exploration_cards_left=len(state.exploration_deck),
            exploration_discard=state.exploration_discard,
            redraw_used=state.redraw_used,
            pending=state.pending,
            result=state.result,
            offer=state.offer,
        )

    def redact(self, event: Event, viewer: Viewer) -> Event:
        if viewer.sees_everything:
            return event
        match event:
            case WorldSetUp():
                return replace(
                    event,
                    layout=(),
                    meteor_deck=(),
                    rocket_docket_deck=(),
                    exploration_deck=(),
                )
            case EarthquakeStruck():
                return replace(event, layout=())
            case ExplorationDeckReshuffled():
                return ExplorationDeckReshuffled(())
        return event

    # -- a seat leaving --------------------------------------------------------

    def leave(self, state: State, seat: int, seats_in: tuple[int, ...]) -> list[Event]:
        """The team plays on: the leaver's Dinos are handed over. A shared
        Dino stays with its other seats; a Dino of the leaver alone goes to
        the next seat still in after it (upwards, around the table)."""
        after = sorted(seats_in, key=lambda s: (s - seat) % state.players)
        control = []
        for c in state.control:
            seats = tuple(s for s in c.seats if s != seat)
            control.append(DinoControl(c.dino, seats or (after[0],)))
        return [DinosHandedOver(tuple(control))]

    def characters(self, state: State) -> dict[int, str]:
        names: dict[int, list[str]] = {}
        for c in state.control:
            for s in c.seats:
                names.setdefault(s, []).append(CONTENT.dinos[c.dino].name)
        return {s: ", ".join(n) for s, n in names.items()}


# -- evolve: the pure fold -----------------------------------------------------


def _with_dino(state: State, dino: Dino, **changes: Any) -> State:
    i = _TURN_INDEX[dino]
    dinos = list(state.dinos)
    dinos[i] = replace(dinos[i], **changes)
    return replace(state, dinos=tuple(dinos))


def _with_place(state: State, position: int, **changes: Any) -> State:
    places = list(state.places)
    places[position] = replace(places[position], **changes)
    return replace(state, places=tuple(places))


def _add(state: State, dino: Dino, resource: Resource, n: int) -> State:
    """Move ``n`` of ``resource`` from the Supply to ``dino`` (negative: back)."""
    field = _RESOURCE_FIELD[resource]
    d = dino_of(state, dino)
    state = _with_dino(state, dino, **{field: getattr(d, field) + n})
    supply = replace(state.supply, **{field: getattr(state.supply, field) - n})
    return replace(state, supply=supply)


def _supply_add(state: State, resource: Resource, n: int) -> State:
    field = _RESOURCE_FIELD[resource]
    supply = replace(state.supply, **{field: getattr(state.supply, field) + n})
    return replace(state, supply=supply)


def _revealed(
    state: State, position: int, tile: str, token: bool, resource: Resource | None
) -> State:
    state = _with_place(state, position, tile=tile, revealed=True, token=token)
    if token and resource is not None:
        state = _supply_add(state, resource, -1)
    return state


def _given(state: State, dino: Dino, recipient: Dino, item: Item) -> State:
    if item is Item.ROCKET_PART:
        state = _with_dino(state, dino, rocket_part=False)
        return _with_dino(state, recipient, rocket_part=True)
    resource = Resource[item.name]
    return _add(_add(state, dino, resource, -1), recipient, resource, 1)


def _relaid(
    state: State,
    positions: tuple[int, ...],
    layout: tuple[str, ...],
    returned: Supply | None,
) -> State:
    """The tiles at ``positions`` laid again face down: ``layout`` (empty in
    a player's event: tiles it does not know), without their tokens and
    Lava Flows, which are ``returned`` to the Supply."""
    tiles = layout or (UNSEEN,) * len(positions)
    for position, tile in zip(positions, tiles, strict=False):
        state = _with_place(
            state, position, tile=tile, revealed=False, token=False, lava=False
        )
    if returned is not None:
        supply = Supply(
            **{f: getattr(state.supply, f) + getattr(returned, f) for f in _COUNTED}
        )
        state = replace(state, supply=supply)
    return state


def _drawn(deck: tuple[str, ...]) -> tuple[str, ...]:
    """``deck`` without its top card, the one drawn (a card is always drawn
    from the top; in a player's fold it is a card it did not know)."""
    return deck[1:]


def evolve(state: State, event: Event) -> State:  # noqa: C901 (a flat match table)
    """The state after ``event``."""
    # A turn's everyday events come first: the match tries cases in order.
    r = replace
    match event:
        case TurnBegan(dino, round_, actions, heal_only):
            return r(
                state,
                current=_TURN_INDEX[dino],
                round=round_,
                turn_open=True,
                actions_left=actions,
                redraw_used=False,
                waiting_to_heal=bool(heal_only),
            )
        case ActionTaken():
            return r(state, actions_left=state.actions_left - 1)
        case TurnEnded():
            return r(state, turn_open=False, actions_left=0, waiting_to_heal=False)
        case DinoTravelled(dino, _, destination, _, food_spent):
            state = _add(state, dino, Resource.FOOD, -food_spent)
            return _with_dino(state, dino, position=destination)
        case TileRevealed(position, tile, token_placed, resource):
            return _revealed(state, position, tile, token_placed, resource)
        case ExplorationCardDrawn():
            return r(state, exploration_deck=_drawn(state.exploration_deck))
        case ExplorationCardDiscarded(card):
            return r(state, exploration_discard=(*state.exploration_discard, card))
        case ItemGiven(dino, recipient, item):
            return _given(state, dino, recipient, item)
        case ResourceGained(dino, resource):
            return _add(state, dino, resource, 1)
        case ResourceTaken(dino, resource):
            position = dino_of(state, dino).position
            state = _with_place(state, position, token=False)
            state = _supply_add(state, resource, 1)
            return _add(state, dino, resource, 1)
        case ResourceReturned(dino, resource):
            return _add(state, dino, resource, -1)
        case MeteorCardDrawn(card):
            return r(
                state,
                meteor_deck=_drawn(state.meteor_deck),
                meteor_drawn=(*state.meteor_drawn, card),
            )
        case MeteorMoved(_, destination):
            return r(state, meteor=destination)
        case DinoDamaged(dino, _, health):
            return _with_dino(state, dino, health=health)
        case DinoHealed(dino, _, health):
            state = _with_dino(state, dino, health=health)
            # A turn that began Injured is for healing only until healed.
            healed = current_dino(state).health > 0
            return r(state, waiting_to_heal=state.waiting_to_heal and not healed)
        case WorldSetUp(layout, meteors, docket, exploration):
            # The deal fills the face-down places' blank tiles (a position's
            # places keep their faces, tokens, Lava Flows and Caves); a
            # player's copy has no tiles and decks of unseen cards.
            places = (
                state.places[0],
                *(
                    replace(p, tile=tile)
                    for p, tile in zip(state.places[1:], layout, strict=False)
                ),
                *state.places[1 + len(layout) :],
            )
            return r(
                state,
                places=places,
                meteor_deck=meteors or (UNSEEN,) * event.meteor_cards,
                docket_deck=docket or (UNSEEN,) * event.rocket_docket_cards,
                exploration_deck=exploration or (UNSEEN,) * event.exploration_cards,
            )
        case RocketDocketCardRevealed(card):
            return r(
                state,
                docket_deck=_drawn(state.docket_deck),
                docket_open=(*state.docket_open, card),
            )
        case DieRolled():
            return r(state, dice_used=state.dice_used + 1)
        case TarpitHeld(dino, food_spent):
            return _add(state, dino, Resource.FOOD, -food_spent)
        case DinoReturnedToOasis(dino, _):
            return _with_dino(state, dino, position=OASIS)
        case VineSpent(dino):
            return _add(state, dino, Resource.VINE, -1)
        case TokenReturned(position, resource):
            state = _with_place(state, position, token=False)
            return state if resource is None else _supply_add(state, resource, 1)
        case RoomNeeded(dino, resource, from_tile, from_supply, draw_after):
            pending = Pending(
                PendingKind.MAKE_ROOM,
                dino,
                resource=resource,
                from_tile=from_tile,
                from_supply=from_supply,
                draw_after=draw_after,
            )
            return r(state, pending=pending)
        case RoomMade(dino, discarded):
            return r(_add(state, dino, discarded, -1), pending=None)
        case ResourceLeft():
            if (
                state.pending is not None
                and state.pending.kind is PendingKind.MAKE_ROOM
            ):
                return r(state, pending=None)
            return state
        case RedrawOffered(dino, card):
            return r(state, pending=Pending(PendingKind.REDRAW, dino, card=card))
        case RedrawDeclined():
            return r(state, pending=None)
        case ExplorationCardRedrawn(_, card):
            return r(
                state,
                pending=None,
                redraw_used=True,
                exploration_discard=(*state.exploration_discard, card),
            )
        case ExplorationCardKept(dino, card):
            held = dino_of(state, dino).held_cards
            return _with_dino(state, dino, held_cards=(*held, card))
        case ExplorationCardPlayed(dino, card, _):
            held = dino_of(state, dino).held_cards
            state = _with_dino(state, dino, held_cards=without(held, card))
            return r(state, exploration_discard=(*state.exploration_discard, card))
        case ExplorationDeckReshuffled(order):
            # A player's copy has no order: the discards, face down, unseen.
            deck = order or (UNSEEN,) * len(state.exploration_discard)
            return r(
                state,
                exploration_deck=(*state.exploration_deck, *deck),
                exploration_discard=(),
                reshuffles_used=state.reshuffles_used + 1,
            )
        case ExtraActionGained():
            return r(state, actions_left=state.actions_left + 1)
        case LavaFlowPlaced(position):
            state = _with_place(state, position, lava=True)
            supply = r(state.supply, lava_flows=state.supply.lava_flows - 1)
            return r(state, supply=supply)
        case SecretCavePlacementOffered(dino):
            return r(state, pending=Pending(PendingKind.SECRET_CAVES, dino))
        case SecretCavesPlaced(first, second):
            places = tuple(
                r(p, cave=i in (first, second)) for i, p in enumerate(state.places)
            )
            return r(state, places=places, pending=None)
        case SecretCavesLeft():
            return r(state, pending=None)
        case Resupplied(dino, food, wood, rocket_part):
            state = _add(state, dino, Resource.FOOD, food)
            d = dino_of(state, dino)
            state = _with_dino(
                state,
                dino,
                wood=d.wood - wood,
                rocket_part=d.rocket_part and not rocket_part,
            )
            return r(
                state,
                launchpad_wood=state.launchpad_wood + wood,
                launchpad_parts=state.launchpad_parts + int(rocket_part),
            )
        case RocketPartCollected(dino, card):
            state = _with_dino(state, dino, rocket_part=True)
            supply = r(state.supply, rocket_parts=state.supply.rocket_parts - 1)
            return r(
                state,
                supply=supply,
                docket_open=without(state.docket_open, card),
                docket_done=(*state.docket_done, card),
            )
        case RocketDocketClosed(cards):
            return r(
                state,
                docket_open=tuple(c for c in state.docket_open if c not in cards),
                docket_done=(*state.docket_done, *cards),
            )
        case CardGiven(dino, recipient, card):
            state = _with_dino(
                state, dino, held_cards=without(dino_of(state, dino).held_cards, card)
            )
            held = dino_of(state, recipient).held_cards
            return _with_dino(state, recipient, held_cards=(*held, card))
        case EarthquakeStruck(positions, layout, returned):
            state = _relaid(state, positions, layout, returned)
            return r(state, earthquakes_used=state.earthquakes_used + 1)
        case MeteorDeckRanOut():
            return r(state, result=METEOR_DECK_EMPTY)
        case MeteorHitEarth():
            return r(state, result=METEOR_HIT_EARTH)
        case RocketLaunched():
            return r(state, result=ESCAPED)
        case DinosHandedOver(control):
            return r(state, control=control)
        case TradeOffered(dino, recipient, item, card):
            return r(state, offer=TradeOffer(dino, recipient, item, card))
        case TradeAccepted() | TradeDeclined() | TradeOfferLapsed():
            return r(state, offer=None)
    return state


def _unrecorded(event: Event) -> Event:
    """``event`` as rules versions 1 to 3 recorded it: without the facts
    their fold worked out (a turn for healing only, a returned token's
    resource, what an Earthquake returned to the Supply)."""
    match event:
        case TurnBegan():
            return replace(event, heal_only=None)
        case TokenReturned():
            return replace(event, resource=None)
        case EarthquakeStruck():
            return replace(event, returned=None)
    return event


def _recalled(state: State, event: Event) -> Event:
    """``event`` of rules versions 1 to 3 with the facts it did not record,
    worked out as their fold did, from ``state`` (the state before it) and
    the content (versions 1 to 3 were played with this content only)."""
    match event:
        case TurnBegan(heal_only=None):
            return replace(event, heal_only=dino_of(state, event.dino).health == 0)
        case TokenReturned(position=position, resource=None):
            place = state.places[position]
            resource = CONTENT.tile(place.tile).resource if place.tile else None
            return replace(event, resource=resource)
        case EarthquakeStruck(positions=positions, returned=None):
            return replace(event, returned=picked_up(state, positions))
    return event


class EscapingExtinctionRulesV3(EscapingExtinctionRules):
    """Rules version 3, for the games created under it: the same rules, but
    three facts were not recorded: that an Injured Dino's turn is for
    healing only (``TurnBegan.heal_only``), the resource of a token Long
    Neck's roll returned (``TokenReturned.resource``) and what an Earthquake
    returned to the Supply (``EarthquakeStruck.returned``). Deciding, it
    leaves them out (None); folding, it works them out as that version's
    fold did, by the rules and the content it was played with."""

    rules_version: ClassVar[str] = "3"

    def start(self, state: State, rng: Rng) -> list[Event]:
        return [_unrecorded(e) for e in super().start(state, rng)]

    def decide_and_evolve(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> tuple[list[Event], State]:
        events, after = super().decide_and_evolve(state, seat, command, rng)
        return [_unrecorded(e) for e in events], after

    def evolve(self, state: State, event: Event) -> State:
        return evolve(state, _recalled(state, event))


class EscapingExtinctionRulesV2(EscapingExtinctionRulesV3):
    """Rules version 2, for the games created under it: the rules of version
    3, but a trade from any Dino on the tile happened at once, whoever
    controlled it (the table agreed aloud; no offer, no consent)."""

    rules_version: ClassVar[str] = "2"
    trades_need_consent: ClassVar[bool] = False


class EscapingExtinctionRulesV1(
    ImplicitDecisions[State, Command, Event, View], EscapingExtinctionRulesV2
):
    """Rules version 1, for the games created under it: the same rules, but
    the end of the game was not recorded (no :class:`RocketLaunched`, no
    :class:`MeteorHitEarth`); the fold worked it out after every event."""

    rules_version: ClassVar[str] = "1"
    unrecorded: ClassVar[tuple[type, ...]] = (RocketLaunched, MeteorHitEarth)

    def implied(self, state: State, event: Event) -> list[Event]:
        end = the_end(state, event)
        return [] if end is None else [end]


RULES = EscapingExtinctionRules()
RULES_V3 = EscapingExtinctionRulesV3()
RULES_V2 = EscapingExtinctionRulesV2()
RULES_V1 = EscapingExtinctionRulesV1()
