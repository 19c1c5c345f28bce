"""The fold only folds: the end of the game and who is still tied in Sudden
Death are decided in ``decide`` and recorded as events (rules version 2),
and so are the inversions' swaps (rules version 3); rules versions 1 and 2,
for the games created under them, record what they did not and their folds
still work it out; stored schema-1 reveals are upcast."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from domain import registry
from domain.chance import Rng
from domain.happy_little_dinosaurs import RULES, RULES_V1, RULES_V2
from domain.happy_little_dinosaurs.model import (
    EscapeMoved,
    GameWon,
    MouthTrapSprung,
    PassInstant,
    Phase,
    PlayerEliminated,
    PlayScoreInversion,
    PointsCollected,
    ScoreInversionPlayed,
    ScoresSwapped,
    State,
    SuddenDeathCardsRevealed,
    TakeDisaster,
    sudden_death_cards_revealed_v1_to_v2,
)
from domain.happy_little_dinosaurs.rules import swapped
from domain.session import Session
from tests.gamekit import when
from tests.games.happy_little_dinosaurs.helpers import (
    commit,
    deal,
    inversion_to_play,
    pass_all,
    table,
)


def at(state: State, seat: int, **changes: object) -> State:
    players = list(state.players)
    players[seat] = dataclasses.replace(players[seat], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(state, players=tuple(players))


def near_fifty() -> State:
    """Seat 0 on 41 plays a 9 against seat 1's 1: it will collect 9."""
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state = at(state, 0, escape=41)
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    return state


def pass_all_under(rules: Any, state: State) -> tuple[State, list[Any]]:
    """Everyone passes in the scoring window until it closes, under ``rules``."""
    out: list[Any] = []
    while state.phase is Phase.SCORING:
        seat = min(rules.active_seats(state))
        events = rules.decide(state, seat, PassInstant(), Rng("pass", len(out)))
        for event in events:
            state = rules.evolve(state, event)
        out += events
    return state, out


def test_reaching_fifty_is_decided_and_recorded_as_game_won() -> None:
    state = near_fifty()

    state, events = pass_all_under(RULES, state)

    assert events[-2:] == [
        PointsCollected(points={0: 9}),
        GameWon(winners=(0,), result="escaped"),
    ]
    assert RULES.is_terminal(state)


def test_collecting_points_past_fifty_does_not_end_the_game_in_the_fold() -> None:
    # Given a collection that takes seat 0 to 50, folded alone:
    state = dataclasses.replace(near_fifty(), phase=Phase.SCORING)

    state = RULES.evolve(state, PointsCollected(points={0: 9}))

    assert state.players[0].escape == 50
    assert not RULES.is_terminal(state)
    assert RULES.evolve(state, GameWon((0,), "escaped")).phase is Phase.OVER


def test_the_last_dinosaur_standing_is_recorded_as_game_won() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state = at(state, 1, disasters=("emotional_1", "meteor_2"))
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)

    events = when(RULES, state, 1, TakeDisaster())

    eliminated = next(i for i, e in enumerate(events) if type(e) is PlayerEliminated)
    assert events[eliminated + 1 :] == [GameWon(winners=(0,), result="last_standing")]


def test_an_elimination_folded_alone_does_not_end_the_game() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])

    state = RULES.evolve(state, PlayerEliminated(seat=1, discarded=()))

    assert state.players[1].eliminated
    assert state.phase is Phase.ROUND_END and not RULES.is_terminal(state)


def test_the_sudden_death_reveal_names_the_lowest_and_the_fold_takes_it_as_is() -> None:
    state = table(
        deal(
            ["meteor_cannon_1"],
            ["cool_stick_1", "bonehead_1"],
            ["cool_stick_2", "bonehead_2"],
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
    # The fold applies the recorded fact; it does not compare the cards.
    told = SuddenDeathCardsRevealed({1: "bonehead_1", 2: "bonehead_2"}, lowest=(2,))
    assert RULES.evolve(state, told).sudden_death == (2,)


def test_a_schema_one_reveal_is_upcast_with_the_seats_of_the_lowest_card() -> None:
    body = {"cards": {"2": "bonehead_2", "0": "cool_stick_1", "1": "cool_stick_2"}}

    assert sudden_death_cards_revealed_v1_to_v2(body) == {**body, "lowest": [0, 1]}
    event = Session(RULES).decode_event("SuddenDeathCardsRevealed", body, 1)
    assert event == SuddenDeathCardsRevealed(
        {0: "cool_stick_1", 1: "cool_stick_2", 2: "bonehead_2"}, lowest=(0, 1)
    )


def test_rules_version_one_records_no_game_won_and_its_fold_ends_the_game() -> None:
    state = near_fifty()

    state, events = pass_all_under(RULES_V1, state)

    assert events[-1] == PointsCollected(points={0: 9})
    assert not any(isinstance(e, GameWon) for e in events)
    assert RULES_V1.is_terminal(state)
    assert RULES_V1.outcome(state).winners == (0,)
    assert RULES_V1.outcome(state).result == "escaped"


def test_rules_version_one_works_out_an_escape_move_past_fifty_in_its_fold() -> None:
    state = at(near_fifty(), 1, escape=49)

    state = RULES_V1.evolve(state, EscapeMoved(moves={0: 0, 1: 1}))

    assert RULES_V1.is_terminal(state)
    assert (state.winners, state.result) == ((1,), "escaped")


def test_an_inversion_is_decided_and_recorded_with_every_seat_that_moves() -> None:
    state = inversion_to_play()
    assert state.scores == {0: 3, 1: 3, 2: 9}

    events = when(RULES, state, 0, PlayScoreInversion("score_inversion_1"))

    # Both seats tied lowest move up, the highest moves down.
    assert events == [
        ScoreInversionPlayed(0, "score_inversion_1"),
        ScoresSwapped({0: 9, 1: 9, 2: 3}),
    ]


def test_the_fold_applies_a_recorded_swap_as_told_and_swaps_nothing_itself() -> None:
    state = inversion_to_play()

    played = RULES.evolve(state, ScoreInversionPlayed(0, "score_inversion_1"))
    sprung = RULES.evolve(state, MouthTrapSprung(2, "mouth_trap_1"))
    told = RULES.evolve(played, ScoresSwapped({1: 9, 2: 3}))

    assert played.scores == sprung.scores == {0: 3, 1: 3, 2: 9}
    assert told.scores == {0: 3, 1: 9, 2: 3}


def test_everyone_tied_is_recorded_as_a_swap_that_moves_nobody() -> None:
    assert swapped({0: 4, 1: 4}) == ScoresSwapped({})
    assert swapped({0: 4, 1: 6, 2: 5}) == ScoresSwapped({0: 6, 1: 4})


@pytest.mark.parametrize("rules", [RULES_V2, RULES_V1], ids=["v2", "v1"])
def test_older_versions_record_no_swap_and_their_fold_swaps(rules: Any) -> None:
    state = inversion_to_play()

    events = rules.decide(state, 0, PlayScoreInversion("score_inversion_1"), Rng("", 0))
    folded = rules.evolve(state, events[0])

    assert events == [ScoreInversionPlayed(0, "score_inversion_1")]
    assert folded.scores == {0: 9, 1: 9, 2: 3}
    # A recorded swap folded after it (as deciding does) changes nothing more.
    assert rules.evolve(folded, ScoresSwapped({0: 9, 1: 9, 2: 3})) == folded


def test_the_versions_are_registered_and_the_current_one_is_three() -> None:
    assert [r.rules_version for r in (RULES, RULES_V2, RULES_V1)] == ["3", "2", "1"]
    assert RULES_V1.event_types == RULES_V2.event_types == RULES.event_types
    for rules in (RULES, RULES_V2, RULES_V1):
        assert registry.rules_for(RULES.game_type, rules.rules_version) is rules
