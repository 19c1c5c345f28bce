"""A database outage in a real `strata serve`'s log, as an operator reads
it: each background loop (the timekeeper, the bot runner, the projection,
the housekeeper) says once that it lost the database and once that it is
back, health says so once each way, and nothing is logged as an error.
The timekeeper's sweep used to log ``clocks.sweep_failed`` at ERROR twice a
second for as long as the outage lasted."""

from __future__ import annotations

import collections
import time
from pathlib import Path

import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient
from eventstore import migrate
from tests.service.served import Served

ADMIN = "outage-admin-token"


def wait_for(served: Served, event: str, after: int, timeout: float = 30) -> int:
    """The index of the first line ``event`` past line ``after``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for index, line in enumerate(served.lines()):
            if index > after and line.get("event") == event:
                return index
        time.sleep(0.1)
    raise AssertionError(f"no {event} within {timeout} s: {served.text()[-2000:]}")


@pytest.mark.postgres
def test_an_outage_is_one_line_each_way_per_loop_and_no_error(tmp_path: Path) -> None:
    from reliability.cluster import PrivateCluster

    with PrivateCluster() as cluster:
        migrate.upgrade(cluster.url)
        served = Served(
            tmp_path, database_url=cluster.url, env={"STRATA_ADMIN_TOKEN": ADMIN}
        )
        try:
            served.wait_serving()
            with StrataClient(f"127.0.0.1:{served.port}", timeout=10) as client:
                admin = client.with_token(ADMIN)
                # A timed game in play: the timekeeper has a game to watch.
                game_id = admin.create_game(
                    "dinosaurs_extinct",
                    2,
                    time_control=pb.TimeControl(decision_seconds=600),
                ).game_id
                for seat in (0, 1):
                    admin.join_game(game_id, f"p{seat}", seat=seat)
                admin.start_game(game_id)
            started = len(served.lines())
            cluster.stop("immediate")
            lost = wait_for(served, "health.not_serving", started)
            time.sleep(5)  # ten of the timekeeper's passes and more
            cluster.start()
            wait_for(served, "health.serving", lost)
            time.sleep(3)  # the loops' next passes find it back
        finally:
            served.stop()
    lines = served.lines()[started:]
    assert [line for line in lines if line["level"] in ("error", "critical")] == []
    counted = collections.Counter(line["event"] for line in lines)
    assert counted["health.not_serving"] == counted["health.serving"] == 1
    gone = {e.split(".")[0] for e in counted if e.endswith(".store_unavailable")}
    back = {e.split(".")[0] for e in counted if e.endswith(".store_back")}
    assert "clocks" in gone, counted
    assert gone == back, counted
    for loop in gone:
        assert counted[f"{loop}.store_unavailable"] == 1, counted
        assert counted[f"{loop}.store_back"] == 1, counted
