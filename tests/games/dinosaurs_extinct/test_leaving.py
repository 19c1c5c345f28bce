"""A seat leaving: its Dino leaves the race (off the track, skipped)."""

from __future__ import annotations

import pytest

from domain.dinosaurs_extinct import RULES, RULES_V1
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DieRolled,
    DinoLeftRace,
    DinoMoved,
    DinoSwitchLapsed,
    Heading,
    Phase,
    RollDie,
    RollPurpose,
    State,
    SwitchWith,
    TurnPassed,
)
from domain.dinosaurs_extinct.rules import DinosaursExtinctRules
from domain.errors import RuleViolation
from tests.gamekit import when
from tests.games.dinosaurs_extinct.helpers import first, table


def test_a_seat_leaving_on_its_turn_takes_its_dino_off_and_passes_the_turn():
    state = table(0, 0, 0, turn=1)
    assert RULES.leave(state, 1, (0, 2)) == [DinoLeftRace(1), TurnPassed(2)]


def test_a_seat_leaving_out_of_turn_only_takes_its_dino_off():
    state = table(0, 0, 0, turn=0)
    assert RULES.leave(state, 2, (0, 1)) == [DinoLeftRace(2)]


def test_turns_skip_a_dino_that_left():
    state = RULES.evolve(table(0, 0, 0, dice=(1,)), DinoLeftRace(1))
    events = when(RULES, state, 0, RollDie())
    assert events[-1] == TurnPassed(2)
    assert DieRolled(0, 1, RollPurpose.MOVE) in events


def test_a_dino_that_left_is_no_defender_and_no_switch_target():
    footprint = first(Space.FOOTPRINT)
    # Seat 1 (gone) stands on the Footprint seat 0 reaches: no challenge.
    state = table(footprint - 2, footprint, 0, dice=(2,))
    state = RULES.evolve(state, DinoLeftRace(1))
    events = when(RULES, state, 0, RollDie())
    assert DinoMoved(0, footprint - 2, footprint, Heading.FORWARD) in events
    assert not any(type(e).__name__ == "DinoChallengeBegan" for e in events)
    switch = first(Space.DINO_SWITCH)
    state = table(switch - 1, 0, 0, dice=(1,))
    state = RULES.evolve(state, DinoLeftRace(1))
    for e in when(RULES, state, 0, RollDie()):
        state = RULES.evolve(state, e)
    assert state.phase is Phase.CHOOSE_SWITCH
    assert RULES.legal_actions(state, 0) == [SwitchWith(2)]
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, SwitchWith(1))
    assert err.value.reason == "DINO_OUT"


def choosing_a_switch(rules: DinosaursExtinctRules = RULES) -> State:
    """Three Dinos; seat 0's has just landed on a Dino Switch space."""
    switch = first(Space.DINO_SWITCH)
    state = table(switch - 1, 0, 0, dice=(1,))
    for e in when(rules, state, 0, RollDie()):
        state = rules.evolve(state, e)
    assert state.phase is Phase.CHOOSE_SWITCH
    return state


def test_a_switch_to_choose_lapses_when_its_seat_leaves():
    state = choosing_a_switch()

    events = RULES.leave(state, 0, (1, 2))

    # The lapse is a fact of its own (rules version 2), decided by leave.
    assert events == [DinoLeftRace(0), DinoSwitchLapsed(0), TurnPassed(1)]
    for e in events:
        state = RULES.evolve(state, e)
    assert (state.phase, state.turn) == (Phase.ROLL, 1)
    assert RULES.active_seats(state) == {1}


def test_a_dino_leaving_the_race_does_not_by_itself_drop_a_switch():
    # The fold of DinoLeftRace only takes the Dino off: what becomes of its
    # switch is DinoSwitchLapsed's (a later rule could keep it otherwise).
    state = RULES.evolve(choosing_a_switch(), DinoLeftRace(0))
    assert state.phase is Phase.CHOOSE_SWITCH
    assert state.dinos[0].out


def test_under_rules_version_1_the_lapse_is_unrecorded_and_folded_all_the_same():
    state = choosing_a_switch(RULES_V1)

    events = RULES_V1.leave(state, 0, (1, 2))

    assert events == [DinoLeftRace(0), TurnPassed(1)]
    for e in events:
        state = RULES_V1.evolve(state, e)
    assert (state.phase, state.turn) == (Phase.ROLL, 1)
