"""The balance lab: play many games of bots in-process and report the figures.

    strata simulate --game dinosaurs_extinct --games 10000 --players 4 \\
        --bots heuristic --seed lab --report de.json --plot charts/
    strata simulate --game happy_little_dinosaurs --games 200 --players 2 \\
        --bots strong,heuristic --rotate --acting-order both

Game ``i`` is seeded ``f"{seed}/{i}"`` and played by
:func:`domain.bots.play_bot_game` (no gRPC, no database), across processes;
records come back in game order, so the report is the same byte for byte
whatever the number of processes. The report (JSON, sorted keys, no
timings) gives win rates by seat (and by seat under each acting order
played: the lowest seat first in a simultaneous window, or one drawn at
random for every decision, so a seat's edge is told from acting first), by
character and by bot kind (``random``, ``heuristic``, ``strong``), the
outcome result codes, the game length distribution, and for a cooperative
game the team's win rate and how games were lost.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from domain import codec, registry, search
from domain.bots import ACTING_ORDERS, bot_for, play_bot_game
from domain.errors import DomainError
from domain.session import Session

#: ``--acting-order``: one of :data:`ACTING_ORDERS`, or both (every game
#: played once each way, with the same seed).
BOTH = "both"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What to simulate. ``bots`` are bot kinds given to the seats in turn
    (cycled when shorter than the seats); with ``rotate``, game ``i`` shifts
    them by ``i`` seats, so every kind sits in every seat equally often."""

    game_type: str
    players: int
    games: int
    seed: str
    bots: tuple[str, ...] = ("random",)
    rotate: bool = False
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: Who acts first when several seats may: ``seat`` (the lowest, as the
    #: service's bot runner does), ``random`` (drawn for every decision) or
    #: ``both`` (every game played each way).
    acting_order: str = "seat"
    #: The strong bot's search per move: samples and candidates (0: the
    #: default budget, :data:`domain.search.DEFAULT_BUDGET`). A lab run
    #: searches by count, never by time, so its games replay exactly.
    strong_samples: int = 0
    strong_candidates: int = 0

    def budget(self) -> search.Budget:
        """The strong bot's budget in this plan's games."""
        default = search.DEFAULT_BUDGET
        return dataclasses.replace(
            default,
            samples=self.strong_samples or default.samples,
            candidates=self.strong_candidates or default.candidates,
        )

    def orders(self) -> tuple[str, ...]:
        """The acting orders every game is played under."""
        return ACTING_ORDERS if self.acting_order == BOTH else (self.acting_order,)

    @property
    def total(self) -> int:
        """Games played in all (``games`` under each acting order)."""
        return self.games * len(self.orders())

    def lineup(self, index: int) -> tuple[str, ...]:
        """The bot kind of each seat in game ``index``."""
        shift = index % self.players if self.rotate else 0
        return tuple(
            self.bots[(seat + shift) % len(self.bots)] for seat in range(self.players)
        )

    def game_seed(self, index: int) -> str:
        return f"{self.seed}/{index}"

    def check(self) -> None:
        """Raise ValueError for an unknown game type, bot or player count, or
        options the game does not take."""
        if self.game_type not in registry.game_types():
            raise ValueError(
                f"no game type {self.game_type!r} (one of {registry.game_types()})"
            )
        rules = registry.rules_for(self.game_type)
        if not rules.min_players <= self.players <= rules.max_players:
            raise ValueError(
                f"{rules.title} takes {rules.min_players} to {rules.max_players} "
                f"players, not {self.players}"
            )
        if self.games < 1:
            raise ValueError("simulate at least one game")
        if not self.bots:
            raise ValueError("name at least one bot kind")
        if self.acting_order not in (*ACTING_ORDERS, BOTH):
            raise ValueError(
                f"the acting order is {', '.join((*ACTING_ORDERS, BOTH))}, "
                f"not {self.acting_order!r}"
            )
        for kind in self.bots:
            bot_for(self.game_type, kind)  # KeyError when unknown
        try:
            Session(rules).create(self.players, self.seed, self.decoded_options())
        except DomainError as error:
            raise ValueError(error.message) from None

    def decoded_options(self) -> Any:
        rules = registry.rules_for(self.game_type)
        if not self.options:
            return None
        known = {f.name for f in dataclasses.fields(rules.options_type)}
        unknown = sorted(set(self.options) - known)
        if unknown:
            raise ValueError(
                f"{self.game_type} has no option {', '.join(unknown)} "
                f"(it has: {', '.join(sorted(known)) or 'none'})"
            )
        try:
            return codec.decode(rules.options_type, self.options)
        except (codec.CodecError, TypeError, ValueError, KeyError) as error:
            raise ValueError(f"bad options for {self.game_type}: {error}") from None


@dataclasses.dataclass(frozen=True)
class GameRecord:
    """One simulated game."""

    index: int
    seed: str
    bots: tuple[str, ...]
    winners: tuple[int, ...]
    result: str
    commands: int
    events: int
    characters: tuple[str, ...]
    acting_order: str = "seat"


def play_one(plan: Plan, index: int, acting_order: str = "seat") -> GameRecord:
    """Play game ``index`` of ``plan`` under ``acting_order``."""
    rules = registry.rules_for(plan.game_type)
    lineup = plan.lineup(index)
    bots = [bot_for(plan.game_type, kind, plan.budget()).play for kind in lineup]
    game = play_bot_game(
        rules,
        plan.game_seed(index),
        bots,
        plan.decoded_options(),
        acting_order=acting_order,
    )
    names = game.characters
    return GameRecord(
        index=index,
        seed=game.seed,
        bots=lineup,
        winners=game.winners,
        result=game.result,
        commands=game.commands,
        events=game.version,
        characters=tuple(names.get(s, f"seat {s}") for s in range(plan.players)),
        acting_order=acting_order,
    )


def _play_task(task: tuple[Plan, int, str]) -> GameRecord:
    return play_one(*task)


def run(
    plan: Plan,
    processes: int = 0,
    progress: Callable[[int], None] | None = None,
) -> list[GameRecord]:
    """Every game of ``plan``, in game order (``processes`` 0: every core)."""
    plan.check()
    processes = processes or os.cpu_count() or 1
    tasks = [
        (plan, index, order) for order in plan.orders() for index in range(plan.games)
    ]
    records: list[GameRecord] = []
    if processes == 1 or plan.games < 2:
        for task in tasks:
            records.append(_play_task(task))
            if progress:
                progress(1)
        return records
    chunk = max(1, min(64, plan.total // (processes * 8)))
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        for record in pool.imap(_play_task, tasks, chunksize=chunk):
            records.append(record)
            if progress:
                progress(1)
    return records


# -- the report -------------------------------------------------------------------


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _margin(part: int, whole: int) -> float:
    """Half the width of the 95% interval of the rate ``part / whole``
    (normal approximation): a difference smaller than this is noise."""
    if not whole:
        return 0.0
    p = part / whole
    return round(1.96 * math.sqrt(p * (1 - p) / whole), 4)


def _distribution(values: Sequence[int]) -> dict[str, Any]:
    ordered = sorted(values)
    n = len(ordered)

    def quantile(q: float) -> int:
        return ordered[min(n - 1, max(0, math.ceil(q * n) - 1))]

    return {
        "min": ordered[0],
        "p10": quantile(0.1),
        "median": quantile(0.5),
        "mean": round(sum(ordered) / n, 2),
        "p90": quantile(0.9),
        "max": ordered[-1],
    }


def _histogram(values: Sequence[int], bins: int = 20) -> list[dict[str, int]]:
    low, high = min(values), max(values)
    width = max(1, math.ceil((high - low + 1) / bins))
    counts = Counter((v - low) // width for v in values)
    return [
        {"from": low + b * width, "to": low + (b + 1) * width - 1, "games": counts[b]}
        for b in range(max(counts) + 1)
    ]


def _seat_rates(players: int, records: Sequence[GameRecord]) -> dict[str, Any]:
    games = len(records)
    seat_wins = Counter(w for r in records for w in r.winners)
    return {
        str(s): {
            "wins": seat_wins[s],
            "win_rate": _rate(seat_wins[s], games),
            "margin95": _margin(seat_wins[s], games),
        }
        for s in range(players)
    }


def report(plan: Plan, records: Sequence[GameRecord], per_game: bool = False) -> Any:
    """The figures of a simulation, as JSON-ready data (deterministic)."""
    games = len(records)
    rules = registry.rules_for(plan.game_type)
    character_games: Counter[str] = Counter()
    character_wins: Counter[str] = Counter()
    bot_games: Counter[str] = Counter()
    bot_wins: Counter[str] = Counter()
    for r in records:
        for seat in range(plan.players):
            won = int(seat in r.winners)
            character_games[r.characters[seat]] += 1
            character_wins[r.characters[seat]] += won
            bot_games[r.bots[seat]] += 1
            bot_wins[r.bots[seat]] += won
    out: dict[str, Any] = {
        "game_type": plan.game_type,
        "rules_version": rules.rules_version,
        "players": plan.players,
        "games": games,
        "seed": plan.seed,
        "bots": list(plan.bots),
        "rotate": plan.rotate,
        "options": plan.options,
        "acting_order": plan.acting_order,
        "strong_budget": dataclasses.asdict(plan.budget()),
        "win_rate_by_seat": _seat_rates(plan.players, records),
        "win_rate_by_seat_by_acting_order": {
            order: _seat_rates(
                plan.players, [r for r in records if r.acting_order == order]
            )
            for order in plan.orders()
        },
        "win_rate_by_character": {
            name: {
                "seats_played": character_games[name],
                "wins": character_wins[name],
                "win_rate": _rate(character_wins[name], character_games[name]),
                "margin95": _margin(character_wins[name], character_games[name]),
            }
            for name in sorted(character_games)
        },
        "win_rate_by_bot": {
            kind: {
                "seats_played": bot_games[kind],
                "wins": bot_wins[kind],
                "win_rate": _rate(bot_wins[kind], bot_games[kind]),
                "margin95": _margin(bot_wins[kind], bot_games[kind]),
            }
            for kind in sorted(bot_games)
        },
        "winners_per_game": {
            str(n): c
            for n, c in sorted(Counter(len(r.winners) for r in records).items())
        },
        "results": dict(sorted(Counter(r.result for r in records).items())),
        "length": {
            "commands": _distribution([r.commands for r in records]),
            "events": _distribution([r.events for r in records]),
            "commands_histogram": _histogram([r.commands for r in records]),
        },
    }
    if rules.cooperative:
        team_wins = sum(1 for r in records if len(r.winners) == plan.players)
        out["team"] = {
            "won": team_wins,
            "win_rate": _rate(team_wins, games),
            "margin95": _margin(team_wins, games),
            "lost_by": dict(
                sorted(Counter(r.result for r in records if not r.winners).items())
            ),
        }
    if per_game:
        out["per_game"] = [
            {k: v for k, v in dataclasses.asdict(r).items() if k != "characters"}
            for r in records
        ]
    return out


def dumps(data: Any) -> str:
    """The report's canonical text."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


# -- charts -------------------------------------------------------------------------

#: How to get the charts' one dependency (the ``lab`` extra, pyproject.toml).
INSTALL_LAB = "pip install 'strata[lab]'"


def can_plot() -> bool:
    """Whether matplotlib, which draws the charts, is installed."""
    return importlib.util.find_spec("matplotlib") is not None


def plot(data: Any, directory: Path) -> list[Path]:
    """PNG charts of a report in ``directory``; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    title = f"{data['game_type']}, {data['players']} players, {data['games']} games"
    written: list[Path] = []

    def bars(
        name: str, labels: Iterable[str], values: Iterable[float], what: str
    ) -> None:
        figure, axes = plt.subplots(figsize=(7, 4))
        labels, values = list(labels), list(values)
        axes.bar(labels, values, color="#4a7c59")
        axes.set_title(f"{what}\n{title}", fontsize=10)
        axes.set_ylim(0, max([*values, 0.01]) * 1.2)
        for i, v in enumerate(values):
            axes.text(i, v, f"{v:.1%}", ha="center", va="bottom", fontsize=8)
        axes.tick_params(axis="x", labelsize=8, rotation=15)
        figure.tight_layout()
        path = directory / f"{name}.png"
        figure.savefig(path, dpi=100)
        plt.close(figure)
        written.append(path)

    seats = data["win_rate_by_seat"]
    bars(
        "win_rate_by_seat",
        (f"seat {s}" for s in seats),
        (v["win_rate"] for v in seats.values()),
        "Win rate by seat",
    )
    characters = data["win_rate_by_character"]
    bars(
        "win_rate_by_character",
        characters,
        (v["win_rate"] for v in characters.values()),
        "Win rate by character",
    )
    kinds = data["win_rate_by_bot"]
    bars(
        "win_rate_by_bot",
        kinds,
        (v["win_rate"] for v in kinds.values()),
        "Win rate by bot kind (per seat played)",
    )
    results = data["results"]
    bars(
        "results",
        results,
        (n / data["games"] for n in results.values()),
        "Outcome result codes (share of games)",
    )
    histogram = data["length"]["commands_histogram"]
    figure, axes = plt.subplots(figsize=(7, 4))
    axes.bar(
        [b["from"] for b in histogram],
        [b["games"] for b in histogram],
        width=[b["to"] - b["from"] + 1 for b in histogram],
        align="edge",
        color="#8c6d31",
    )
    axes.set_xlabel("commands per game")
    axes.set_ylabel("games")
    axes.set_title(f"Game length\n{title}", fontsize=10)
    figure.tight_layout()
    path = directory / "game_length.png"
    figure.savefig(path, dpi=100)
    plt.close(figure)
    written.append(path)
    return written
