"""The benchmark runs end to end in its tiny mode, so it cannot rot.

No timing is asserted: on a shared machine only ratios measured side by
side mean anything, and those are for ``python -m bench`` to report.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import DEFAULT_POSTGRES_URL, PostgresServer

pytestmark = pytest.mark.postgres


def test_the_bench_runs_every_phase_and_writes_its_figures(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    pytest.importorskip("eventsourcing", reason="pip install -e '.[bench]'")
    from bench.run import main

    output = tmp_path / "bench.json"
    server = os.environ.get("STRATA_TEST_DATABASE_URL", DEFAULT_POSTGRES_URL)

    assert main(["--tiny", "--database-url", server, "--json", str(output)]) == 0

    report = json.loads(output.read_text())
    figures = report["figures"]
    assert set(figures) >= {
        "end_to_end",
        "processes",
        "standby",
        "watch",
        "appends",
        "loads",
        "projection_rebuild",
        "timekeeper",
        "list_games",
        "follow_log",
    }
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
    assert figures["watch"]["deliveries"] > 0
    # The same bots and watchers over the Connect protocol, in the same run.
    connect = figures["end_to_end"]["1"]["connect_commands"]
    assert connect["count"] + connect["other_calls_per_second"] > 0
    assert connect["errors"] == {}
    assert figures["watch_connect"]["deliveries"] > 0
    assert figures["appends"]["strata_store"]["count"] > 0
    # The timekeeper acted on the games that came due (how late is a figure).
    keeper = figures["timekeeper"]
    assert keeper["acted"] + keeper["missed"] == keeper["expiring"] > 0
    assert keeper["acted"] > 0
    # ListGames was timed with few and many games; FollowLog sent the log.
    assert figures["list_games"]["large_ms"]["p50"] > 0
    follow = figures["follow_log"]
    assert 0 < follow["follow_log_events_sent"] <= follow["log_events"]
    assert {t["target"].split(" ")[0] for t in report["targets"]} >= {
        "commands/s",
        "watch",
        "store",
        "cold",
        "fold",
        "ListGames",
        "FollowLog",
    }
