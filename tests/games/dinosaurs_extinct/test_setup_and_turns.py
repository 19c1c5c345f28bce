"""Set-up, turn order, moving, the scenario and refused commands."""

from __future__ import annotations

import pytest

from domain.chance import Rng
from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DieRolled,
    Dino,
    DinoMoved,
    EarthEventsShuffled,
    Heading,
    Phase,
    RollDie,
    RollPurpose,
    Scenario,
    SwitchWith,
    TurnPassed,
)
from domain.errors import InvalidCommand, RuleViolation
from domain.session import Session
from tests.gamekit import given, new_game, when
from tests.games.dinosaurs_extinct.helpers import DECK, after, first, rolls, table


def test_setting_up_shuffles_every_earth_event_card_into_the_stack() -> None:
    state = given(RULES, 2, [])

    events = RULES.start(state, Rng("seed", 0))

    assert len(events) == 1
    shuffled = events[0]
    assert isinstance(shuffled, EarthEventsShuffled)
    assert sorted(shuffled.order) == sorted(DECK)
    assert shuffled.cards == 14


def test_every_dino_starts_on_the_prehistoric_era_alive_and_well() -> None:
    state, _ = new_game(RULES, 4)

    game = state.game
    assert game.dinos == (Dino(0, 0),) * 4
    assert RULES.content.spaces[0] is Space.PREHISTORIC_ERA


def test_the_youngest_player_in_seat_zero_goes_first() -> None:
    state, _ = new_game(RULES, 3)

    assert state.game.phase is Phase.ROLL
    assert RULES.active_seats(state.game) == {0}
    assert RULES.legal_actions(state.game, 0) == [RollDie()]
    assert RULES.legal_actions(state.game, 1) == []


def test_play_moves_clockwise_to_the_next_seat() -> None:
    state = table(0, 0, 0, turn=1, dice=(1,))

    events = when(RULES, state, 1, RollDie())

    assert events[-1] == TurnPassed(seat=2)


def test_after_the_last_seat_play_comes_back_to_seat_zero() -> None:
    state = table(0, 0, 0, turn=2, dice=(1,))

    events = when(RULES, state, 2, RollDie())

    assert events[-1] == TurnPassed(seat=0)


def test_a_dino_moves_forward_the_number_rolled() -> None:
    footprint = first(Space.FOOTPRINT)
    state = table(0, 0, dice=(footprint,))

    events = when(RULES, state, 0, RollDie())

    assert events == [
        DieRolled(seat=0, value=footprint, purpose=RollPurpose.MOVE),
        DinoMoved(seat=0, from_step=0, to_step=footprint, heading=Heading.FORWARD),
        TurnPassed(seat=1),
    ]


def test_only_the_dino_whose_turn_it_is_may_roll() -> None:
    state = table(0, 0)

    with pytest.raises(RuleViolation) as refused:
        when(RULES, state, 1, RollDie())

    assert refused.value.reason == "NOT_YOUR_TURN"


def test_no_command_is_taken_before_the_cards_are_shuffled() -> None:
    state = given(RULES, 2, [])

    with pytest.raises(RuleViolation) as refused:
        when(RULES, state, 0, RollDie())

    assert refused.value.reason == "GAME_NOT_STARTED"
    assert RULES.active_seats(state) == frozenset()


def test_switching_without_standing_on_a_dino_switch_is_refused() -> None:
    state = table(0, 0)

    with pytest.raises(RuleViolation) as refused:
        when(RULES, state, 0, SwitchWith(target_seat=1))

    assert refused.value.reason == "NO_SWITCH_PENDING"


def test_a_scenario_fixes_the_dice_in_order_then_the_dice_are_random() -> None:
    scenario = Scenario(dice=(3, 1))
    state, _ = new_game(RULES, 2, scenario=scenario)
    session = Session(RULES)

    first_turn = session.play(state, 0, RollDie(), Rng("x", 1))
    state = session.fold(first_turn, state)
    second_turn = session.play(state, 1, RollDie(), Rng("x", 2))
    state = session.fold(second_turn, state)

    assert first_turn[0] == DieRolled(0, 3, RollPurpose.MOVE)
    assert second_turn[0] == DieRolled(1, 1, RollPurpose.MOVE)
    rolled = [e for e in first_turn + second_turn if isinstance(e, DieRolled)]
    assert state.game.dice_used == len(rolled)


def test_every_roll_of_a_turn_consumes_the_scenario_dice_in_order() -> None:
    earth_event = first(Space.EARTH_EVENT)
    state = table(0, 0, dice=(earth_event, 6, 4))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)
    more = when(RULES, state, 1, RollDie())

    assert [e.value for e in events if isinstance(e, DieRolled)] == [earth_event, 6]
    assert rolls(more)[0] == (1, 4, RollPurpose.MOVE)
    assert state.dice_used == 2


def test_a_scenario_fixes_the_earth_event_stack() -> None:
    order = tuple(reversed(DECK))

    state, events = new_game(RULES, 2, scenario=Scenario(earth_events=order))

    assert EarthEventsShuffled(order=order, cards=14) in events
    assert state.game.earth_deck == order


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario(dice=(0,)),
        Scenario(dice=(7,)),
        Scenario(earth_events=(1, 2, 3)),
        Scenario(earth_events=(*DECK[:-1], DECK[0])),
    ],
)
def test_a_scenario_with_impossible_chance_is_refused(scenario: Scenario) -> None:
    with pytest.raises(InvalidCommand) as refused:
        Session(RULES).create(2, "seed", scenario=scenario)

    assert refused.value.reason == "SCENARIO_INVALID"


@pytest.mark.parametrize("players", [1, 5])
def test_the_game_takes_two_to_four_players(players: int) -> None:
    with pytest.raises(InvalidCommand) as refused:
        Session(RULES).create(players, "seed")

    assert refused.value.reason == "PLAYER_COUNT_OUT_OF_RANGE"


def test_each_seat_plays_its_own_dino() -> None:
    state = table(0, 0, 0, 0)

    assert RULES.characters(state) == {
        0: "Green Rex",
        1: "Blue Triceratops",
        2: "Orange Stegosaurus",
        3: "Purple Brachiosaurus",
    }


def test_a_command_that_is_not_of_this_game_is_refused_as_malformed() -> None:
    state = table(0, 0)

    with pytest.raises(InvalidCommand) as refused:
        when(RULES, state, 0, "jump")

    assert refused.value.reason == "UNKNOWN_COMMAND"
