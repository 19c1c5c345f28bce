"""The benchmark runs end to end in its tiny mode, so it cannot rot.

No timing is asserted: on a shared machine only ratios measured side by
side mean anything, and those are for ``python -m bench`` to report.

Its phases run in three groups (``--only``), one test each, so that the
suite's workers run them side by side: the whole tiny run in one test
was the suite's longest (90 to 160 s under the suite's load).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DEFAULT_POSTGRES_URL, PostgresServer

pytestmark = pytest.mark.postgres


def run_bench(tmp_path: Path, phases: str) -> dict[str, Any]:
    """``python -m bench --tiny --only <phases>``'s report."""
    pytest.importorskip("eventsourcing", reason="pip install -e '.[bench]'")
    from bench.run import main

    output = tmp_path / "bench.json"
    server = os.environ.get("STRATA_TEST_DATABASE_URL", DEFAULT_POSTGRES_URL)
    arguments = ["--tiny", "--only", phases, "--database-url", server]
    assert main([*arguments, "--json", str(output)]) == 0
    report: dict[str, Any] = json.loads(output.read_text())
    return report


def targets_of(report: dict[str, Any]) -> set[str]:
    return {t["target"].split(" ")[0] for t in report["targets"]}


def test_the_bench_plays_games_end_to_end_and_on_two_processes(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    report = run_bench(tmp_path, "e2e,processes")
    figures = report["figures"]
    assert set(figures) >= {"end_to_end", "processes"}
    commands = figures["end_to_end"]["1"]["commands"]
    # The window is a second: on a loaded machine the bots may still be
    # seating players, so what is asserted is that they called the service.
    assert commands["count"] + commands["other_calls_per_second"] > 0
    assert commands["errors"] == {}
    # The same bots without gRPC, and the machine's CPU beside the service's.
    alone = figures["end_to_end"]["in_process"]
    assert alone["count"] + alone["other_calls_per_second"] > 0
    assert alone["errors"] == {}
    assert commands["machine_cpu_ms_per_call"] > 0
    # The same bots over the Connect protocol, in the same run.
    connect = figures["end_to_end"]["1"]["connect_commands"]
    assert connect["count"] + connect["other_calls_per_second"] > 0
    assert connect["errors"] == {}
    assert targets_of(report) >= {"commands/s"}


def test_the_bench_watches_appends_loads_rebuilds_and_reads_a_standby(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    report = run_bench(tmp_path, "watch,appends,loads,projection,standby")
    figures = report["figures"]
    assert set(figures) >= {
        "watch",
        "appends",
        "loads",
        "projection_rebuild",
        "standby",
    }
    assert figures["watch"]["deliveries"] > 0
    # The same watchers over the Connect protocol, in the same run.
    assert figures["watch_connect"]["deliveries"] > 0
    assert figures["appends"]["strata_store"]["count"] > 0
    assert targets_of(report) >= {"watch", "store", "cold", "fold"}


def test_the_bench_times_clocks_listing_following_and_bots(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    report = run_bench(tmp_path, "hostile,clocks,listgames,follow,bots")
    figures = report["figures"]
    assert set(figures) >= {
        "hostile_bodies",
        "timekeeper",
        "list_games",
        "follow_log",
        "bot_think",
    }
    # The timekeeper acted on the games that came due (how late is a figure).
    keeper = figures["timekeeper"]
    assert keeper["acted"] + keeper["missed"] == keeper["expiring"] > 0
    assert keeper["acted"] > 0
    # ListGames was timed with few and many games; FollowLog sent the log.
    assert figures["list_games"]["large_ms"]["p50"] > 0
    follow = figures["follow_log"]
    assert 0 < follow["follow_log_events_sent"] <= follow["log_events"]
    assert targets_of(report) >= {"ListGames", "FollowLog"}
