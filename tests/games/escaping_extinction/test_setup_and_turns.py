"""Set-up, who controls which Dino, turns, rounds, the Meteor and the end."""

from __future__ import annotations

from typing import Any

import pytest

from domain.chance import Rng
from domain.errors import InvalidCommand, NotYourSeat, RuleViolation
from domain.escaping_extinction import RULES
from domain.escaping_extinction.content import CONTENT, MeteorHazard
from domain.escaping_extinction.model import (
    ActionKind,
    ActionTaken,
    DinoDamaged,
    DinoTravelled,
    EarthquakeStruck,
    EndTurn,
    Explore,
    LavaFlowPlaced,
    MeteorCardDrawn,
    MeteorDeckRanOut,
    MeteorHitEarth,
    MeteorMoved,
    Options,
    Resource,
    ResourceReturned,
    Resupply,
    RocketLaunched,
    Scenario,
    SecretCavesPlaced,
    Supply,
    TileOrder,
    Travel,
    TravelMode,
    TurnBegan,
    TurnEnded,
    WorldSetUp,
)
from domain.escaping_extinction.readings import meteor_shuffle
from domain.rules import GameConfig
from domain.session import GameFinished
from tests.gamekit import new_game, when
from tests.games.escaping_extinction.helpers import (
    DOCKET,
    LAYOUT,
    LONG_NECK,
    METEOR,
    REX,
    SARA,
    TERRY,
    began,
    dino,
    injure,
    launch_ready,
    move,
    reveal,
    setup,
    table,
    top,
)

# -- set-up ---


def test_setup_lays_the_eighteen_tiles_face_down_around_the_oasis() -> None:
    state, _ = new_game(RULES, 2, seed="setup")
    game = state.game
    assert sorted(p.tile for p in game.places[1:]) == sorted(CONTENT.tile_order)
    assert game.places[0].tile == "oasis" and game.places[0].revealed
    assert not any(p.revealed or p.token for p in game.places[1:])
    assert len(game.places) == 19


def test_meteor_deck_hides_an_earthquake_in_each_pile_the_five_card_pile_on_top() -> (
    None
):
    for n in range(200):
        deck = meteor_shuffle(Rng("meteor", n))
        assert sorted(deck) == sorted(CONTENT.meteor_order)
        quakes = [
            i
            for i, c in enumerate(deck)
            if CONTENT.meteor[c].hazard is MeteorHazard.EARTHQUAKE
        ]
        assert quakes[0] < 6 and 6 <= quakes[1] < 11 and 11 <= quakes[2] < 16


def test_setup_reveals_the_first_rocket_docket_card_and_starts_terrys_turn() -> None:
    state, _ = new_game(RULES, 1, seed="docket")
    game = state.game
    assert len(game.docket_open) == 1
    assert len(game.docket_deck) == len(CONTENT.docket_order) - 1
    assert game.round == 1 and game.dinos[game.current].dino is TERRY
    assert game.actions_left == 2 and game.turn_open


def test_every_dino_starts_on_the_oasis_full_of_food_and_health() -> None:
    state = table(setup())
    for d in state.dinos:
        assert d.position == 0
        assert d.food == CONTENT.dinos[d.dino].energy
        assert d.health == 6
    assert dino(state, REX).food == 6 and dino(state, TERRY).food == 4
    assert state.supply.food == 30 - 18


def test_a_scenario_fixes_the_layout_and_every_deck_order() -> None:
    layout = tuple(reversed(LAYOUT))
    meteor = tuple(reversed(METEOR))
    docket = tuple(reversed(DOCKET))
    scenario = Scenario(layout=layout, meteor_deck=meteor, rocket_docket_deck=docket)
    state, events = new_game(RULES, 1, seed="x", scenario=scenario)
    setups = [e for e in events if isinstance(e, WorldSetUp)]
    assert setups[0].layout == layout and setups[0].meteor_deck == meteor
    assert state.game.docket_open == (docket[0],)


def test_a_scenario_whose_layout_is_not_a_full_order_is_refused() -> None:
    config: GameConfig[Any] = GameConfig(
        1, "s", Options(), Scenario(layout=("tarpit",))
    )
    with pytest.raises(InvalidCommand):
        RULES.validate_config(config)
    config = GameConfig(1, "s", Options(), Scenario(die_faces=(7,)))
    with pytest.raises(InvalidCommand):
        RULES.validate_config(config)


# -- who controls which Dino ---


@pytest.mark.parametrize(
    ("players", "options", "seats"),
    [
        (4, Options(), [(0,), (1,), (2,), (3,)]),
        (3, Options(), [(0,), (1,), (2,), (0,)]),
        (3, Options(shared_fourth_dino=True), [(0,), (1,), (2,), (0, 1, 2)]),
        (2, Options(), [(0,), (0,), (1,), (1,)]),
        (1, Options(), [(0,), (0,), (0,), (0,)]),
    ],
)
def test_seats_control_the_dinos_as_the_rulebook_table_says(
    players: int, options: Options, seats: list[tuple[int, ...]]
) -> None:
    state, _ = new_game(RULES, players, seed="control", options=options)
    assert [c.seats for c in state.game.control] == seats


def test_a_seat_cannot_move_a_dino_it_does_not_control() -> None:
    state = table(setup(), players=4)
    with pytest.raises(NotYourSeat) as err:
        when(RULES, state, 1, Travel(TERRY, 1, TravelMode.WALK))
    assert err.value.reason == "NOT_YOUR_DINO"
    assert "does not control Professor P. Terry" in err.value.message


def test_a_dino_cannot_act_when_it_is_not_its_turn() -> None:
    state = table(setup(), players=2)
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, Travel(REX, 1, TravelMode.WALK))
    assert err.value.reason == "NOT_THIS_DINOS_TURN"


def test_only_the_seat_of_the_dino_whose_turn_it_is_is_active() -> None:
    state = table(setup(), players=4)
    assert RULES.active_seats(state) == {0}
    assert RULES.legal_actions(state, 1) == []
    state = table([*setup(), TurnEnded(TERRY), began(LONG_NECK, 1)], players=3)
    assert RULES.active_seats(state) == {0}


# -- turns and rounds ---


def test_a_turn_has_two_actions_then_only_free_moves_and_ending_it() -> None:
    state = table(
        [
            *setup(),
            ActionTaken(TERRY, ActionKind.TRAVEL),
            ActionTaken(TERRY, ActionKind.TRAVEL),
        ]
    )
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, Travel(TERRY, 1, TravelMode.WALK))
    assert err.value.reason == "NO_ACTIONS_LEFT"
    assert RULES.legal_actions(state, 0) == [EndTurn(TERRY)]


def test_ending_a_turn_passes_to_the_next_dino_in_order() -> None:
    state = table(setup())
    assert when(RULES, state, 0, EndTurn(TERRY)) == [
        TurnEnded(TERRY),
        began(REX, 1),
    ]


def test_a_round_ends_with_a_meteor_card_then_terry_starts_the_next() -> None:
    state = table(
        [
            *setup(meteor=top("streak_1", deck=METEOR)),
            TurnEnded(TERRY),
            began(LONG_NECK, 1),
        ]
    )
    assert when(RULES, state, 0, EndTurn(LONG_NECK)) == [
        TurnEnded(LONG_NECK),
        MeteorCardDrawn("streak_1"),
        MeteorMoved(0, 1),
        began(TERRY, 2),
    ]


def test_the_meteor_reaching_earth_loses_the_game() -> None:
    events = [*setup(meteor=top("fireball_1", deck=METEOR)), MeteorMoved(0, 8)]
    state = table([*events, TurnEnded(TERRY), began(LONG_NECK, 1)])
    new = when(RULES, state, 0, EndTurn(LONG_NECK))
    assert new[-2:] == [MeteorMoved(8, 10), MeteorHitEarth()]
    after = table([*events, TurnEnded(TERRY), began(LONG_NECK, 1), *new])
    assert RULES.is_terminal(after)
    assert RULES.outcome(after).winners == ()
    assert RULES.outcome(after).result == "meteor_hit_earth"


def test_needing_a_meteor_card_from_an_empty_deck_loses_the_game() -> None:
    state = table(
        [
            *setup(meteor=("streak_1",)),
            MeteorCardDrawn("streak_1"),
            TurnEnded(TERRY),
            began(LONG_NECK, 1),
        ]
    )
    new = when(RULES, state, 0, EndTurn(LONG_NECK))
    assert new == [TurnEnded(LONG_NECK), MeteorDeckRanOut()]
    after = table([*setup(meteor=("streak_1",)), MeteorCardDrawn("streak_1"), *new])
    assert RULES.outcome(after).result == "meteor_deck_empty"


def test_ash_rain_hurts_every_dino_away_from_the_oasis() -> None:
    state = table(
        [
            *setup(meteor=top("ash_rain_1", deck=METEOR)),
            reveal(1),
            *move(REX, 1),
            TurnEnded(TERRY),
            began(LONG_NECK, 1),
        ]
    )
    new = when(RULES, state, 0, EndTurn(LONG_NECK))
    assert DinoDamaged(REX, 1, 5) in new
    assert [e for e in new if isinstance(e, DinoDamaged)] == [DinoDamaged(REX, 1, 5)]


def test_a_heatwave_costs_every_dino_one_food() -> None:
    state = table(
        [
            *setup(meteor=top("heatwave_1", deck=METEOR)),
            TurnEnded(TERRY),
            began(LONG_NECK, 1),
        ]
    )
    new = when(RULES, state, 0, EndTurn(LONG_NECK))
    assert [e for e in new if isinstance(e, ResourceReturned)] == [
        ResourceReturned(d, Resource.FOOD) for d in (TERRY, REX, SARA, LONG_NECK)
    ]


# -- earthquakes ---


def _quake_table(**extra: object) -> list[Any]:
    return [
        *setup(meteor=top("earthquake_1", deck=METEOR)),
        MeteorMoved(0, 3),
        reveal(1),
        reveal(3),
        *move(REX, 3),
        LavaFlowPlaced(3),
        reveal(5),
        LavaFlowPlaced(5),
        SecretCavesPlaced(5, 9),
        TurnEnded(TERRY),
        began(LONG_NECK, 1),
    ]


def test_an_earthquake_reshuffles_every_unoccupied_tile_but_the_oasis_face_down() -> (
    None
):
    order = TileOrder(tuple(reversed(LAYOUT)))
    state = table(_quake_table(), scenario=Scenario(earthquake_orders=(order,)))
    new = when(RULES, state, 0, EndTurn(LONG_NECK))
    quake = next(e for e in new if isinstance(e, EarthquakeStruck))
    assert 3 not in quake.positions and 0 not in quake.positions
    assert quake.positions == tuple(p for p in range(1, 19) if p != 3)
    picked = [LAYOUT[p - 1] for p in quake.positions]
    assert sorted(quake.layout) == sorted(picked)
    assert list(quake.layout) == [t for t in reversed(LAYOUT) if t in picked]
    assert new[new.index(quake) + 1] == MeteorMoved(3, 2)
    # What goes back to the Supply is decided with the quake and recorded:
    # the Redwood Ridge's Wood token and its Lava Flow (the Tarpit has no
    # resource; the occupied Pine Forest keeps its own).
    assert quake.returned == Supply(
        food=0, wood=1, vines=0, rocket_parts=0, lava_flows=1
    )
    after = table([*_quake_table(), *new])
    assert (
        after.places[3].revealed
        and after.places[3].lava
        and after.places[3].tile == LAYOUT[2]
    )
    for p in quake.positions:
        assert not after.places[p].revealed and not after.places[p].token
        assert not after.places[p].lava
    # Tokens back to the Supply (the occupied tile keeps its own); the Lava
    # Flow of the reshuffled tile too.
    assert after.places[3].token
    assert after.supply.food == 12 and after.supply.wood == 20 - 1
    assert after.supply.lava_flows == 1
    # The Secret Caves stay in place, on whatever tile lies there now.
    assert after.places[5].cave and after.places[9].cave


def test_the_fold_returns_to_the_supply_what_the_earthquake_records() -> None:
    # The fold reads what went back from the event, not from the tiles: a
    # later rule (or content) cannot change what a stored quake returned.
    state = table(_quake_table())
    returned = Supply(food=2, wood=0, vines=3, rocket_parts=0, lava_flows=0)
    quake = EarthquakeStruck((1, 5), ("tarpit", "bone_yard"), returned)
    after = RULES.evolve(state, quake)
    assert after.supply.food == state.supply.food + 2
    assert after.supply.vines == state.supply.vines + 3
    assert (after.supply.wood, after.supply.lava_flows) == (
        state.supply.wood,
        state.supply.lava_flows,
    )
    assert not after.places[5].lava and not after.places[5].revealed
    assert after.places[5].tile == "bone_yard"


def test_a_turn_has_the_actions_and_the_healing_its_event_records() -> None:
    state = table([*setup(), TurnEnded(TERRY), TurnBegan(REX, 1, 3, True)])
    assert (state.actions_left, state.waiting_to_heal) == (3, True)
    state = table([*setup(), TurnEnded(TERRY), TurnBegan(REX, 1, 1, False)])
    assert (state.actions_left, state.waiting_to_heal) == (1, False)


def test_an_earthquake_never_moves_the_meteor_behind_the_start() -> None:
    state = table(
        [
            *setup(meteor=top("earthquake_2", deck=METEOR)),
            TurnEnded(TERRY),
            began(LONG_NECK, 1),
        ]
    )
    new = when(RULES, state, 0, EndTurn(LONG_NECK))
    assert MeteorMoved(0, 0) in new


# -- the end ---


def test_five_parts_and_eight_wood_with_every_dino_home_wins_for_everyone() -> None:
    events = launch_ready(8)
    state = table(events, players=4)
    assert not RULES.is_terminal(state)
    new = when(RULES, state, 0, Travel(TERRY, 0, TravelMode.WALK))
    assert new == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 3, 0, TravelMode.WALK, 1),
        RocketLaunched(),
    ]
    after = table([*events, *new], players=4)
    assert RULES.is_terminal(after)
    assert RULES.outcome(after).winners == (0, 1, 2, 3)
    assert RULES.outcome(after).result == "escaped"


def test_seven_wood_on_the_launchpad_is_not_enough() -> None:
    state = table(launch_ready(7))
    assert state.launchpad_parts == 5 and state.launchpad_wood == 7
    assert not RULES.is_terminal(state)


def test_the_session_records_the_win_as_the_game_finishing() -> None:
    from domain.session import Session

    session = Session(RULES)
    scenario = Scenario(layout=LAYOUT, rocket_docket_deck=DOCKET)
    played, _ = new_game(RULES, 1, seed="fin", scenario=scenario)
    events = launch_ready(8)[3:]
    played = session.fold(events, played)
    new = session.play(played, 0, Travel(TERRY, 0, TravelMode.WALK), Rng("fin", 99))
    assert new[-1] == GameFinished((0,), "escaped")


def test_an_injured_dino_without_vines_has_its_turn_pass_by_itself() -> None:
    state = table([*setup(), injure(REX)])
    assert when(RULES, state, 0, EndTurn(TERRY)) == [
        TurnEnded(TERRY),
        began(REX, 1, heal_only=True),
        TurnEnded(REX),
        began(SARA, 1),
    ]


def test_explore_is_refused_on_the_oasis() -> None:
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(setup()), 0, Explore(TERRY))
    assert err.value.reason == "CANNOT_EXPLORE_OASIS"


def test_resupply_is_refused_when_there_is_nothing_to_do() -> None:
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(setup()), 0, Resupply(TERRY))
    assert err.value.reason == "NOTHING_TO_RESUPPLY"


def test_injured_dinos_on_the_oasis_count_for_the_win() -> None:
    events = [*launch_ready(8), injure(SARA)]
    state = table(events, players=4)
    new = when(RULES, state, 0, Travel(TERRY, 0, TravelMode.WALK))
    assert RULES.outcome(table([*events, *new], players=4)).result == "escaped"


def test_with_three_players_sharing_long_neck_any_seat_may_move_it() -> None:
    state = table(
        [*setup(), TurnEnded(TERRY), began(LONG_NECK, 1)],
        players=3,
        options=Options(shared_fourth_dino=True),
    )
    assert RULES.active_seats(state) == {0, 1, 2}
    for seat in (0, 1, 2):
        assert when(RULES, state, seat, Travel(LONG_NECK, 3, TravelMode.WALK))


def test_a_scenario_maps_to_its_protobuf_message_and_back() -> None:
    from strata.games.escaping_extinction.v1 import escaping_extinction_pb2

    from domain.escaping_extinction.model import CardOrder
    from service import protomap

    scenario = Scenario(
        layout=LAYOUT,
        meteor_deck=METEOR,
        rocket_docket_deck=DOCKET,
        die_faces=(3, 6, 1),
        earthquake_orders=(TileOrder(LAYOUT[:3]),),
        exploration_reshuffles=(CardOrder(("thorn_bush_1",)),),
    )
    message = protomap.to_proto(scenario, escaping_extinction_pb2.Scenario())
    assert protomap.from_proto(message, Scenario) == scenario
