"""A seat that left never wins (rules version 3): its dinosaur races on for
nobody, ranked below every seat still in. Given a position, when a seat
leaves (``Session.leave``, what ``LeaveGame`` and a forfeit on time both
decide) and the round is played, then the game's own ``GameWon`` names the
best seat still in; rules version 2, for its games, gave that win to
nobody."""

from __future__ import annotations

import dataclasses
from typing import Any

from domain.chance import Rng
from domain.happy_little_dinosaurs import RULES, RULES_V2
from domain.happy_little_dinosaurs.model import (
    DisasterFaced,
    DisasterTaken,
    EscapeMoved,
    GameWon,
    PassInstant,
    Phase,
    PlayerEliminated,
    PlayerPosition,
    PlayerWithdrew,
    PlayPointCard,
    PointCardCommitted,
    PointsCollected,
    Position,
    Scenario,
    State,
    TakeDisaster,
)
from domain.session import (
    OPPONENTS_LEFT,
    GameFinished,
    SeatLeft,
    Session,
    SessionState,
)
from tests.gamekit import new_game
from tests.games.happy_little_dinosaurs.test_positions import seat

Rules = Any


def start(rules: Rules, *players: PlayerPosition, disaster: str) -> SessionState[State]:
    """Three dinosaurs (Nervous Rex, Bad Luck Bronto, Cry Ceratops) at a
    position, round 7, whose Disaster is ``disaster``."""
    position = Position(
        players=players,
        rounds_played=6,
        disaster_deck=(disaster,),
        shuffle_rest=True,
    )
    state, _ = new_game(
        rules, len(players), "leaving", scenario=Scenario(position=position)
    )
    return state


def leave(rules: Rules, state: SessionState[State], seat: int) -> tuple[Any, list[Any]]:
    session = Session(rules)
    events = session.leave(state, seat, "", Rng("leaving", state.version))
    return session.fold(events, state), events


def play(
    rules: Rules, state: SessionState[State], seat: int, command: Any
) -> tuple[SessionState[State], list[Any]]:
    session = Session(rules)
    events = session.play(state, seat, command, Rng("leaving", state.version))
    return session.fold(events, state), events


def play_round(
    rules: Rules, state: SessionState[State], cards: dict[int, str]
) -> tuple[SessionState[State], list[Any]]:
    """The seats still in commit ``cards`` and pass every Instant window;
    the seat facing the Disaster takes it. The events of it all."""
    out: list[Any] = []
    for who, card in cards.items():
        state, events = play(rules, state, who, PlayPointCard(card))
        out += events
    while state.outcome is None and state.game.phase in (Phase.SCORING, Phase.DISASTER):
        who = min(Session(rules).active_seats(state))
        command = PassInstant() if state.game.phase is Phase.SCORING else TakeDisaster()
        state, events = play(rules, state, who, command)
        out += events
    return state, out


#: Plain Point cards (no effect) for the positions' hands.
LOW_FIRST = ("cool_stick_1", "handy_pan_1", "bonehead_1", "iced_ptea_1")
HIGH = ("meteor_cannon_1", *LOW_FIRST)
MIDDLE = ("handy_pan_3", "grave_maker_3", "bonehead_3", "iced_ptea_3")
LOWEST = ("cool_stick_2", "handy_pan_2", "grave_maker_2", "bonehead_2", "iced_ptea_2")


def leaver_on_49() -> tuple[PlayerPosition, ...]:
    """Seat 2 is one Natural Disaster from escaping: its passive stand-in
    plays its first card, a 1, and takes the Disaster; seat 0 on 30 and
    seat 1 on 20 cannot reach 50 this round."""
    return (
        seat(HIGH, (), 30),
        seat((*MIDDLE, "run_home_bat_3"), (), 20),
        seat(LOWEST, ["natural_1"], 49),
    )


def seat_2_leaves(
    rules: Rules,
    players: tuple[PlayerPosition, ...],
    disaster: str,
    cards: dict[int, str],
) -> tuple[SessionState[State], list[Any], list[Any]]:
    """From a position whose Disaster is ``disaster``, seat 2 leaves and the
    seats still in play the round with ``cards``: the state, the leave's
    events and the round's."""
    state, left = leave(rules, start(rules, *players, disaster=disaster), 2)
    state, events = play_round(rules, state, cards)
    return state, left, events


def test_a_leavers_dinosaur_reaching_fifty_ends_the_race_won_by_the_seat_in_ahead() -> (
    None
):
    state, left, events = seat_2_leaves(
        RULES, leaver_on_49(), "natural_2", {0: "meteor_cannon_1", 1: "handy_pan_3"}
    )

    assert left == [
        SeatLeft(2),
        PlayerWithdrew(2),
        PointCardCommitted(2, "cool_stick_2"),  # its stand-in's first card
    ]
    assert state.game.withdrawn == (2,)
    assert PointsCollected({0: 9}) in events and DisasterFaced(2) in events
    # Seat 2 moves to 51, seat 0 collected 9 to 39, seat 1 stays on 20.
    assert events[-3:] == [
        EscapeMoved({0: 0, 1: 0, 2: 2}),
        GameWon((0,), "leaver_escaped"),
        GameFinished((0,), "leaver_escaped"),
    ]
    assert [p.escape for p in state.game.players] == [39, 20, 51]


def test_rules_version_two_gave_a_leavers_escape_to_nobody() -> None:
    _, left, events = seat_2_leaves(
        RULES_V2, leaver_on_49(), "natural_2", {0: "meteor_cannon_1", 1: "handy_pan_3"}
    )

    assert left == [SeatLeft(2), PointCardCommitted(2, "cool_stick_2")]
    assert events[-2:] == [GameWon((2,), "escaped"), GameFinished((), "escaped")]


def one_disaster_from_elimination() -> tuple[PlayerPosition, ...]:
    """Seat 1 holds a Natural and a Predatory Disaster: an Emotional one
    eliminates it. Seat 2's first card (a 4, Cry Ceratops +1 against an
    Emotional Disaster) keeps it above seat 1's 1."""
    return (
        seat(HIGH),
        seat(("cool_stick_3", *MIDDLE), ["natural_1", "predatory_1"]),
        seat(("bonehead_2", *LOWEST[:3], "iced_ptea_2")),
    )


def test_the_last_dinosaur_of_the_seats_in_stands_alone_beside_a_leavers() -> None:
    state, _, events = seat_2_leaves(
        RULES,
        one_disaster_from_elimination(),
        "emotional_1",
        {0: "meteor_cannon_1", 1: "cool_stick_3"},
    )

    assert events[-4:] == [
        DisasterTaken(1, "emotional_1"),
        PlayerEliminated(
            1, ("handy_pan_3", "grave_maker_3", "bonehead_3", "iced_ptea_3")
        ),
        GameWon((0,), "last_standing"),
        GameFinished((0,), "last_standing"),
    ]
    # Seat 2's dinosaur is still in the race, for nobody.
    assert not state.game.players[2].eliminated


def test_rules_version_two_played_on_with_the_leavers_dinosaur() -> None:
    state, _, events = seat_2_leaves(
        RULES_V2,
        one_disaster_from_elimination(),
        "emotional_1",
        {0: "meteor_cannon_1", 1: "cool_stick_3"},
    )

    assert any(isinstance(e, PlayerEliminated) for e in events)
    assert not any(isinstance(e, GameWon | GameFinished) for e in events)
    assert state.outcome is None and state.game.round == 8


def test_leaving_a_single_living_dinosaur_among_the_seats_in_ends_the_game() -> None:
    # Seat 1 was eliminated (it stayed: it is still in); seat 2 leaves.
    players = one_disaster_from_elimination()
    eliminated = seat((), ["natural_1", "natural_2", "natural_3"], 12, eliminated=True)
    state = start(RULES, players[0], eliminated, players[2], disaster="emotional_1")

    state, events = leave(RULES, state, 2)

    assert events == [
        SeatLeft(2),
        PlayerWithdrew(2),
        GameWon((0,), "last_standing"),
        GameFinished((0,), "last_standing"),
    ]
    assert RULES.is_terminal(state.game)


def test_with_one_seat_in_the_lifecycle_ends_it_and_the_rules_decide_nothing() -> None:
    state, _ = new_game(RULES, 2, "two")

    state, events = leave(RULES, state, 1)

    assert events == [
        SeatLeft(1),
        PlayerWithdrew(1),
        GameFinished((0,), OPPONENTS_LEFT),
    ]


def test_a_withdrawal_folds_into_the_state_and_changes_nothing_else() -> None:
    state, _ = new_game(RULES, 3, "fold")

    after = RULES.evolve(state.game, PlayerWithdrew(1))

    assert after == dataclasses.replace(state.game, withdrawn=(1,))
