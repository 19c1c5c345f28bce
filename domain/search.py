"""The strong bot: determinised search from a seat's own view.

A seat does not know the other hands, the decks' order or the cards played
face down. The strong bot samples what they could be (the game's
:meth:`~domain.rules.Search.determinise`, which reads the state only
through what the seat sees), and in each sample plays every candidate move
out with the game's own ``decide``/``evolve`` and legal actions: every seat
then plays its heuristic (now and then a random move), whoever may act in a
simultaneous window acting in a random order, until the game ends or the
game's ``horizon`` is reached or the game says the position is
``resting`` (such as the start of the next round), where the game's
``evaluate`` judges the position. Each sample scores every candidate (a
win is 1, a loss 0) under the same luck, and so votes on each candidate
against the heuristic's own choice: by how much it did better or worse
there. The heuristic's choice stands unless another move beats it on
average by more than :data:`CONFIDENCE` standard errors of those
differences (the best such move then); so noise in a small search does
not make it play worse than the heuristic it starts from. The chance of a
playout comes from the bot's own generator, never from the game's seed
(which would foretell the dice).

The search is pure: the caller bounds it by samples (:class:`Budget`) and
may stop it sooner with ``out_of_time`` (the service's time budget per
move), asked before every playout: a sample cut short is dropped, so the
samples counted decide the same move again without a clock. It always
finishes one sample. With the same generator and no
``out_of_time``, two states that differ only in what the seat cannot see
give the same move (each game's tests hold it to that).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from domain.chance import Rng
from domain.rules import Bot, GameRules, Search, Viewer

Rules = GameRules[Any, Any, Any, Any]

#: How often a playout move is random instead of the heuristic's.
EXPLORE = 0.05
#: How many standard errors a move must beat the heuristic's choice by.
CONFIDENCE = 1.0


@dataclass(frozen=True)
class Budget:
    """How much search one move may take: ``samples`` determinisations at
    most, each scoring at most ``candidates`` moves (the heuristic's own
    choice and a random few of the others), each playout at most
    ``horizon`` moves long (None: the game's own horizon)."""

    samples: int = 12
    candidates: int = 8
    horizon: int | None = None


#: The budget the strong bot searches with unless told otherwise.
DEFAULT_BUDGET = Budget()


def never() -> bool:
    """An ``out_of_time`` that never stops the search."""
    return False


def think(
    rules: Rules,
    state: Any,
    seat: int,
    legal: Sequence[Any],
    heuristic: Bot,
    rng: Rng,
    budget: Budget = DEFAULT_BUDGET,
    out_of_time: Callable[[], bool] = never,
) -> tuple[Any, int]:
    """The strong bot's move for ``seat`` among ``legal`` (not empty), and
    the samples it searched: the same budget with that many samples and no
    ``out_of_time`` decides the same move again (a timeout's move is
    verified so).

    ``state`` is read only through ``rules.view`` for the seat and the
    game's ``determinise``."""
    search = rules.search
    if search is None:
        raise ValueError(f"{rules.game_type} has no search adapter")
    view = rules.view(state, Viewer.player(seat))
    first = heuristic(view, legal, rng)
    if len(legal) == 1:
        return legal[0], 0
    draw = random.Random(rng.below(2**63))
    candidates = _candidates(legal, first, budget.candidates, draw)
    horizon = search.horizon if budget.horizon is None else budget.horizon
    # Per candidate, the sum and the sum of squares of its score minus the
    # heuristic choice's, sample by sample.
    gain = [0.0] * len(candidates)
    square = [0.0] * len(candidates)
    samples = 0
    for sample in range(max(budget.samples, 1)):
        world = search.determinise(
            state, seat, Rng(f"sample/{draw.getrandbits(64)}", 0)
        )
        # Every candidate meets the same luck in a sample (the same dice,
        # draws and playout choices as far as they go alike), so their
        # scores differ by the move more than by chance.
        luck = draw.getrandbits(64)
        scores = []
        for command in candidates:
            if sample and out_of_time():
                break  # a sample cut short is not counted
            scores.append(
                _playout(rules, search, world, seat, command, heuristic, luck, horizon)
            )
        if len(scores) < len(candidates):
            break
        samples += 1
        for i, score in enumerate(scores):
            gain[i] += score - scores[0]
            square[i] += (score - scores[0]) ** 2
    return candidates[_better(gain, square, samples)], samples


def _better(gain: Sequence[float], square: Sequence[float], samples: int) -> int:
    """The candidate that beats the first (the heuristic's) by more than
    :data:`CONFIDENCE` standard errors, the most on average; else 0."""
    if samples < 2:
        return 0
    best, best_mean = 0, 0.0
    for i in range(1, len(gain)):
        mean = gain[i] / samples
        variance = max(square[i] / samples - mean * mean, 0.0) * samples / (samples - 1)
        error = math.sqrt(variance / samples)
        if mean > CONFIDENCE * error and mean > best_mean:
            best, best_mean = i, mean
    return best


def _candidates(
    legal: Sequence[Any], first: Any, most: int, draw: random.Random
) -> list[Any]:
    """The heuristic's choice first, then up to ``most - 1`` other moves."""
    others = [c for c in legal if c != first]
    if len(others) >= most:
        others = draw.sample(others, max(most - 1, 0))
    return [first, *others]


def _playout(
    rules: Rules,
    search: Search,
    world: Any,
    seat: int,
    command: Any,
    heuristic: Bot,
    luck: int,
    horizon: int,
) -> float:
    """``command`` in ``world``, then heuristic play until the game ends,
    ``horizon`` moves are made or the game's ``resting`` says a position
    is worth judging there: the seat's score."""
    chance = f"playout/{luck}"
    draw = random.Random(luck)
    _, state = rules.decide_and_evolve(world, seat, command, Rng(chance, 0))
    for step in range(1, horizon + 1):
        if rules.is_terminal(state) or search.resting(state):
            break
        active = sorted(rules.active_seats(state))
        if not active:
            break
        actor = draw.choice(active)
        legal = rules.legal_actions(state, actor)
        if draw.random() < EXPLORE:
            move = draw.choice(legal)
        else:
            view = rules.view(state, Viewer.player(actor))
            move = heuristic(view, legal, Rng(chance, -step))
        _, state = rules.decide_and_evolve(state, actor, move, Rng(chance, step))
    if rules.is_terminal(state):
        return score(rules, state, seat)
    return search.evaluate(state, seat)


def score(rules: Rules, state: Any, seat: int) -> float:
    """A finished game's worth to ``seat``: 1 for a win (shared among the
    winners of a competitive game), 0 for a loss."""
    winners = rules.outcome(state).winners
    if seat not in winners:
        return 0.0
    return 1.0 if rules.cooperative else 1.0 / len(winners)


def shuffled_into(
    pool: Sequence[Any], sizes: Sequence[int], rng: Rng
) -> list[tuple[Any, ...]]:
    """``pool`` (in a canonical order, so no order it had leaks) shuffled and
    dealt into slots of ``sizes`` (summing to its length)."""
    cards = rng.shuffled(sorted(pool))
    slots, at = [], 0
    for size in sizes:
        slots.append(tuple(cards[at : at + size]))
        at += size
    return slots
