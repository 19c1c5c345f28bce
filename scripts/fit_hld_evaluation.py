"""Fit the strong bot's judge of a Happy Little Dinosaurs duel.

    .venv/bin/python scripts/fit_hld_evaluation.py --games 20000

Plays two-player games of the heuristic bot (who acts first in a
simultaneous window drawn for every decision), takes every round's start
(the Disaster face up, no card committed) from each seat's side, labelled
1 when that seat won the game (½ for a shared win) and 0 when it lost,
and fits a logistic regression (Newton's method, a small L2 penalty) of
the label on :func:`domain.happy_little_dinosaurs.search.duel_features`.
It prints the held-out log loss (every fifth game is held out) and the
weights to paste as ``DUEL`` in ``domain/happy_little_dinosaurs/search.py``.
Needs numpy (the ``lab`` extra brings it with matplotlib).
"""

from __future__ import annotations

import argparse
import multiprocessing

import numpy as np

from domain import bots
from domain.chance import Rng
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.search import SEARCH, duel_features
from domain.session import Session, Status


def rows(seed: str) -> list[tuple[list[float], float]]:
    """(features, label) at every round start of one heuristic game."""
    heuristic = RULES.bots[bots.HEURISTIC]
    session = Session(RULES)
    state = session.fold([session.create(2, seed)])
    for seat in range(2):
        state = session.fold(session.join(state, f"p{seat}", "", seat), state)
    state = session.fold(session.start(state, Rng(seed, state.version)), state)
    starts = []
    while state.status is not Status.FINISHED:
        if SEARCH.resting(state.game) and (
            not starts or starts[-1].round != state.game.round
        ):
            starts.append(state.game)
        seat = Rng(f"order/{seed}", state.version).choice(
            sorted(session.active_seats(state))
        )
        rng = bots.bot_rng(seed, seat, state.version)
        command = bots.bot_move(RULES, state.game, seat, heuristic, rng)
        _, state = session.advance(state, seat, command, Rng(seed, state.version))
    winners = state.outcome.winners if state.outcome else ()
    return [
        (
            duel_features(start, seat, 1 - seat),
            1.0 / len(winners) if seat in winners else 0.0,
        )
        for start in starts
        for seat in (0, 1)
    ]


def fit(x: np.ndarray, y: np.ndarray, penalty: float = 1e-3) -> np.ndarray:
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ w))
        gradient = x.T @ (p - y) / len(y) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x / len(y)
        w -= np.linalg.solve(hessian + penalty * np.eye(len(w)), gradient)
        if np.abs(gradient).max() < 1e-10:
            break
    return w


def log_loss(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    p = np.clip(1 / (1 + np.exp(-x @ w)), 1e-9, 1 - 1e-9)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--seed", default="duel")
    parser.add_argument("--processes", type=int, default=multiprocessing.cpu_count())
    args = parser.parse_args()
    seeds = [f"{args.seed}/{i}" for i in range(args.games)]
    with multiprocessing.Pool(args.processes) as pool:
        games = pool.map(rows, seeds, chunksize=50)
    held_out = np.array([i % 5 == 0 for i, g in enumerate(games) for _ in g])
    x = np.array([f for g in games for f, _ in g])
    y = np.array([label for g in games for _, label in g])
    w = fit(x[~held_out], y[~held_out])
    print(
        f"{len(y)} positions from {args.games} games; held-out log loss "
        f"{log_loss(x[held_out], y[held_out], w):.4f} "
        f"(a coin: {np.log(2):.4f})"
    )
    w = fit(x, y)
    print("DUEL: tuple[float, ...] = (")
    for weight in w:
        print(f"    {weight:.4f},")
    print(")")


if __name__ == "__main__":
    main()
