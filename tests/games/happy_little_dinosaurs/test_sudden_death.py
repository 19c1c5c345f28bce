"""Sudden Death: ties for the lowest score, and every branch of it."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.model import (
    BottomReason,
    DisasterFaced,
    DisasterSentToBottom,
    EffectWindowOpened,
    MouthTrapSprung,
    PassEffect,
    Phase,
    PlayDisasterInsurance,
    PlayPointCard,
    PointCardCommitted,
    PointsCollected,
    SuddenDeathCardsRevealed,
    SuddenDeathStarted,
    TakeDisaster,
)
from domain.rules import Viewer
from tests.gamekit import when

from .helpers import act, commit, deal, of_type, pass_all, redacted, table

SAPPERS = [f"score_sapper_{i}" for i in range(1, 5)]
BOOSTERS = [f"score_booster_{i}" for i in range(1, 5)]


def test_lowest_tie_goes_to_sudden_death_after_the_highest_collects() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", "run_home_bat_1"],
            ["cool_stick_2", "handy_pan_1"],
        )
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    state, events = pass_all(state)
    assert events[-2:] == [PointsCollected({0: 9}), SuddenDeathStarted((1, 2))]
    assert state.phase is Phase.SUDDEN_DEATH
    assert RULES.active_seats(state) == {1, 2}
    state, events = act(state, 1, PlayPointCard("run_home_bat_1"))
    assert redacted(events[0], Viewer.player(2)) == PointCardCommitted(1, None)
    state, events = act(state, 2, PlayPointCard("handy_pan_1"))
    assert events[1:] == [
        SuddenDeathCardsRevealed({1: "run_home_bat_1", 2: "handy_pan_1"}, lowest=(2,)),
        DisasterFaced(2),
    ]


def test_only_players_in_sudden_death_play_in_it() -> None:
    state = table(
        deal(["meteor_cannon_1", "bonehead_1"], ["cool_stick_1"], ["cool_stick_2"])
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    state, _ = pass_all(state)
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayPointCard("bonehead_1"))
    assert error.value.reason == "NOT_IN_SUDDEN_DEATH"


def test_sudden_death_ignores_traits() -> None:
    # Predatory: Nervous Rex +1, Bad Luck Bronto -1, Cry Ceratops 0.
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["bonehead_1", "run_home_bat_1"],
            ["grave_maker_1", "bonehead_2"],
        ),
        disasters=["predatory_1"],
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "bonehead_1", 2: "grave_maker_1"}
    )
    assert state.scores == {0: 10, 1: 3, 2: 3}
    state, _ = pass_all(state)
    state, events = commit(state, {1: "run_home_bat_1", 2: "bonehead_2"})
    # With Bronto's -1 it would be 4 against 4; without traits 5 beats 4.
    assert events[-1] == DisasterFaced(2)


def test_sudden_death_ignores_point_card_effects() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", "pet_rock_1"],
            ["cool_stick_2", "cool_stick_3"],
        )
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    state, _ = pass_all(state)
    state, events = commit(state, {1: "pet_rock_1", 2: "cool_stick_3"})
    assert not of_type(events, EffectWindowOpened)
    assert events[-1] == DisasterFaced(1)


def test_sudden_death_ignores_inversions() -> None:
    # Mouth Trap: {5, 9, 9, 2} becomes {5, 2, 2, 9}; seats 1 and 2 tie lowest.
    state = table(
        deal(
            ["mouth_trap_1"],
            ["meteor_cannon_1", "handy_pan_1"],
            ["meteor_cannon_2", "meteor_cannon_3"],
            ["cool_stick_1"],
        )
    )
    state, events = commit(
        state,
        {
            0: "mouth_trap_1",
            1: "meteor_cannon_1",
            2: "meteor_cannon_2",
            3: "cool_stick_1",
        },
    )
    assert of_type(events, MouthTrapSprung)
    assert state.scores == {0: 5, 1: 2, 2: 2, 3: 9}
    state, events = pass_all(state)
    assert events[-2:] == [PointsCollected({3: 9}), SuddenDeathStarted((1, 2))]
    state, events = commit(state, {1: "handy_pan_1", 2: "meteor_cannon_3"})
    # The lower card takes the Disaster although a Mouth Trap lies face up.
    assert events[-1] == DisasterFaced(1)


def test_a_sudden_death_tie_repeats_until_it_is_broken() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", "bonehead_1", "run_home_bat_1"],
            ["cool_stick_2", "bonehead_2", "handy_pan_1"],
        )
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    state, _ = pass_all(state)
    state, events = commit(state, {1: "bonehead_1", 2: "bonehead_2"})
    assert events[-1] == SuddenDeathCardsRevealed(
        {1: "bonehead_1", 2: "bonehead_2"}, lowest=(1, 2)
    )
    assert state.phase is Phase.SUDDEN_DEATH
    assert RULES.active_seats(state) == {1, 2}
    state, events = commit(state, {1: "run_home_bat_1", 2: "handy_pan_1"})
    assert events[-1] == DisasterFaced(2)
    assert "bonehead_1" in state.table and "handy_pan_1" in state.table


def test_in_a_sudden_death_of_three_only_those_still_tied_play_again() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", "handy_pan_1"],
            ["cool_stick_2", "handy_pan_2"],
            ["pet_rock_1", "meteor_cannon_2"],
        )
    )
    state, _ = commit(
        state,
        {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2", 3: "pet_rock_1"},
    )
    state, _ = act(state, 3, PassEffect())
    assert state.scores == {0: 9, 1: 1, 2: 1, 3: 1}  # Stego +1 against a Meteor
    state, events = pass_all(state)
    assert events[-1] == SuddenDeathStarted((1, 2, 3))
    state, _ = commit(state, {1: "handy_pan_1", 2: "handy_pan_2", 3: "meteor_cannon_2"})
    assert state.sudden_death == (1, 2)
    assert RULES.active_seats(state) == {1, 2}


def test_nobody_in_sudden_death_collects_points() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", "meteor_cannon_2"],
            ["cool_stick_2", "handy_pan_1"],
        )
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    state, events = pass_all(state)
    state, more = commit(state, {1: "meteor_cannon_2", 2: "handy_pan_1"})
    assert of_type(events + more, PointsCollected) == [PointsCollected({0: 9})]
    assert state.players[1].escape == 0


def test_a_sudden_death_player_without_point_cards_takes_the_disaster() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", *SAPPERS],
            ["cool_stick_2"],
        )
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    state, events = pass_all(state)
    assert events[-2:] == [SuddenDeathStarted((1, 2)), DisasterFaced(1)]


def test_two_sudden_death_players_without_point_cards_send_the_disaster_down() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", *SAPPERS],
            ["cool_stick_2", *BOOSTERS],
        ),
        disasters=["meteor_2"],
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    assert state.scores == {0: 9, 1: 1, 2: 1}
    state, events = pass_all(state)
    # The highest scorer, not involved, still collects.
    assert PointsCollected({0: 9}) in events
    assert (
        DisasterSentToBottom("meteor_2", BottomReason.SUDDEN_DEATH_OUT_OF_CARDS)
        in events
    )
    assert state.disaster_deck[-1] == "meteor_2"
    assert state.round == 2


def test_the_sudden_death_loser_may_still_play_disaster_insurance() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", "bonehead_1"],
            ["cool_stick_2", "handy_pan_1", "disaster_insurance_1"],
        )
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    state, _ = pass_all(state)
    state, _ = commit(state, {1: "bonehead_1", 2: "handy_pan_1"})
    assert state.phase is Phase.DISASTER and state.taker == 2
    assert RULES.legal_actions(state, 2) == [
        PlayDisasterInsurance("disaster_insurance_1"),
        TakeDisaster(),
    ]
    state, events = act(state, 2, PlayDisasterInsurance("disaster_insurance_1"))
    assert DisasterSentToBottom("meteor_1", BottomReason.INSURANCE) in events


def test_running_out_of_point_cards_in_a_repeated_sudden_death_takes_it() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", "bonehead_1", *SAPPERS[:3]],
            ["cool_stick_2", "bonehead_2"],
        )
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "cool_stick_2"}
    )
    state, _ = pass_all(state)
    state, events = commit(state, {1: "bonehead_1", 2: "bonehead_2"})
    assert events[-2:] == [
        SuddenDeathCardsRevealed({1: "bonehead_1", 2: "bonehead_2"}, lowest=(1, 2)),
        DisasterFaced(1),
    ]
