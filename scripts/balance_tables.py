"""Print the tables of docs/BALANCE.md from the reports in docs/balance/.

python scripts/balance_tables.py [docs/balance]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def pct(rate: float, margin: float | None = None) -> str:
    text = f"{100 * rate:.1f} %"
    return f"{text} ± {100 * margin:.1f}" if margin is not None else text


def rates(section: dict[str, Any]) -> str:
    return " / ".join(pct(v["win_rate"]) for v in section.values())


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/balance")
    reports = {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}
    print("| report | games | win rate by seat (0 / 1 / …) | ±95 % | bots | length |")
    print("|---|---|---|---|---|---|")
    for name, r in reports.items():
        seats = r["win_rate_by_seat"]
        margin = max(v["margin95"] for v in seats.values())
        bots = ", ".join(
            f"{k} {pct(v['win_rate'])}" for k, v in r["win_rate_by_bot"].items()
        )
        length = r["length"]["commands"]
        print(
            f"| `{name}` | {r['games']} | {rates(seats)} | {100 * margin:.1f} | "
            f"{bots} | {length['median']} ({length['p10']} to {length['p90']}) |"
        )
    print()
    for name, r in reports.items():
        characters = r["win_rate_by_character"]
        if len(characters) > 1:
            cells = ", ".join(
                f"{c} {pct(v['win_rate'], v['margin95'])}"
                for c, v in characters.items()
            )
            print(f"- `{name}` characters: {cells}")
        shared = {k: v for k, v in r["winners_per_game"].items() if k != "1"}
        print(f"  results {r['results']}, games by number of winners {shared}")
        if "team" in r:
            t = r["team"]
            won = pct(t["win_rate"], t["margin95"])
            print(f"  team: {won} won, lost by {t['lost_by']}")
    rotations = [r for name, r in reports.items() if "-rotation-" in name]
    if rotations:
        played: dict[str, int] = {}
        wins: dict[str, int] = {}
        for r in rotations:
            for c, v in r["win_rate_by_character"].items():
                played[c] = played.get(c, 0) + v["seats_played"]
                wins[c] = wins.get(c, 0) + v["wins"]
        cells = ", ".join(
            f"{c} {pct(wins[c] / played[c], margin95(wins[c], played[c]))}"
            for c in sorted(played)
        )
        games = sum(r["games"] for r in rotations)
        print(f"\nrotations together ({games} games): {cells}")


def margin95(part: int, whole: int) -> float:
    p = part / whole
    return float(1.96 * (p * (1 - p) / whole) ** 0.5)


if __name__ == "__main__":
    main()
