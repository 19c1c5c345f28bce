"""Entering the 21st Century alive and well, and the way back to the last
"No Bones on Me" space for a Dino with bones showing."""

from __future__ import annotations

import pytest

from domain.chance import Rng
from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DinoEnteredTwentyFirstCentury,
    DinoMoved,
    EarthEventDrawn,
    Heading,
    LifeCardRecharged,
    Phase,
    RollDie,
    Scenario,
    TurnPassed,
)
from domain.errors import RuleViolation
from domain.rules import Outcome, Viewer
from domain.session import GameFinished, Session, Status
from tests.gamekit import new_game, when
from tests.games.dinosaurs_extinct.helpers import (
    FINISH,
    LAST_NO_BONES,
    after,
    steps_of,
    table,
    without_rolls,
)

BEFORE_FINISH = FINISH - 1
# A roll that takes a Dino going back from BEFORE_FINISH past the last
# "No Bones on Me" space onto a Footprint space.
PAST = next(
    roll
    for roll in range(BEFORE_FINISH - LAST_NO_BONES + 1, 7)
    if RULES.content.spaces[BEFORE_FINISH - roll] is Space.FOOTPRINT
)


def test_an_alive_and_well_dino_enters_without_rolling_the_exact_number() -> None:
    # Alex is one space from the finish, and rolls a three.
    state = table(BEFORE_FINISH, 0, dice=(3,))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)

    assert without_rolls(events) == [
        DinoEnteredTwentyFirstCentury(seat=0, from_step=BEFORE_FINISH, to_step=FINISH)
    ]
    assert state.phase is Phase.OVER
    assert state.dinos[0].step == FINISH


def test_the_first_dino_to_enter_the_21st_century_wins() -> None:
    state = table(0, BEFORE_FINISH, turn=1, dice=(1,))

    state = after(state, when(RULES, state, 1, RollDie()))

    assert RULES.is_terminal(state)
    assert RULES.outcome(state) == Outcome(winners=(1,), result="reached_21st_century")
    assert RULES.view(state, Viewer.spectator()).winner == 1


def test_nobody_plays_once_a_dino_has_entered_the_21st_century() -> None:
    state = table(BEFORE_FINISH, 0, dice=(1,))

    state = after(state, when(RULES, state, 0, RollDie()))

    assert RULES.active_seats(state) == frozenset()
    assert RULES.legal_actions(state, 1) == []
    with pytest.raises(RuleViolation) as refused:
        when(RULES, state, 1, RollDie())
    assert refused.value.reason == "GAME_OVER"


def test_the_game_finishes_with_the_winner_recorded() -> None:
    session = Session(RULES)
    state, _ = new_game(RULES, 2, scenario=Scenario(dice=(6,)))
    state = session.fold([DinoMoved(0, 0, BEFORE_FINISH, Heading.FORWARD)], state)

    events = session.play(state, 0, RollDie(), Rng("end", 1))
    state = session.fold(events, state)

    assert events[-1] == GameFinished(winners=(0,), result="reached_21st_century")
    assert state.status is Status.FINISHED


def test_a_command_after_the_end_is_answered_game_finished_as_the_readme_says() -> None:
    session = Session(RULES)
    state, _ = new_game(RULES, 2, scenario=Scenario(dice=(6,)))
    state = session.fold([DinoMoved(0, 0, BEFORE_FINISH, Heading.FORWARD)], state)
    state = session.fold(session.play(state, 0, RollDie(), Rng("end", 1)), state)

    with pytest.raises(RuleViolation) as refused:
        session.play(state, 1, RollDie(), Rng("end", 2))

    assert refused.value.reason == "GAME_FINISHED"


def test_a_dino_with_bones_may_not_enter_and_stops_on_the_step_before() -> None:
    state = table(FINISH - 5, 0, bones={0: 1}, dice=(6,))

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events)[0] == DinoMoved(
        0, FINISH - 5, BEFORE_FINISH, Heading.FORWARD
    )
    assert not any(isinstance(e, DinoEnteredTwentyFirstCentury) for e in events)


def test_a_dino_with_bones_that_rolls_the_exact_number_stops_before_too() -> None:
    state = table(FINISH - 4, 0, bones={0: 2}, dice=(4,))

    state = after(state, when(RULES, state, 0, RollDie()))

    assert state.dinos[0].step == BEFORE_FINISH
    assert state.phase is Phase.ROLL


def test_a_dino_with_bones_past_the_last_no_bones_space_heads_back_to_it() -> None:
    state = table(LAST_NO_BONES + 1, 0, bones={0: 1})

    view = RULES.view(state, Viewer.player(0))

    assert view.dinos[0].heading is Heading.BACKWARD
    assert view.dinos[1].heading is Heading.FORWARD


def test_passing_the_last_no_bones_space_with_bones_turns_the_dino_around() -> None:
    state = table(LAST_NO_BONES - 1, 0, bones={0: 1}, dice=(2,))

    state = after(state, when(RULES, state, 0, RollDie()))

    assert state.dinos[0].step == LAST_NO_BONES + 1
    assert RULES.view(state, Viewer.spectator()).dinos[0].heading is Heading.BACKWARD


def test_rolling_the_exact_number_back_recharges_the_life_card() -> None:
    state = table(BEFORE_FINISH, 0, bones={0: 2}, dice=(BEFORE_FINISH - LAST_NO_BONES,))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)

    assert without_rolls(events) == [
        DinoMoved(0, BEFORE_FINISH, LAST_NO_BONES, Heading.BACKWARD),
        LifeCardRecharged(seat=0),
        TurnPassed(seat=1),
    ]
    assert state.dinos[0].bones == 0


def test_once_alive_and_well_again_the_dino_enters_without_the_exact_roll() -> None:
    back = BEFORE_FINISH - LAST_NO_BONES
    state = table(BEFORE_FINISH, LAST_NO_BONES - 1, bones={0: 1}, dice=(back, 1, 6))

    state = after(state, when(RULES, state, 0, RollDie()))
    state = after(state, when(RULES, state, 1, RollDie()))
    events = when(RULES, state, 0, RollDie())

    assert DinoEnteredTwentyFirstCentury(0, LAST_NO_BONES, FINISH) in events


def test_going_back_a_dino_moves_its_full_roll_past_the_space() -> None:
    state = table(BEFORE_FINISH, 0, bones={0: 1}, dice=(PAST,))

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events)[0] == DinoMoved(
        0, BEFORE_FINISH, BEFORE_FINISH - PAST, Heading.BACKWARD
    )
    assert not any(isinstance(e, LifeCardRecharged) for e in events)


def test_a_dino_that_went_past_the_space_turns_around_on_its_next_turn() -> None:
    below = BEFORE_FINISH - PAST
    state = table(BEFORE_FINISH, 0, bones={0: 1}, dice=(PAST, 1, LAST_NO_BONES - below))

    state = after(state, when(RULES, state, 0, RollDie()))
    assert RULES.view(state, Viewer.spectator()).dinos[0].heading is Heading.FORWARD
    state = after(state, when(RULES, state, 1, RollDie()))
    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events)[:2] == [
        DinoMoved(0, below, LAST_NO_BONES, Heading.FORWARD),
        LifeCardRecharged(seat=0),
    ]


def test_a_space_reached_on_the_way_back_takes_effect() -> None:
    earth_event = max(
        e for e in steps_of(Space.EARTH_EVENT) if 0 < BEFORE_FINISH - e <= 6
    )
    state = table(BEFORE_FINISH, 0, bones={0: 1}, dice=(BEFORE_FINISH - earth_event, 6))

    events = when(RULES, state, 0, RollDie())

    assert any(isinstance(e, EarthEventDrawn) for e in events)
    assert after(state, events).dinos[0].step == earth_event


def test_an_alive_and_well_dino_past_the_last_no_bones_space_keeps_going() -> None:
    state = table(LAST_NO_BONES + 1, 0, dice=(FINISH - LAST_NO_BONES - 1,))

    events = when(RULES, state, 0, RollDie())

    assert DinoEnteredTwentyFirstCentury(0, LAST_NO_BONES + 1, FINISH) in events


def test_an_earlier_no_bones_space_reached_on_the_way_back_recharges_too() -> None:
    earlier = max(
        s
        for s in steps_of(Space.NO_BONES_ON_ME)
        if s < LAST_NO_BONES and BEFORE_FINISH - s <= 6
    )
    state = table(BEFORE_FINISH, 0, bones={0: 2}, dice=(BEFORE_FINISH - earlier,))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)

    assert LifeCardRecharged(seat=0) in events
    assert state.dinos[0].step == earlier
    assert state.dinos[0].bones == 0
