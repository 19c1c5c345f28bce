"""The balance lab: play many games of bots in-process and report the figures.

    strata simulate --game dinosaurs_extinct --games 10000 --players 4 \\
        --bots heuristic --seed lab --report de.json --plot charts/

Game ``i`` is seeded ``f"{seed}/{i}"`` and played by
:func:`domain.bots.play_bot_game` (no gRPC, no database), across processes;
records come back in game order, so the report is the same byte for byte
whatever the number of processes. The report (JSON, sorted keys, no
timings) gives win rates by seat, by character and by bot kind, the
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

from domain import codec, registry
from domain.bots import bot_for, play_bot_game
from domain.errors import DomainError
from domain.session import Session


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


def play_one(plan: Plan, index: int) -> GameRecord:
    """Play game ``index`` of ``plan``."""
    rules = registry.rules_for(plan.game_type)
    lineup = plan.lineup(index)
    bots = [bot_for(plan.game_type, kind).play for kind in lineup]
    game = play_bot_game(rules, plan.game_seed(index), bots, plan.decoded_options())
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
    )


def _play_task(task: tuple[Plan, int]) -> GameRecord:
    return play_one(*task)


def run(
    plan: Plan,
    processes: int = 0,
    progress: Callable[[int], None] | None = None,
) -> list[GameRecord]:
    """Every game of ``plan``, in game order (``processes`` 0: every core)."""
    plan.check()
    processes = processes or os.cpu_count() or 1
    tasks = [(plan, index) for index in range(plan.games)]
    records: list[GameRecord] = []
    if processes == 1 or plan.games < 2:
        for task in tasks:
            records.append(_play_task(task))
            if progress:
                progress(1)
        return records
    chunk = max(1, min(64, plan.games // (processes * 8)))
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


def report(plan: Plan, records: Sequence[GameRecord], per_game: bool = False) -> Any:
    """The figures of a simulation, as JSON-ready data (deterministic)."""
    games = len(records)
    rules = registry.rules_for(plan.game_type)
    seat_wins = Counter(w for r in records for w in r.winners)
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
        "win_rate_by_seat": {
            str(s): {
                "wins": seat_wins[s],
                "win_rate": _rate(seat_wins[s], games),
                "margin95": _margin(seat_wins[s], games),
            }
            for s in range(plan.players)
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
