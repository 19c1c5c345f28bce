"""Seats leaving started games, in every game: random play where random seats
leave (out, or handed to a bot) still reaches the end, replays from its
events and decides again to the very same events; the lifecycle's rules of
leaving (no win for a leaver, the last person, the last seat in), and the
competitive games' own rules giving a leaver none either."""

from __future__ import annotations

from typing import Any

import pytest

from domain import registry
from domain.chance import Rng
from domain.errors import NotYourSeat, RuleViolation
from domain.rules import Viewer
from domain.session import (
    ABANDONED,
    OPPONENTS_LEFT,
    GameFinished,
    SeatLeft,
    Session,
    SessionState,
)
from tests.gamekit import new_game

GAME_TYPES = registry.game_types()

# A step of a game: a command of a seat, or a seat leaving (bot kind or "").
Step = tuple[str, int, Any]


def play_with_leavers(
    game_type: str, players: int, seed: str, leave_chance: float = 0.02
) -> tuple[SessionState[Any], list[Any], list[Step]]:
    """A random game in which, before each move, a random seat may leave
    (half of the time handed to a random bot, which then plays like the
    others here: uniformly among its legal actions)."""
    rules = registry.rules_for(game_type)
    session = Session(rules)
    state, events = new_game(rules, players, seed)
    chooser = Rng(f"leave/{seed}", -1)
    steps: list[Step] = []
    for _ in range(20_000):
        if rules.is_terminal(state.game) or state.outcome is not None:
            return state, events, steps
        people = list(state.people_in)
        if people and chooser.roll(1000) < leave_chance * 1000:
            seat = chooser.choice(people)
            bot = "random" if chooser.roll(2) == 2 else ""
            new = session.leave(state, seat, bot, Rng(seed, state.version))
            steps.append(("leave", seat, bot))
        else:
            active = sorted(session.active_seats(state))
            assert active, f"nobody can act in a game not over ({seed})"
            seat = chooser.choice(active)
            actions = session.legal_actions(state, seat)
            assert actions, f"seat {seat} is active but has no legal action"
            command = chooser.choice(actions)
            new = session.play(state, seat, command, Rng(seed, state.version))
            steps.append(("play", seat, command))
        assert new
        events += new
        state = session.fold(new, state)
    raise AssertionError(f"game did not end ({seed})")


def replay(game_type: str, players: int, seed: str, steps: list[Step]) -> list[Any]:
    rules = registry.rules_for(game_type)
    session = Session(rules)
    state, events = new_game(rules, players, seed)
    for kind, seat, arg in steps:
        rng = Rng(seed, state.version)
        if kind == "leave":
            new = session.leave(state, seat, arg, rng)
        else:
            new = session.play(state, seat, arg, rng)
        events += new
        state = session.fold(new, state)
    return events


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_random_games_with_seats_leaving_end_and_replay_identically(
    game_type: str,
) -> None:
    rules = registry.rules_for(game_type)
    results: dict[str, int] = {}
    with_leaves = 0
    for n in range(60):
        players = rules.min_players + n % (rules.max_players - rules.min_players + 1)
        seed = f"leaving-{game_type}-{n}"
        state, events, steps = play_with_leavers(game_type, players, seed, 0.05)
        with_leaves += any(isinstance(e, SeatLeft) for e in events)
        assert state.outcome is not None
        # No seat that left shares the win.
        assert not set(state.outcome.winners) & set(state.left)
        if rules.is_terminal(state.game) and not rules.cooperative:
            # The competitive games' own rules rank a seat that left below
            # the seats still in: their end names a winner still in, and
            # the lifecycle has nobody to drop (rules version 3 of Happy
            # Little Dinosaurs and Cubosaurs; Dinosaurs Extinct? takes the
            # Dino of a seat that left off the track).
            own = rules.outcome(state.game)
            assert own.winners and own == state.outcome, (seed, own, state.left)
        # The events fold to the same state; deciding again gives them all.
        assert Session(rules).fold(events) == state
        assert replay(game_type, players, seed, steps) == events
        results[state.outcome.result] = results.get(state.outcome.result, 0) + 1
    # Many games had seats leave, and some ended because of it.
    assert with_leaves >= 20
    assert set(results) & {ABANDONED, OPPONENTS_LEFT}


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_the_last_person_leaving_abandons_the_game(game_type: str) -> None:
    rules = registry.rules_for(game_type)
    session = Session(rules)
    state, _ = new_game(rules, rules.min_players, "abandon")
    # Every seat but the last handed to a bot, then the last person leaves.
    for seat in range(rules.min_players):
        last = seat == rules.min_players - 1
        new = session.leave(state, seat, "" if last else "random")
        state = session.fold(new, state)
    assert state.outcome is not None
    assert state.outcome.result == ABANDONED
    assert state.outcome.winners == ()
    assert isinstance(new[-1], GameFinished)


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_a_seat_that_left_cannot_act_or_leave_again(game_type: str) -> None:
    rules = registry.rules_for(game_type)
    session = Session(rules)
    state, _ = new_game(rules, 3, "gone")
    new = session.leave(state, 1)
    assert new[0] == SeatLeft(1, "")
    state = session.fold(new, state)
    assert 1 not in session.active_seats(state)
    assert session.legal_actions(state, 1) == []
    with pytest.raises(NotYourSeat) as err:
        session.play(state, 1, object(), Rng("x", 0))
    assert err.value.reason == "SEAT_LEFT"
    with pytest.raises(RuleViolation) as left:
        session.leave(state, 1)
    assert left.value.reason == "SEAT_LEFT"


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_a_seat_handed_to_a_bot_plays_on_as_a_bot(game_type: str) -> None:
    rules = registry.rules_for(game_type)
    session = Session(rules)
    state, _ = new_game(rules, 2, "to-bot")
    new = session.leave(state, 0, "random")
    assert new == [SeatLeft(0, "random")]
    state = session.fold(new, state)
    info = state.seats[0]
    assert info is not None and info.bot == "random" and info.token_hash == ""
    assert state.left == ()
    assert state.outcome is None


@pytest.mark.parametrize(
    "game_type", [t for t in GAME_TYPES if not registry.rules_for(t).cooperative]
)
def test_a_competitive_game_every_other_seat_left_is_won_by_the_last_seat_in(
    game_type: str,
) -> None:
    rules = registry.rules_for(game_type)
    session = Session(rules)
    state, _ = new_game(rules, 2, "last-in")
    new = session.leave(state, 1)
    assert new[-1] == GameFinished((0,), OPPONENTS_LEFT)


def test_games_with_leavers_show_no_player_another_players_secret() -> None:
    from types import SimpleNamespace

    from tests.games.escaping_extinction.test_random_play import (
        assert_no_secret_leaks,
    )
    from tests.games.happy_little_dinosaurs.test_random_play import assert_no_leak

    with_leaves = 0
    for n in range(12):
        players = 2 + n % 3
        _, events, steps = play_with_leavers(
            "happy_little_dinosaurs", players, f"leak-{n}", 0.1
        )
        with_leaves += any(kind == "leave" for kind, _, _ in steps)
        assert_no_leak(SimpleNamespace(events=events))
        state, events, _ = play_with_leavers(
            "escaping_extinction", players, f"leak-{n}", 0.01
        )
        assert_no_secret_leaks(state.game, events)
    assert with_leaves >= 6
    # The lifecycle's own events of leaving carry nothing secret.
    session = Session(registry.rules_for("cubosaurs"))
    for viewer in (Viewer.spectator(), Viewer.player(0)):
        assert session.redact(SeatLeft(1, "bot"), viewer) == SeatLeft(1, "bot")
