"""A seat leaving: its Dino leaves the race (off the track, skipped)."""

from __future__ import annotations

import pytest

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DieRolled,
    DinoLeftRace,
    DinoMoved,
    Heading,
    Phase,
    RollDie,
    RollPurpose,
    SwitchWith,
    TurnPassed,
)
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


def test_a_switch_to_choose_lapses_when_its_seat_leaves():
    switch = first(Space.DINO_SWITCH)
    state = table(switch - 1, 0, 0, dice=(1,))
    for e in when(RULES, state, 0, RollDie()):
        state = RULES.evolve(state, e)
    assert state.phase is Phase.CHOOSE_SWITCH
    for e in RULES.leave(state, 0, (1, 2)):
        state = RULES.evolve(state, e)
    assert (state.phase, state.turn) == (Phase.ROLL, 1)
    assert RULES.active_seats(state) == {1}
