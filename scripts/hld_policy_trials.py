"""Which decisions matter in two-player Happy Little Dinosaurs?

    .venv/bin/python scripts/hld_policy_trials.py --games 2000

Plays the heuristic bot against itself with one seat changed: a random
move in place of the heuristic's in one phase (the scoring window, the
Point card effects, the discard after a Disaster, the Disaster window,
Sudden Death), or always the lowest Point card; seats rotated, who acts
first in a simultaneous window drawn for every decision. Prints the
changed seat's wins with a 95 % Wilson interval (docs/BALANCE.md,
"Strong bots").
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
from collections.abc import Sequence

from domain.bots import HEURISTIC, RANDOM_ORDER, play_bot_game
from domain.chance import Rng
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.content import catalogue
from domain.happy_little_dinosaurs.model import Command, Phase, PlayPointCard, View

HEURISTIC_BOT = RULES.bots[HEURISTIC]
TRIALS = (
    "heuristic",
    "random scoring window",
    "random effects",
    "random discard",
    "random Disaster window",
    "random Sudden Death",
    "lowest Point card",
)
PHASES = {
    "random scoring window": Phase.SCORING,
    "random effects": Phase.EFFECTS,
    "random discard": Phase.DISCARD,
    "random Disaster window": Phase.DISASTER,
    "random Sudden Death": Phase.SUDDEN_DEATH,
}


def changed(trial: str, view: View, legal: Sequence[Command], rng: Rng) -> Command:
    if PHASES.get(trial) is view.phase:
        return rng.choice(legal)
    if trial == "lowest Point card" and isinstance(legal[0], PlayPointCard):
        cards = catalogue().cards
        plays = [c for c in legal if isinstance(c, PlayPointCard)]
        return min(plays, key=lambda c: (cards[c.card].value, c.card))
    return HEURISTIC_BOT(view, legal, rng)


def one(job: tuple[str, str, int]) -> float:
    trial, seed, i = job

    def bot(view: View, legal: Sequence[Command], rng: Rng) -> Command:
        return changed(trial, view, legal, rng)

    seat = i % 2
    bots = [HEURISTIC_BOT, HEURISTIC_BOT]
    bots[seat] = bot
    game = play_bot_game(RULES, f"{seed}/{i}", bots, acting_order=RANDOM_ORDER)
    return 1 / len(game.winners) if seat in game.winners else 0.0


def wilson(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    p = wins / games
    d = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / d
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / d
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", default="trials")
    parser.add_argument("--processes", type=int, default=multiprocessing.cpu_count())
    args = parser.parse_args()
    with multiprocessing.Pool(args.processes) as pool:
        for trial in TRIALS:
            jobs = [(trial, args.seed, i) for i in range(args.games)]
            wins = sum(pool.map(one, jobs, chunksize=20))
            low, high = wilson(wins, args.games)
            print(
                f"{trial}: {wins:g} of {args.games} = {100 * wins / args.games:.1f} %"
                f" ({100 * low:.1f}-{100 * high:.1f} %)"
            )


if __name__ == "__main__":
    main()
