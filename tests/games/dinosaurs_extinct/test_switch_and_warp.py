"""Dino Switch spaces and the Time Warp."""

from __future__ import annotations

import pytest

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DinoChallengeBegan,
    DinoMoved,
    DinosSwitched,
    DinoSwitchReached,
    DinoWarped,
    EarthEventDrawn,
    Heading,
    Phase,
    RollDie,
    RollPurpose,
    State,
    SwitchWith,
    TurnPassed,
)
from domain.errors import InvalidCommand, RuleViolation
from tests.gamekit import when
from tests.games.dinosaurs_extinct.helpers import (
    after,
    first,
    rolls,
    steps_of,
    table,
    without_rolls,
)

SWITCH, OTHER_SWITCH = steps_of(Space.DINO_SWITCH)
WARP_LOW, WARP_HIGH = steps_of(Space.TIME_WARP)
FOOTPRINT = first(Space.FOOTPRINT, after=SWITCH + 1)
EARTH_EVENT = first(Space.EARTH_EVENT, after=SWITCH + 1)


def on_switch(*others: int, dice: tuple[int, ...] = ()) -> State:
    """Seat 0 has just landed on the first Dino Switch space."""
    state = table(SWITCH - 1, *others, dice=(1, *dice))
    return after(state, when(RULES, state, 0, RollDie()))


def test_landing_on_a_dino_switch_means_choosing_a_dino_to_switch_with() -> None:
    state = table(SWITCH - 1, FOOTPRINT, 0, dice=(1,))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)

    assert without_rolls(events) == [
        DinoMoved(0, SWITCH - 1, SWITCH, Heading.FORWARD),
        DinoSwitchReached(seat=0, step=SWITCH),
    ]
    assert state.phase is Phase.CHOOSE_SWITCH
    assert RULES.active_seats(state) == {0}


def test_any_other_dino_may_be_chosen_wherever_it_stands() -> None:
    state = on_switch(FOOTPRINT, 0, SWITCH)

    assert RULES.legal_actions(state, 0) == [
        SwitchWith(target_seat=1),
        SwitchWith(target_seat=2),
        SwitchWith(target_seat=3),
    ]
    assert RULES.legal_actions(state, 1) == []


def test_the_switch_is_compulsory() -> None:
    state = on_switch(FOOTPRINT)

    with pytest.raises(RuleViolation) as refused:
        when(RULES, state, 0, RollDie())

    assert refused.value.reason == "SWITCH_TARGET_REQUIRED"


def test_a_dino_cannot_switch_with_itself() -> None:
    state = on_switch(FOOTPRINT)

    with pytest.raises(RuleViolation) as refused:
        when(RULES, state, 0, SwitchWith(target_seat=0))

    assert refused.value.reason == "CANNOT_SWITCH_WITH_YOURSELF"


def test_a_dino_that_does_not_exist_cannot_be_chosen() -> None:
    state = on_switch(FOOTPRINT)

    with pytest.raises(InvalidCommand) as refused:
        when(RULES, state, 0, SwitchWith(target_seat=2))

    assert refused.value.reason == "SEAT_OUT_OF_RANGE"


def test_only_the_dino_on_the_switch_space_chooses() -> None:
    state = on_switch(FOOTPRINT)

    with pytest.raises(RuleViolation) as refused:
        when(RULES, state, 1, SwitchWith(target_seat=0))

    assert refused.value.reason == "NOT_YOUR_TURN"


def test_switching_swaps_the_places_of_the_two_dinos() -> None:
    state = on_switch(FOOTPRINT)

    events = when(RULES, state, 0, SwitchWith(target_seat=1))
    state = after(state, events)

    assert events == [
        DinosSwitched(seat=0, target_seat=1, seat_step=SWITCH, target_step=FOOTPRINT),
        TurnPassed(seat=1),
    ]
    assert state.dinos[0].step == FOOTPRINT
    assert state.dinos[1].step == SWITCH
    assert state.phase is Phase.ROLL


def test_the_switched_dino_on_the_switch_space_does_not_switch() -> None:
    state = on_switch(FOOTPRINT)

    state = after(state, when(RULES, state, 0, SwitchWith(target_seat=1)))

    assert state.turn == 1
    assert RULES.legal_actions(state, 1) == [RollDie()]


def test_the_switching_dino_completes_its_turn_on_its_new_space() -> None:
    state = on_switch(EARTH_EVENT, dice=(6,))

    events = when(RULES, state, 0, SwitchWith(target_seat=1))

    drawn = [e for e in events if isinstance(e, EarthEventDrawn)]
    assert [e.seat for e in drawn] == [0]
    assert rolls(events) == [(0, 6, RollPurpose.EARTH_EVENT)]


def test_switching_onto_an_occupied_footprint_starts_a_challenge() -> None:
    state = on_switch(FOOTPRINT, FOOTPRINT, dice=(6, 1))

    events = when(RULES, state, 0, SwitchWith(target_seat=1))

    assert DinoChallengeBegan(seat=0, step=FOOTPRINT, defenders=(2,)) in events


def test_a_dino_reaching_a_switch_space_by_switching_does_not_switch_again() -> None:
    state = on_switch(OTHER_SWITCH, FOOTPRINT)

    events = when(RULES, state, 0, SwitchWith(target_seat=1))
    state = after(state, events)

    assert not any(isinstance(e, DinoSwitchReached) for e in events)
    assert events[-1] == TurnPassed(seat=1)
    assert state.dinos[0].step == OTHER_SWITCH
    assert state.phase is Phase.ROLL


def test_switching_with_a_dino_on_the_prehistoric_era_sends_the_switcher_there() -> (
    None
):
    state = on_switch(0)

    events = when(RULES, state, 0, SwitchWith(target_seat=1))
    state = after(state, events)

    assert state.dinos[0].step == 0
    assert state.dinos[1].step == SWITCH


def test_switching_onto_a_time_warp_travels_through_it() -> None:
    state = on_switch(WARP_LOW)

    events = when(RULES, state, 0, SwitchWith(target_seat=1))

    assert DinoWarped(seat=0, from_step=WARP_LOW, to_step=WARP_HIGH) in events
    assert after(state, events).dinos[0].step == WARP_HIGH


def test_a_time_warp_leads_forward_to_its_other_end() -> None:
    state = table(WARP_LOW - 1, 0, dice=(1,))

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events) == [
        DinoMoved(0, WARP_LOW - 1, WARP_LOW, Heading.FORWARD),
        DinoWarped(seat=0, from_step=WARP_LOW, to_step=WARP_HIGH),
        TurnPassed(seat=1),
    ]
    assert after(state, events).dinos[0].step == WARP_HIGH


def test_a_time_warp_leads_backward_to_its_other_end() -> None:
    state = table(WARP_HIGH - 2, 0, dice=(2,))

    events = when(RULES, state, 0, RollDie())

    assert DinoWarped(seat=0, from_step=WARP_HIGH, to_step=WARP_LOW) in events
    assert after(state, events).dinos[0].step == WARP_LOW


def test_a_dino_challenge_may_await_at_the_exit_of_the_warp() -> None:
    state = table(WARP_LOW - 1, WARP_HIGH, dice=(1, 2, 5))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)

    assert DinoChallengeBegan(seat=0, step=WARP_HIGH, defenders=(1,)) in events
    assert state.dinos[0].step == WARP_HIGH - 2
    assert state.dinos[0].bones == 1


def test_dinos_at_the_entrance_of_the_warp_are_not_challenged() -> None:
    state = table(WARP_LOW - 1, WARP_LOW, dice=(1,))

    events = when(RULES, state, 0, RollDie())

    assert not any(isinstance(e, DinoChallengeBegan) for e in events)
