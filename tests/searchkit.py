"""The strong bot's blindness, for every game's tests.

:func:`assert_search_is_blind` takes positions of real games (heuristic
play, every seat to act with a choice) and, for each, a second state that
differs from it only in what the seat cannot see (the game's own
``scramble``, written in its test, independent of the game's
``determinise``). The seat's view must be the same in both, the states
must differ (so a secret really moved), and the strong bot must make the
same move in both for the same random stream: it never reads a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from domain import bots, search
from domain.chance import Rng
from domain.rules import GameRules, Viewer
from domain.session import Session, Status

Rules = GameRules[Any, Any, Any, Any]
#: A search small enough for tests: a few short playouts (blindness does
#: not depend on their length).
SMALL = search.Budget(samples=2, candidates=3, horizon=6)


def decisions(rules: Rules, players: int, seed: str) -> Iterator[tuple[Any, int]]:
    """(game state, seat) at every decision of a heuristic game in which the
    seat has more than one legal action."""
    heuristic = bots.bot_for(rules.game_type, bots.HEURISTIC).play
    session = Session(rules)
    state = session.fold([session.create(players, seed)])
    for seat in range(players):
        state = session.fold(session.join(state, f"p{seat}", "", seat), state)
    state = session.fold(session.start(state, Rng(seed, state.version)), state)
    while state.status is not Status.FINISHED:
        seat = min(session.active_seats(state))
        if len(rules.legal_actions(state.game, seat)) > 1:
            yield state.game, seat
        rng = bots.bot_rng(seed, seat, state.version)
        command = bots.bot_move(rules, state.game, seat, heuristic, rng)
        _, state = session.advance(state, seat, command, Rng(seed, state.version))


def assert_search_is_blind(
    rules: Rules,
    players: int,
    scramble: Callable[[Any, int], Any],
    seeds: int = 2,
    every: int = 3,
    most: int = 6,
) -> int:
    """Hold the strong bot to its seat's view at every ``every``-th decision
    of ``seeds`` heuristic games; ``scramble(state, seat)`` is the other
    state (or None when nothing there is hidden from the seat). Returns
    the positions checked (the caller asserts there were some)."""
    heuristic = rules.bots[bots.HEURISTIC]
    adapter = rules.search
    assert adapter is not None
    checked = 0
    for s in range(seeds):
        in_game = 0
        for n, (state, seat) in enumerate(decisions(rules, players, f"blind{s}")):
            if n % every or in_game == most:
                continue
            other = scramble(state, seat)
            if other is None:
                continue
            assert other != state
            viewer = Viewer.player(seat)
            assert rules.view(other, viewer) == rules.view(state, viewer)
            assert adapter.determinise(other, seat, Rng("d", n)) == (
                adapter.determinise(state, seat, Rng("d", n))
            )
            legal = tuple(rules.legal_actions(state, seat))
            moves = [
                search.think(rules, s_, seat, legal, heuristic, Rng("c", n), SMALL)[0]
                for s_ in (state, other)
            ]
            assert moves[0] == moves[1]
            checked += 1
            in_game += 1
    return checked
