"""How long the bots think about a move, by game and level.

From the decisions of heuristic games (each seat to act with a choice),
every bot level chooses the move as the service's bot runner asks it to:
from the seat's view, with the service's time budget per move
(``STRATA_BOT_MOVE_MS``, :data:`~service.limits.DEFAULT_BOT_MOVE_MS`),
which stops the strong bot's search. The figures are the time each choice
took, p50 and p99 in milliseconds, beside the commands' figures.
"""

from __future__ import annotations

import time
from typing import Any

from bench.store import percentile
from domain import bots, registry
from domain.chance import Rng
from domain.session import Session, Status
from service.limits import DEFAULT_BOT_MOVE_MS, deadline_after


def _decisions(game_type: str, most: int) -> list[tuple[Any, int, Any]]:
    """Up to ``most`` (rules, seat, game state) where a seat chooses, from
    heuristic games of up to four seats (Dinosaurs Extinct?'s one choice,
    a Dino Switch, needs a few Dinos on the track)."""
    rules = registry.rules_for(game_type)
    heuristic = bots.bot_for(game_type, bots.HEURISTIC).play
    session = Session(rules)
    found: list[tuple[Any, int, Any]] = []
    game = 0
    while len(found) < most and game < 50:
        seed = f"think/{game}"
        game += 1
        players = min(rules.max_players, 4)
        state = session.fold([session.create(players, seed)])
        for seat in range(players):
            state = session.fold(session.join(state, f"p{seat}", "", seat), state)
        state = session.fold(session.start(state, Rng(seed, state.version)), state)
        while state.status is not Status.FINISHED and len(found) < most:
            seat = min(session.active_seats(state))
            if len(rules.legal_actions(state.game, seat)) > 1:
                found.append((rules, seat, state.game))
            rng = bots.bot_rng(seed, seat, state.version)
            move = bots.bot_move(rules, state.game, seat, heuristic, rng)
            _, state = session.advance(state, seat, move, Rng(seed, state.version))
    return found


def think_times(per_game: int, move_ms: float = DEFAULT_BOT_MOVE_MS) -> dict[str, Any]:
    """p50/p99 (ms) of each level's choice over ``per_game`` decisions of
    every game, and the worst of the strong bot's over all games."""
    figures: dict[str, Any] = {"move_ms": move_ms, "decisions_per_game": per_game}
    worst: list[float] = []
    for game_type in registry.game_types():
        decisions = _decisions(game_type, per_game)
        by_level: dict[str, Any] = {}
        if not decisions:
            continue
        for level in bots.LEVELS:
            took = []
            for n, (rules, seat, state) in enumerate(decisions):
                started = time.perf_counter()
                bot = bots.bot_for(
                    game_type, level, out_of_time=deadline_after(move_ms)
                ).play
                bots.bot_move(rules, state, seat, bot, Rng("think", n))
                took.append((time.perf_counter() - started) * 1000)
            by_level[level] = {
                "p50_ms": round(percentile(took, 0.5), 2),
                "p99_ms": round(percentile(took, 0.99), 2),
            }
            if level == bots.STRONG:
                worst += took
        figures[game_type] = by_level
    figures["strong_p99_ms"] = round(percentile(worst, 0.99), 2)
    return figures
