"""A seat that left never wins (rules version 3): its collection stays and
scores, its stand-in takes every packet, and it ranks below every seat still
in. Given the last turns of a game, when a seat leaves (``Session.leave``,
what ``LeaveGame`` and a forfeit on time both decide) and the game is played
out, then ``GameScored`` names the highest total among the seats still in;
rules version 2, for its games, gave a leader's win to nobody."""

from __future__ import annotations

from typing import Any

import pytest

from domain.chance import Rng
from domain.cubosaurs import RULES, RULES_V2
from domain.cubosaurs.model import (
    GameScored,
    PacketTaken,
    PlayerPosition,
    PlayerWithdrew,
    Position,
    Scenario,
    TakePacket,
    TurnEnded,
)
from domain.session import GameFinished, SeatLeft, Session, SessionState
from tests.gamekit import new_game


def last_round(*scores: int) -> Position:
    """Round 2 of 2 with three seats, seat 0 to act with a packet of two,
    two cards in the deck; the seats' round 1 totals are ``scores``."""
    collections = (
        (1, 29, 30, 8, 9, 22, 15, 36),
        (10, 12, 13, 23, 24, 43, 2, 50),
        (0, 4, 5, 6, 7, 11, 14, 17, 18, 19),
    )
    return Position(
        round=2,
        turn=0,
        players=tuple(
            PlayerPosition(collection=c, scores=(s,))
            for c, s in zip(collections, scores, strict=True)
        ),
        packet=(31, 44),
        deck=(3, 16),
    )


def start(rules: Any, position: Position) -> SessionState[Any]:
    state, _ = new_game(rules, 3, "leaving", scenario=Scenario(position=position))
    return state


def play_out(
    rules: Any, state: SessionState[Any]
) -> tuple[SessionState[Any], list[Any]]:
    """The seats still in take every packet too, to the end of the game."""
    session = Session(rules)
    out: list[Any] = []
    while state.outcome is None:
        seat = min(session.active_seats(state))
        events = session.play(state, seat, TakePacket(), Rng("out", state.version))
        state = session.fold(events, state)
        out += events
    return state, out


def leave(rules: Any, state: SessionState[Any], seat: int) -> tuple[Any, list[Any]]:
    session = Session(rules)
    events = session.leave(state, seat, "", Rng("leaving", state.version))
    return session.fold(events, state), events


def test_a_leaver_with_the_highest_total_ranks_below_the_seats_still_in() -> None:
    state = start(RULES, last_round(12, 15, 60))

    state, left = leave(RULES, state, 2)
    state, events = play_out(RULES, state)

    assert left == [SeatLeft(2), PlayerWithdrew(2)]
    scored = events[-2]
    assert isinstance(scored, GameScored)
    assert scored.totals[2] > max(scored.totals[:2])
    best = max(scored.totals[:2])
    winners = tuple(s for s in (0, 1) if scored.totals[s] == best)
    assert (scored.winners, events[-1]) == (
        winners,
        GameFinished(winners, scored.result),
    )
    assert state.outcome is not None and state.outcome.winners == winners


def test_the_seats_still_in_tied_highest_share_the_win_over_a_leader_who_left() -> None:
    # Round 2 plays the same whatever round 1 scored: seat 1's round 1
    # total is set to tie seat 0 at the end.
    probe, _ = leave(RULES, start(RULES, last_round(0, 0, 60)), 2)
    round_two = play_out(RULES, probe)[1][-2].totals
    tie = round_two[0] - round_two[1]
    state, _ = leave(RULES, start(RULES, last_round(0, tie, 60)), 2)

    state, events = play_out(RULES, state)

    scored = events[-2]
    assert scored.totals[0] == scored.totals[1] < scored.totals[2]
    assert (scored.winners, scored.result) == ((0, 1), "shared_highest_total")
    assert state.outcome is not None and state.outcome.winners == (0, 1)


def test_rules_version_two_gave_a_leaders_win_to_nobody() -> None:
    state = start(RULES_V2, last_round(12, 15, 60))

    state, left = leave(RULES_V2, state, 2)
    state, events = play_out(RULES_V2, state)

    assert left == [SeatLeft(2)]
    scored = events[-2]
    assert isinstance(scored, GameScored)
    assert (scored.winners, scored.result) == ((2,), "highest_total")
    assert events[-1] == GameFinished((), "highest_total")


@pytest.mark.parametrize("rules", [RULES, RULES_V2], ids=["v3", "v2"])
def test_a_leaver_behind_changes_no_winner(rules: Any) -> None:
    state = start(rules, last_round(60, 15, 12))

    state, _ = leave(rules, state, 2)
    state, events = play_out(rules, state)

    assert events[-2].winners == (0,) and events[-1] == GameFinished(
        (0,), "highest_total"
    )


def test_the_stand_in_of_a_seat_that_left_takes_the_packet_on_its_turn() -> None:
    position = last_round(12, 15, 60)
    state = start(RULES, Position(**{**vars(position), "turn": 2}))

    _, events = leave(RULES, state, 2)

    assert events[:3] == [SeatLeft(2), PlayerWithdrew(2), PacketTaken(2, (31, 44))]
    assert TurnEnded(2, 1) in events  # round 2 passes to seat - 1
