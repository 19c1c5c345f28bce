"""Instant cards: the scoring window, Boosters, Sappers, Inversions, and
Disaster Insurance and Redirect."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.model import (
    BottomReason,
    DisasterFaced,
    DisasterInsurancePlayed,
    DisasterRedirectPlayed,
    DisasterSentToBottom,
    DisasterTaken,
    InstantPassed,
    PassEffect,
    PassInstant,
    Phase,
    PlayDisasterInsurance,
    PlayDisasterRedirect,
    PlayPointCard,
    PlayScoreBooster,
    PlayScoreInversion,
    PlayScoreSapper,
    PointsCollected,
    ScoreInversionPlayed,
    ScoreSapperPlayed,
    ScoresSwapped,
    TakeDisaster,
)
from tests.gamekit import when

from .helpers import act, commit, deal, inversion_to_play, pass_all, table

# -- the scoring window ---------------------------------------------------------


def test_every_living_player_holding_cards_is_asked_during_scoring() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"], ["bonehead_1"]))
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "bonehead_1"})
    # Asking only the holders of Instants would tell who holds them.
    assert state.phase is Phase.SCORING
    assert RULES.active_seats(state) == {0, 1, 2}
    assert RULES.legal_actions(state, 0) == [PassInstant()]


def test_only_scoring_instants_are_offered_during_scoring() -> None:
    hand = ["meteor_cannon_1", "score_booster_1", "score_inversion_1"]
    state = table(deal([*hand, "disaster_insurance_1"], ["cool_stick_1"]))
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    assert RULES.legal_actions(state, 0) == [
        PlayScoreBooster("score_booster_1", 0),
        PlayScoreBooster("score_booster_1", 1),
        PlayScoreInversion("score_inversion_1"),
        PassInstant(),
    ]
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayDisasterInsurance("disaster_insurance_1"))
    assert error.value.reason == "WRONG_PHASE"


def test_the_window_closes_when_every_player_passes_in_a_row() -> None:
    state = table(deal(["bonehead_1"], ["grave_maker_1", "score_booster_1"]))
    state, _ = commit(state, {0: "bonehead_1", 1: "grave_maker_1"})
    state, events = act(state, 0, PassInstant())
    assert events == [InstantPassed(0)]
    assert RULES.active_seats(state) == {1}
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PassInstant())
    assert error.value.reason == "NOT_YOUR_TURN"
    # A play reopens the window for everyone.
    state, _ = act(state, 1, PlayScoreBooster("score_booster_1", 1))
    assert RULES.active_seats(state) == {0, 1}
    state, _ = act(state, 1, PassInstant())
    assert state.phase is Phase.SCORING
    state, events = act(state, 0, PassInstant())
    assert PointsCollected({1: 5}) in events


def test_a_player_may_play_several_instants_in_a_window() -> None:
    hand = ["cool_stick_1", "score_booster_1", "score_booster_2"]
    state = table(deal(hand, ["grave_maker_1"]))
    state, _ = commit(state, {0: "cool_stick_1", 1: "grave_maker_1"})
    state, _ = act(state, 0, PlayScoreBooster("score_booster_1", 0))
    state, _ = act(state, 0, PlayScoreBooster("score_booster_2", 0))
    assert state.scores == {0: 5, 1: 3}
    assert state.table == ("score_booster_1", "score_booster_2")


def test_score_booster_adds_two_to_any_players_score() -> None:
    state = table(deal(["grave_maker_1", "score_booster_1"], ["bonehead_1"], []))
    state, _ = commit(
        state, {0: "grave_maker_1", 1: "bonehead_1", 2: state.players[2].hand[0]}
    )
    before = dict(state.scores)
    state, _ = act(state, 0, PlayScoreBooster("score_booster_1", 2))
    assert state.scores == {**before, 2: before[2] + 2}


def test_score_sapper_takes_two_from_any_players_score() -> None:
    state = table(deal(["grave_maker_1", "score_sapper_1"], ["bonehead_1"]))
    state, _ = commit(state, {0: "grave_maker_1", 1: "bonehead_1"})
    state, events = act(state, 0, PlayScoreSapper("score_sapper_1", 1))
    assert events[0] == ScoreSapperPlayed(0, "score_sapper_1", 1, 2)
    assert state.scores == {0: 3, 1: 2}
    state, events = pass_all(state)
    assert PointsCollected({0: 3}) in events
    assert DisasterFaced(1) in events


def test_an_instant_must_be_in_the_hand_and_of_its_kind() -> None:
    state = table(deal(["grave_maker_1", "score_sapper_1"], ["bonehead_1"]))
    state, _ = commit(state, {0: "grave_maker_1", 1: "bonehead_1"})
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayScoreBooster("score_sapper_1", 1))
    assert error.value.reason == "WRONG_CARD"
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayScoreBooster("score_booster_1", 1))
    assert error.value.reason == "CARD_NOT_IN_HAND"


def test_a_best_score_at_or_below_zero_moves_nobody_backwards() -> None:
    # Emotional: Nervous Rex -1. Rex at -1 beats Bronto sapped to -2.
    state = table(
        deal(["pet_rock_1", "score_sapper_1"], ["pet_rock_2"]),
        disasters=["emotional_1"],
    )
    state, _ = commit(state, {0: "pet_rock_1", 1: "pet_rock_2"})
    # Both Pet Rocks pass their effects first.
    state, _ = act(state, 0, PassEffect())
    state, _ = act(state, 1, PassEffect())
    state, _ = act(state, 0, PlayScoreSapper("score_sapper_1", 1))
    assert state.scores == {0: -1, 1: -2}
    state, events = pass_all(state)
    assert PointsCollected({0: 0}) in events
    assert state.players[0].escape == 0


# -- Score Inversion --------------------------------------------------------------


def test_score_inversion_follows_the_rulebook_example() -> None:
    # Two players tied for lowest at 3, the highest at 9: both tied players
    # now score 9 and the one who had 9 scores 3.
    state = inversion_to_play()
    assert state.scores == {0: 3, 1: 3, 2: 9}
    state, events = act(state, 0, PlayScoreInversion("score_inversion_1"))
    assert events[:2] == [
        ScoreInversionPlayed(0, "score_inversion_1"),
        ScoresSwapped({0: 9, 1: 9, 2: 3}),
    ]
    assert state.scores == {0: 9, 1: 9, 2: 3}
    state, events = pass_all(state)
    assert PointsCollected({0: 9, 1: 9}) in events
    assert DisasterFaced(2) in events


def test_score_inversion_leaves_middle_scores_alone() -> None:
    state = table(
        deal(
            ["cool_stick_1", "score_inversion_1"],
            ["bonehead_1"],
            ["meteor_cannon_1"],
        )
    )
    state, _ = commit(state, {0: "cool_stick_1", 1: "bonehead_1", 2: "meteor_cannon_1"})
    state, events = act(state, 0, PlayScoreInversion("score_inversion_1"))
    assert events[1] == ScoresSwapped({0: 9, 2: 1})
    assert state.scores == {0: 9, 1: 4, 2: 1}


def test_two_inversions_apply_in_turn() -> None:
    state = table(
        deal(
            ["cool_stick_1", "score_inversion_1"],
            ["meteor_cannon_1", "score_inversion_2"],
        )
    )
    state, _ = commit(state, {0: "cool_stick_1", 1: "meteor_cannon_1"})
    state, _ = act(state, 0, PlayScoreInversion("score_inversion_1"))
    assert state.scores == {0: 9, 1: 1}
    state, _ = act(state, 1, PlayScoreInversion("score_inversion_2"))
    assert state.scores == {0: 1, 1: 9}


# -- Disaster Insurance and Redirect ------------------------------------------


def test_disaster_insurance_sends_the_disaster_to_the_bottom() -> None:
    state = table(
        deal(["cool_stick_1", "disaster_insurance_1"], ["meteor_cannon_1"]),
        disasters=["natural_1"],
    )
    state, _ = commit(state, {0: "cool_stick_1", 1: "meteor_cannon_1"})
    state, _ = pass_all(state)
    assert state.phase is Phase.DISASTER and state.taker == 0
    assert RULES.legal_actions(state, 0) == [
        PlayDisasterInsurance("disaster_insurance_1"),
        TakeDisaster(),
    ]
    state, events = act(state, 0, PlayDisasterInsurance("disaster_insurance_1"))
    assert events[:2] == [
        DisasterInsurancePlayed(0, "disaster_insurance_1"),
        DisasterSentToBottom("natural_1", BottomReason.INSURANCE),
    ]
    assert state.players[0].disasters == ()
    assert state.disaster_deck[-1] == "natural_1"
    assert state.round == 2


def test_disaster_redirect_gives_the_disaster_to_another_player() -> None:
    state = table(
        deal(
            ["cool_stick_1", "disaster_redirect_1"], ["meteor_cannon_1"], ["bonehead_1"]
        ),
        disasters=["natural_1"],
    )
    state, _ = commit(state, {0: "cool_stick_1", 1: "meteor_cannon_1", 2: "bonehead_1"})
    state, _ = pass_all(state)
    assert RULES.legal_actions(state, 0) == [
        PlayDisasterRedirect("disaster_redirect_1", 1),
        PlayDisasterRedirect("disaster_redirect_1", 2),
        TakeDisaster(),
    ]
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayDisasterRedirect("disaster_redirect_1", 0))
    assert error.value.reason == "TARGET_IS_YOU"
    state, events = act(state, 0, PlayDisasterRedirect("disaster_redirect_1", 1))
    assert events == [DisasterRedirectPlayed(0, "disaster_redirect_1", 1)]
    assert state.taker == 1 and RULES.active_seats(state) == {1}
    state, events = act(state, 1, TakeDisaster())
    assert events[0] == DisasterTaken(1, "natural_1")


def test_a_player_sent_a_disaster_may_insure_it() -> None:
    state = table(
        deal(
            ["cool_stick_1", "disaster_redirect_1"],
            ["meteor_cannon_1", "disaster_insurance_1"],
        ),
        disasters=["natural_1"],
    )
    state, _ = commit(state, {0: "cool_stick_1", 1: "meteor_cannon_1"})
    state, _ = pass_all(state)
    state, _ = act(state, 0, PlayDisasterRedirect("disaster_redirect_1", 1))
    assert PlayDisasterInsurance("disaster_insurance_1") in RULES.legal_actions(
        state, 1
    )
    state, events = act(state, 1, PlayDisasterInsurance("disaster_insurance_1"))
    assert DisasterSentToBottom("natural_1", BottomReason.INSURANCE) in events


def test_only_the_player_facing_the_disaster_decides_it() -> None:
    state = table(deal(["cool_stick_1"], ["meteor_cannon_1"]), disasters=["natural_1"])
    state, _ = commit(state, {0: "cool_stick_1", 1: "meteor_cannon_1"})
    state, _ = pass_all(state)
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 1, TakeDisaster())
    assert error.value.reason == "NOT_YOUR_DISASTER"
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayPointCard("bonehead_1"))
    assert error.value.reason == "WRONG_PHASE"
