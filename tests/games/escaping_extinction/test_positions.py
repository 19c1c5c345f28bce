"""Starting from a position (admin scenario): a game in progress at the
start of a Dino's turn.

Given/when/then for rule situations a position reaches at once (the Meteor
deck run out, an empty Supply under Long Neck's gamble, the fifth Rocket
Part, the Meteor one space from Earth), the refusals (each naming the field
that is wrong), what players see of it, and a property test over random
positions, valid and broken."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from strata.games.escaping_extinction.v1 import escaping_extinction_pb2

from domain.chance import Rng
from domain.escaping_extinction import RULES
from domain.escaping_extinction.content import CONTENT, Dino, Resource
from domain.escaping_extinction.model import (
    CollectRocketPart,
    DieRolled,
    DinoState,
    EndTurn,
    Explore,
    MeteorDeckRanOut,
    MeteorHitEarth,
    MeteorMoved,
    Place,
    Position,
    ResourceGained,
    ResourceTaken,
    Resupply,
    RocketDocketClosed,
    RocketLaunched,
    RocketPartCollected,
    Scenario,
    State,
    Supply,
    Travel,
    TravelMode,
)
from domain.escaping_extinction.positions import MAX_ROUND
from domain.rules import Viewer
from domain.session import SessionState, Status
from tests.gamekit import (
    RANDOM_SEEDS,
    assert_hidden_alike,
    assert_position_plays,
    check_random_positions,
    new_game,
    refusal,
)
from tests.games.escaping_extinction.helpers import (
    DOCKET,
    EXPLORATION,
    LAYOUT,
    LONG_NECK,
    METEOR,
    REX,
    SARA,
    TERRY,
    check_invariants,
)

DINOS = tuple(Dino)
OASIS = Place("oasis", True, False, False, False)
FACE_DOWN = Place("", False, False, False, False)
KEEP = tuple(c for c in EXPLORATION if CONTENT.exploration[c].keep)


def world(*face_up: tuple[int, str, bool]) -> tuple[Place, ...]:
    """The 19 places: the Oasis, face-up ``(position, tile, token)``, the
    rest face down with their tiles drawn at the start."""
    places = [OASIS] + [FACE_DOWN] * (CONTENT.positions - 1)
    for position, tile, token in face_up:
        places[position] = Place(tile, True, token, False, False)
    return tuple(places)


def dino(
    d: Dino,
    position: int = 0,
    food: int | None = None,
    wood: int = 0,
    vines: int = 0,
    part: bool = False,
    health: int | None = None,
    held: tuple[str, ...] = (),
) -> DinoState:
    card = CONTENT.dinos[d]
    return DinoState(
        d,
        position,
        card.energy if food is None else food,
        wood,
        vines,
        part,
        card.health if health is None else health,
        held,
    )


def home(**changed: DinoState) -> tuple[DinoState, ...]:
    """The four Dinos on the Oasis, full, but those ``changed`` (by name)."""
    return tuple(changed.get(d.name.lower(), dino(d)) for d in DINOS)


def start(
    position: Position, die: tuple[int, ...] = (), players: int = 1
) -> SessionState[State]:
    scenario = Scenario(die_faces=die, position=position)
    assert refusal(RULES, players, scenario) is None
    state, _ = new_game(RULES, players, "pos", scenario=scenario)
    assert state.status is Status.ACTIVE
    return state


def play(game: State, *commands: Any, seed: str = "play") -> tuple[State, list[Any]]:
    """``game`` after ``commands`` (all from seat 0); every event emitted."""
    events: list[Any] = []
    for n, command in enumerate(commands):
        emitted, game = RULES.decide_and_evolve(game, 0, command, Rng(seed, n))
        events += emitted
    return game, events


def test_a_position_sets_the_table_and_the_turn() -> None:
    position = Position(
        places=world((3, "pine_forest", True)),
        dinos=home(rex=dino(REX, 3, food=2, wood=1)),
        launchpad_wood=3,
        meteor=4,
        meteor_drawn=METEOR[:4],
        rocket_docket_open=(DOCKET[2],),
        rocket_docket_done=(DOCKET[0], DOCKET[1]),
        launchpad_parts=2,
        exploration_discard=EXPLORATION[:3],
        round=5,
        current_dino=REX,
        actions_left=1,
    )
    game = start(position).game
    check_invariants(game)
    assert game.round == 5 and game.current == 1 and game.actions_left == 1
    assert game.turn_open and game.pending is None
    assert game.places[3] == Place("pine_forest", True, True, False, False)
    assert sorted(p.tile for p in game.places[1:]) == sorted(LAYOUT)
    assert not any(p.revealed for i, p in enumerate(game.places) if i not in (0, 3))
    assert game.dinos[1] == dino(REX, 3, food=2, wood=1)
    assert game.meteor == 4 and game.meteor_drawn == METEOR[:4]
    assert sorted(game.meteor_deck) == sorted(METEOR[4:])
    assert game.docket_open == (DOCKET[2],) and len(game.docket_deck) == 9
    assert game.supply == Supply(30 - 14, 20 - 1 - 1 - 3, 16, 3, 2)
    assert game.exploration_discard == EXPLORATION[:3]
    assert RULES.active_seats(game) == {0}


def test_given_the_meteor_deck_empty_when_the_round_ends_then_the_game_is_lost() -> (
    None
):
    # Every Meteor card drawn, the Meteor short of Earth: the round's last
    # turn ends and a Meteor card is needed from the empty deck.
    position = Position(meteor=6, meteor_drawn=METEOR)
    game = start(position).game
    assert game.meteor_deck == ()
    game, events = play(game, EndTurn(TERRY), EndTurn(REX), EndTurn(SARA))
    assert not any(isinstance(e, MeteorDeckRanOut) for e in events)
    game, events = play(game, EndTurn(LONG_NECK))
    assert events[-1] == MeteorDeckRanOut()
    assert RULES.is_terminal(game) and game.result == "meteor_deck_empty"
    assert RULES.outcome(game).winners == ()


@pytest.mark.parametrize(("supply_wood", "gained"), [(0, 0), (1, 1)])
def test_given_no_wood_in_the_supply_long_necks_bonus_gives_only_the_token(
    supply_wood: int, gained: int
) -> None:
    # Long Neck gambles on a Wood tile's token and the die shows green: the
    # token and one Wood from the Supply - only what the Supply has left.
    deck = ("warm_spring_1", *(c for c in EXPLORATION if c != "warm_spring_1"))
    position = Position(
        places=world((2, "pine_forest", True)),
        dinos=home(
            terry=dino(TERRY, wood=4),
            rex=dino(REX, wood=4),
            sara=dino(SARA, wood=4),
            long_neck=dino(LONG_NECK, 2),
        ),
        launchpad_wood=7 - supply_wood,
        exploration_deck=deck,
        current_dino=LONG_NECK,
    )
    game = start(position, die=(1,)).game  # face 1: green
    assert game.supply.wood == supply_wood
    game, events = play(game, Explore(LONG_NECK, gamble=True))
    assert any(isinstance(e, DieRolled) and e.face == 1 for e in events)
    assert ResourceTaken(LONG_NECK, Resource.WOOD) in events
    gains = [e for e in events if isinstance(e, ResourceGained)]
    assert len(gains) == gained
    assert game.dinos[3].wood == 1 + gained and game.supply.wood == 0
    check_invariants(game)


def test_given_four_parts_on_the_launchpad_the_fifth_launches_the_rocket() -> None:
    # Rex stands on Redwood Ridge, its card face up with another; the rest of
    # the team waits on the Oasis, the Launchpad holds 4 parts and 8 Wood.
    position = Position(
        places=world((1, "redwood_ridge", False)),
        dinos=home(rex=dino(REX, 1)),
        launchpad_wood=8,
        launchpad_parts=4,
        rocket_docket_open=("redwood_mast", "bone_frame"),
        rocket_docket_done=DOCKET[:4],
        meteor_deck=("streak_1",),
        current_dino=REX,
    )
    game = start(position).game
    game, events = play(
        game,
        CollectRocketPart(REX, "redwood_mast"),
        Travel(REX, 0, TravelMode.WALK),
        EndTurn(REX),
    )
    assert RocketPartCollected(REX, "redwood_mast") in events
    assert RocketDocketClosed(("bone_frame",)) in events
    assert game.supply.rocket_parts == 0 and not RULES.is_terminal(game)
    game, events = play(game, EndTurn(SARA), EndTurn(LONG_NECK), EndTurn(TERRY))
    game, events = play(game, Resupply(REX))
    assert events[-1] == RocketLaunched()
    assert game.result == "escaped" and RULES.outcome(game).winners == (0,)


def test_given_the_meteor_one_space_from_earth_a_fireball_ends_the_game() -> None:
    last = CONTENT.track_length - 1
    position = Position(
        meteor=last, meteor_deck=("fireball_1",), current_dino=LONG_NECK
    )
    game = start(position).game
    game, events = play(game, EndTurn(LONG_NECK))
    assert MeteorMoved(last, CONTENT.track_length) in events
    assert events[-1] == MeteorHitEarth()
    assert game.result == "meteor_hit_earth"


def test_given_an_earthquake_at_the_start_the_meteor_stays_at_the_start() -> None:
    position = Position(meteor_deck=("earthquake_1",), current_dino=LONG_NECK)
    game, events = play(start(position).game, EndTurn(LONG_NECK))
    assert MeteorMoved(0, 0) in events and game.round == 2
    check_invariants(game)


# -- refusals -------------------------------------------------------------------

FOUR = home()
BROKEN: list[tuple[Position, str]] = [
    (Position(places=(OASIS,)), "places"),
    (Position(places=(FACE_DOWN, *world()[1:])), "places[0]"),
    (Position(places=world((1, "nowhere", False))), "places[1].tile"),
    (
        Position(places=world((1, "tarpit", False), (2, "tarpit", False))),
        "places[2].tile",
    ),
    (
        Position(
            places=(*world()[:4], Place("", True, False, False, False), *world()[5:])
        ),
        "places[4].tile",
    ),
    (
        Position(
            places=(
                *world()[:3],
                Place("tarpit", False, True, False, False),
                *world()[4:],
            )
        ),
        "places[3].token",
    ),
    # A face-down tile of a resource with its token: the token would tell
    # players what lies under it.
    (
        Position(
            places=(
                *world()[:3],
                Place("pine_forest", False, True, False, False),
                *world()[4:],
            )
        ),
        "places[3].token",
    ),
    (Position(places=(replace(OASIS, cave=True), *world()[1:])), "places[0].cave"),
    (Position(places=(replace(OASIS, lava=True), *world()[1:])), "places[0]"),
    (
        Position(
            places=(
                *world()[:5],
                Place("volcano", True, False, True, False),
                *world()[6:],
            )
        ),
        "places[5].lava",
    ),
    (Position(places=world((5, "volcano", True))), "places[5].token"),
    (
        Position(
            places=(*world()[:6], Place("", False, False, True, False), *world()[7:])
        ),
        "places[6].lava",
    ),
    (
        Position(
            places=(*world()[:6], Place("", False, False, False, True), *world()[7:])
        ),
        "places",
    ),
    (Position(dinos=FOUR[:3]), "dinos"),
    (Position(dinos=(FOUR[1], FOUR[0], *FOUR[2:])), "dinos"),
    (Position(dinos=home(sara=dino(SARA, 7))), "dinos[2].position"),
    (Position(dinos=home(sara=dino(SARA, 19))), "dinos[2].position"),
    (Position(dinos=home(terry=dino(TERRY, food=5))), "dinos[0].food"),
    (Position(dinos=home(rex=dino(REX, wood=3, vines=2))), "dinos[1].wood"),
    (Position(dinos=home(rex=dino(REX, health=7))), "dinos[1].health"),
    (
        Position(dinos=home(sara=dino(SARA, held=("warm_spring_1",)))),
        "dinos[2].held_cards[0]",
    ),
    (
        Position(meteor_deck=("streak_1",), meteor_drawn=("streak_1",)),
        "meteor_drawn[0]",
    ),
    (Position(meteor_drawn=("comet",)), "meteor_drawn[0]"),
    (
        Position(rocket_docket_deck=("bone_frame", "bone_frame")),
        "rocket_docket_deck[1]",
    ),
    (
        Position(
            dinos=home(rex=dino(REX, held=(KEEP[0],))), exploration_discard=KEEP[:1]
        ),
        "dinos[1].held_cards[0]",
    ),
    (Position(meteor=CONTENT.track_length), "meteor"),
    (Position(meteor=-1), "meteor"),
    (Position(round=0), "round"),
    (Position(round=MAX_ROUND + 1), "round"),
    (Position(actions_left=3), "actions_left"),
    (Position(launchpad_wood=-1), "launchpad_wood"),
    (Position(dinos=home(terry=dino(TERRY, health=0))), "current_dino"),
    (Position(launchpad_wood=21), "supply.wood"),
    (Position(supply=Supply(11, 20, 16, 5, 2)), "supply.food"),
    (Position(launchpad_parts=6), "supply.rocket_parts"),
    (Position(launchpad_parts=2, rocket_docket_done=DOCKET[:1]), "rocket_docket_done"),
    (Position(launchpad_parts=1, rocket_docket_done=DOCKET[:2]), "rocket_docket_done"),
    (Position(launchpad_parts=5, rocket_docket_done=DOCKET[:4]), "rocket_docket_done"),
    (
        Position(
            launchpad_parts=5,
            rocket_docket_done=DOCKET[:5],
            rocket_docket_open=DOCKET[5:6],
        ),
        "rocket_docket_open",
    ),
    (
        Position(launchpad_parts=5, launchpad_wood=8, rocket_docket_done=DOCKET[:5]),
        "launchpad_parts",
    ),
]


@pytest.mark.parametrize(("position", "field"), BROKEN)
def test_a_broken_position_is_refused_naming_its_field(
    position: Position, field: str
) -> None:
    error = refusal(RULES, 2, Scenario(position=position))
    assert error is not None and error.field == f"position.{field}", error
    assert error.reason == "POSITION_INVALID"


@pytest.mark.parametrize(
    "name", ["layout", "meteor_deck", "rocket_docket_deck", "exploration_deck"]
)
def test_a_position_with_the_scenarios_own_deal_is_refused(name: str) -> None:
    deal: dict[str, Any] = {
        "layout": LAYOUT,
        "meteor_deck": METEOR,
        "rocket_docket_deck": DOCKET,
        "exploration_deck": EXPLORATION,
    }
    scenario = Scenario(position=Position(), **{name: deal[name]})
    error = refusal(RULES, 2, scenario)
    assert error is not None and error.field == name


def test_an_injured_dino_with_a_vine_may_start_its_turn_healing() -> None:
    position = Position(dinos=home(terry=dino(TERRY, health=0, vines=1)))
    game = start(position).game
    assert game.waiting_to_heal and RULES.active_seats(game) == {0}


# -- what players see ---------------------------------------------------------


def test_players_see_the_position_without_face_down_tiles_or_deck_orders() -> None:
    position = Position(
        places=(
            *world((1, "tarpit", False))[:2],
            Place("volcano", False, False, False, True),
            *world()[3:4],
            Place("", False, False, False, True),
            *world()[5:],
        ),
        meteor_deck=METEOR[::-1],
        rocket_docket_deck=DOCKET[1:],
        rocket_docket_open=DOCKET[:1],
        exploration_deck=EXPLORATION[:5],
        exploration_discard=EXPLORATION[5:7],
    )
    shown = RULES.redact_position(position, Viewer.player(0))
    assert shown.places[1] == position.places[1]  # face up: public
    assert shown.places[2] == Place("", False, False, False, True)  # the Cave shows
    # The decks' cards are unseen, as many as they are (the views count them).
    assert shown.meteor_deck == ("",) * len(METEOR)
    assert shown.rocket_docket_deck == ("",) * (len(DOCKET) - 1)
    assert shown.exploration_deck == ("",) * 5
    assert shown.rocket_docket_open == DOCKET[:1]
    assert shown.exploration_discard == EXPLORATION[5:7]
    assert RULES.redact_position(position, Viewer.admin()) == position
    played = assert_position_plays(
        RULES, escaping_extinction_pb2, 2, Scenario(position=position), "seen"
    )
    assert played.state.game.places[2].tile == "volcano"  # there, only hidden


# -- random positions -----------------------------------------------------------


def _random_places(rng: Rng) -> list[Place]:
    layout = rng.shuffled(LAYOUT)
    places = [OASIS]
    lava = 0
    for tile in layout:
        up = rng.roll(2) == 1
        resource = CONTENT.tiles[tile].resource
        token = up and resource is not None and rng.roll(2) == 1
        flow = up and lava < 2 and rng.roll(8) == 1
        lava += flow
        named = up or rng.roll(3) == 1
        places.append(Place(tile if named else "", up, token, flow, False))
    if rng.roll(3) == 1:
        a, b = rng.shuffled(range(1, CONTENT.positions))[:2]
        places[a] = replace(places[a], cave=True)
        places[b] = replace(places[b], cave=True)
    return places


def _random_dinos(
    rng: Rng, places: list[Place], parts: int
) -> tuple[tuple[DinoState, ...], int]:
    """The four Dinos on face-up places, and how many parts they carry."""
    up = [i for i, p in enumerate(places) if p.revealed]
    dinos = []
    held = list(rng.shuffled(KEEP))
    carried = 0
    for d in DINOS:
        card = CONTENT.dinos[d]
        wood = rng.roll(3) - 1
        part = carried + parts < CONTENT.launch_parts and rng.roll(4) == 1
        carried += part
        cards = (held.pop(),) if rng.roll(4) == 1 else ()
        dinos.append(
            DinoState(
                d,
                rng.choice(up),
                rng.roll(card.energy + 1) - 1,
                wood,
                rng.roll(card.satchel - wood + 1) - 1 if rng.roll(2) == 1 else 0,
                part,
                rng.roll(card.health + 1) - 1,
                cards,
            )
        )
    return tuple(dinos), carried


def random_position(rng: Rng) -> Position:
    """A position, valid most of the time (now and then a count does not add
    up, or the Dino to move is Injured with no Vine)."""
    places = _random_places(rng)
    parts = rng.roll(5) - 1
    dinos, carried = _random_dinos(rng, places, parts)
    meteor = rng.shuffled(METEOR)
    drawn = rng.roll(len(METEOR) + 1) - 1
    docket = rng.shuffled(DOCKET)
    done = parts + carried
    opened = rng.roll(3) - 1 if done < CONTENT.launch_parts else 0
    held = {c for d in dinos for c in d.held_cards}
    exploration = rng.shuffled([c for c in EXPLORATION if c not in held])
    discarded = rng.roll(len(exploration) + 1) - 1
    return Position(
        places=tuple(places),
        dinos=dinos,
        launchpad_wood=rng.roll(9) - 1,
        launchpad_parts=parts,
        meteor=rng.roll(CONTENT.track_length) - 1,
        meteor_deck=meteor[drawn:] if rng.roll(2) == 1 else (),
        meteor_drawn=meteor[:drawn],
        rocket_docket_deck=docket[done + opened :][: rng.roll(4) - 1],
        rocket_docket_open=docket[done : done + opened],
        rocket_docket_done=docket[:done],
        exploration_deck=exploration[discarded:][: rng.roll(6) - 1],
        exploration_discard=exploration[:discarded],
        round=rng.roll(12),
        current_dino=rng.choice(DINOS),
        actions_left=rng.choice([None, 0, 1, 2]),
    )


BREAKS = [
    lambda p: replace(p, meteor=CONTENT.track_length),
    lambda p: replace(
        p, meteor_drawn=(*p.meteor_drawn, *p.meteor_drawn[:1], "streak_1")
    ),
    lambda p: replace(p, rocket_docket_done=p.rocket_docket_done[1:] or DOCKET[:1]),
    lambda p: replace(p, places=p.places[:-1]),
    lambda p: replace(p, supply=Supply(0, 0, 0, 0, 0)),
    lambda p: replace(p, actions_left=5),
]


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_random_positions_start_and_play_or_are_refused_with_a_reason(
    players: int,
) -> None:
    def make(rng: Rng, _: int) -> Scenario:
        position = random_position(rng)
        if rng.roll(5) == 1:
            position = rng.choice(BREAKS)(position)
        return Scenario(position=position)

    _, played = check_random_positions(
        RULES,
        escaping_extinction_pb2,
        players,
        make,
        max(RANDOM_SEEDS // 4, 20),
        check_each_step=check_invariants,
    )
    assert played  # most are valid


def test_random_positions_are_refused_and_accepted_both() -> None:
    outcomes = set()
    for i in range(40):
        rng = Rng("positions-mix", i)
        position = random_position(rng)
        if i % 4 == 0:
            position = BREAKS[i % len(BREAKS)](position)
        outcomes.add(refusal(RULES, 2, Scenario(position=position)) is None)
    assert outcomes == {True, False}


def break_readme_example(data: dict[str, Any]) -> str:
    """Break the README's example position (proto JSON) in one field: the
    Meteor on Earth. The path of that field (the end-to-end tests check the
    service names it)."""
    data["meteor"] = CONTENT.track_length
    return "meteor"


def test_face_down_tiles_and_the_decks_orders_are_hidden() -> None:
    def with_tiles(a: str, b: str) -> tuple[Place, ...]:
        places = list(world())
        places[3] = Place(a, False, False, False, False)
        places[4] = Place(b, False, False, False, False)
        return tuple(places)

    assert_hidden_alike(
        RULES,
        2,
        Position(places=with_tiles("pine_forest", "fern_grove")),
        Position(places=with_tiles("fern_grove", "pine_forest")),
        [Viewer.spectator(), Viewer.player(0), Viewer.player(1)],
    )
    assert_hidden_alike(
        RULES,
        2,
        Position(exploration_deck=EXPLORATION[:3], meteor_deck=("streak_1",)),
        Position(exploration_deck=EXPLORATION[2::-1], meteor_deck=("fireball_1",)),
        [Viewer.spectator(), Viewer.player(0), Viewer.player(1)],
    )
