"""``python -m bench --ab CHECKOUT``: this checkout against another one,
round by round, as ratios.

``CHECKOUT`` is another tree of Strata (a ``git worktree add`` of the commit
to compare with, or a ``git archive`` of it). Each round runs ``python -m
bench`` with the other arguments as given once in each tree, each with its
own bench, service, migrations and throwaway database, the tree that goes
first alternating from round to round. On a shared machine whose load
drifts, only figures measured side by side compare: every figure both runs
report (and every target both judge) is given as this tree's value ÷ the
other's, per round, and the median of those ratios.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The figures printed (all go to the JSON): rates, latencies, CPU, ratios.
SHOWN = ("per_second", "_ms", "cpu", "over", "ratio")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench --ab")
    parser.add_argument("--ab", required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", default="bench-ab.json")
    args, rest = parser.parse_known_args(argv)
    other = Path(args.ab).resolve()
    if not (other / "bench" / "__main__.py").is_file():
        parser.error(f"{other} is not a checkout of Strata (no bench/__main__.py)")
    runs: dict[str, list[dict[str, Any]]] = {"this": [], "other": []}
    with tempfile.TemporaryDirectory(prefix="strata-ab-") as folder:
        for number in range(args.rounds):
            order = [("this", ROOT), ("other", other)]
            if number % 2:
                order.reverse()
            for name, root in order:
                output = Path(folder) / f"{name}-{number}.json"
                print(f"bench --ab: round {number + 1}, {root}", file=sys.stderr)
                subprocess.run(
                    [sys.executable, "-m", "bench", *rest, "--json", str(output)],
                    cwd=root,
                    env=_env(root),
                    check=True,
                )
                runs[name].append(json.loads(output.read_text()))
    compared = compare(runs["this"], runs["other"])
    report = {"this": str(ROOT), "other": str(other), "arguments": rest, **compared}
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    _print(report)
    print(f"bench --ab: wrote {args.json}", file=sys.stderr)
    return 0


def _env(root: Path) -> dict[str, str]:
    """The environment that makes ``python -m bench`` import ``root``."""
    env = dict(os.environ)
    paths = [str(root), str(root / "protos")]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def compare(this: list[dict[str, Any]], other: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure and target value both sides report in every round: this
    side's ÷ the other's, per round and their median."""
    mine = [_numbers(run) for run in this]
    theirs = [_numbers(run) for run in other]
    common = set.intersection(*(set(n) for n in mine + theirs))
    figures = {}
    for key in sorted(common):
        ratios = [
            a[key] / b[key] for a, b in zip(mine, theirs, strict=True) if b[key] != 0
        ]
        if len(ratios) != len(mine):
            continue  # a zero on the other side: no ratio to give
        figures[key] = {
            "this": statistics.median(a[key] for a in mine),
            "other": statistics.median(b[key] for b in theirs),
            "ratio": round(statistics.median(ratios), 3),
            "rounds": [round(r, 3) for r in ratios],
        }
    return {"figures": figures}


def _numbers(run: dict[str, Any]) -> dict[str, float]:
    """A run's numeric figures by dotted path, and its targets' values."""
    out: dict[str, float] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)  # a figure a run could not make is NaN
        ):
            out[prefix] = float(value)

    walk("", run.get("figures", {}))
    for target in run.get("targets", []):
        if math.isfinite(target["value"]):
            out[f"target: {target['target']}"] = float(target["value"])
    out.pop("machine.cpus", None)
    return {k: v for k, v in out.items() if not k.startswith("machine.load")}


def _print(report: dict[str, Any]) -> None:
    lines = [f"this: {report['this']}", f"other: {report['other']}", ""]
    lines.append(f"{'figure':<72} {'this':>12} {'other':>12} {'ratio':>7}  rounds")
    for key, f in report["figures"].items():
        if key.startswith("target: ") or any(s in key for s in SHOWN):
            lines.append(
                f"{key[:72]:<72} {f['this']:>12.4g} {f['other']:>12.4g} "
                f"{f['ratio']:>7.3f}  {f['rounds']}"
            )
    print("\n".join(lines))


__all__ = ["compare", "main"]
