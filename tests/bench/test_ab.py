"""``python -m bench --ab``: two checkouts' runs compared as ratios, round by
round (the runs themselves are the smoke test's; here their comparison)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import ab


def run(per_second: float, p99: float, met: float, **more: object) -> dict[str, object]:
    return {
        "figures": {
            "machine": {"cpus": 2, "load_average_at_start": [1.0, 2.0, 3.0]},
            "watch": {"per_second": per_second, "p99_ms": p99, **more},
        },
        "targets": [{"target": "watch ratio", "value": met}],
    }


def test_each_shared_figure_is_this_side_over_the_other_per_round_and_median() -> None:
    this = [
        run(300, 10, 0.5, unmade=1.0),
        run(200, 12, 0.4, only_here=1, unmade=float("nan")),
        run(330, 9, 0.6, unmade=1.0),
    ]
    other = [
        run(100, 20, 1.0, unmade=1.0),
        run(100, 24, 1.0, unmade=1.0),
        run(110, 18, 1.0, unmade=1.0),
    ]

    figures = ab.compare(this, other)["figures"]

    assert figures["watch.per_second"] == {
        "this": 300,
        "other": 100,
        "ratio": 3.0,
        "rounds": [3.0, 2.0, 3.0],
    }
    assert figures["watch.p99_ms"]["rounds"] == [0.5, 0.5, 0.5]
    assert figures["target: watch ratio"]["ratio"] == 0.5
    # Only what both sides report in every round (a NaN is no figure), and
    # no machine facts.
    assert "watch.only_here" not in figures
    assert "watch.unmade" not in figures
    assert not any(key.startswith("machine") for key in figures)


def test_a_folder_that_is_no_checkout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        ab.main(["--ab", str(tmp_path), "--tiny"])
