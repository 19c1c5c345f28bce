"""SIGTERM as an orchestrator sends it: one drain for both listeners, new
calls refused on both at once, open streams ended at once with a status a
client acts on, and the process gone within its grace and one second."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from clients.client import StrataClient, StrataError
from tests.service.conftest import http_call
from tests.service.served import Served

GRACE = 3.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    processes: list[Served] = []

    def start(**env: str) -> Served:
        process = Served(tmp_path, env)
        processes.append(process)
        process.wait_serving()
        return process

    try:
        yield start
    finally:
        for process in processes:
            process.stop(signal.SIGKILL)


def assert_gone_cleanly(server: Served, signalled: float) -> None:
    """Gone within the grace and one second of the signal, exit status 0,
    having logged no error, its last line ``strata.stopped``."""
    server.process.wait(GRACE + 5)
    assert time.monotonic() - signalled < GRACE + 1
    assert server.process.returncode == 0
    lines = server.lines()
    assert not [line for line in lines if line["level"] in ("error", "critical")]
    assert "Traceback" not in server.text()
    assert [line["event"] for line in lines][-1] == "strata.stopped"


def test_sigterm_ends_streams_at_once_refuses_new_calls_and_exits_within_grace(
    served: Callable[..., Served],
) -> None:
    server = served(STRATA_SHUTDOWN_GRACE=str(GRACE))
    grpc_client = StrataClient(f"127.0.0.1:{server.port}", timeout=30)
    connect_client = StrataClient(
        f"http://127.0.0.1:{server.http_port}", timeout=30, transport="connect"
    )
    game_id = grpc_client.create_game("dinosaurs_extinct", 2).game_id
    ended: dict[str, tuple[float, str]] = {}
    ready = threading.Barrier(5)

    def watch(name: str, client: StrataClient) -> None:
        stream = client.watch_game(game_id)
        try:
            next(stream)
            ready.wait(10)
            for _ in stream:
                pass
            ended[name] = (time.monotonic(), "ended without a status")
        except StrataError as error:
            ended[name] = (time.monotonic(), f"{error.code.name} {error.reason}")

    watchers = [
        threading.Thread(target=watch, args=(f"{kind}-{n}", client))
        for n in range(2)
        for kind, client in (("grpc", grpc_client), ("connect", connect_client))
    ]
    for watcher in watchers:
        watcher.start()
    ready.wait(30)
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    for watcher in watchers:
        watcher.join(GRACE + 5)
    # Every stream ended at once, with the status a client acts on.
    assert set(ended) == {"grpc-0", "grpc-1", "connect-0", "connect-1"}
    for name, (when, status) in ended.items():
        assert status == "UNAVAILABLE SHUTTING_DOWN", (name, status)
        assert when - signalled < 1.5, (name, when - signalled)
    # New calls are refused on both listeners (by the door while it drains,
    # by the closed port once it is gone).
    for client in (grpc_client, connect_client):
        client.timeout = 2
        with pytest.raises(StrataError) as error:
            client.list_game_types()
        # Refused, not run. With no unary call running the listeners close
        # at once (the next test holds one open); a call that reaches gRPC
        # as it closes may be cancelled by gRPC's core before the door sees
        # it (seen in full runs of the suite under load): CANCELLED.
        assert error.value.code in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.CANCELLED,
        ), error.value
    assert_gone_cleanly(server, signalled)
    grpc_client.close()
    connect_client.close()


def test_an_idle_server_stops_at_once(served: Callable[..., Served]) -> None:
    server = served(STRATA_SHUTDOWN_GRACE="10")
    assert http_call(server.http_port, "GET", "/healthz")[0] == 200
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(15)
    # Nothing to drain: no waiting out the grace.
    assert time.monotonic() - signalled < 2.0
    events = [line["event"] for line in server.lines()]
    assert events.index("strata.stopping") < events.index("strata.stopped")


def test_a_call_arriving_while_a_running_call_drains_is_refused_by_the_door(
    served: Callable[..., Served], tmp_path: Path
) -> None:
    # A unary call still running when SIGTERM comes keeps the listeners open
    # for the grace: a new call meanwhile, on either listener, is answered
    # UNAVAILABLE SHUTTING_DOWN by the door (a status a client retries
    # elsewhere), not cut by the transport; the running call finishes.
    server = served(STRATA_SHUTDOWN_GRACE="8")
    grpc_client = StrataClient(f"127.0.0.1:{server.port}", timeout=30)
    connect_client = StrataClient(
        f"http://127.0.0.1:{server.http_port}", timeout=30, transport="connect"
    )
    grpc_client.create_game("dinosaurs_extinct", 2)
    # Hold the database's write lock, so that the next creation waits on it.
    holder = sqlite3.connect(tmp_path / f"strata-{server.port}.sqlite3")
    holder.isolation_level = None
    holder.execute("BEGIN IMMEDIATE")
    created: list[Any] = []
    creating = threading.Thread(
        target=lambda: created.append(grpc_client.create_game("dinosaurs_extinct", 2))
    )
    creating.start()
    time.sleep(1.0)  # the creation is inside the service, waiting on the lock
    assert not created
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    for client in (grpc_client, connect_client):
        with pytest.raises(StrataError) as error:
            client.list_game_types()
        assert (error.value.code, error.value.reason) == (
            grpc.StatusCode.UNAVAILABLE,
            "SHUTTING_DOWN",
        ), error.value
    assert server.process.poll() is None  # still draining
    holder.execute("ROLLBACK")
    holder.close()
    creating.join(10)
    assert len(created) == 1 and created[0].game_id  # it finished, answered
    server.process.wait(10)
    assert time.monotonic() - signalled < 8 + 1
    assert server.process.returncode == 0
    assert "Traceback" not in server.text()
    grpc_client.close()
    connect_client.close()


@pytest.mark.postgres
@pytest.mark.holds_cluster
def test_sigterm_ends_a_feed_waiting_out_a_held_back_log(
    served: Callable[..., Served], postgres_server: Any
) -> None:
    """A FollowLog without follow waits for the log's end as it was when it
    began; on PostgreSQL a transaction open anywhere in the cluster holds
    that end back. SIGTERM during that wait ends the stream at once, as it
    ends a live one, and the process exits within its grace."""
    import os

    import psycopg

    from eventstore import migrate
    from tests.conftest import DEFAULT_POSTGRES_URL

    url = postgres_server.create_schema()
    migrate.upgrade(url)
    server = served(
        STRATA_DATABASE_URL=url,
        STRATA_SHUTDOWN_GRACE=str(GRACE),
        STRATA_ADMIN_TOKEN="shutdown-admin",
    )
    client = StrataClient(f"127.0.0.1:{server.port}", timeout=30)
    admin = client.with_token("shutdown-admin")
    admin.create_game("dinosaurs_extinct", 2)  # before the hold: read at once
    holder = psycopg.connect(
        os.environ.get("STRATA_TEST_DATABASE_URL", DEFAULT_POSTGRES_URL)
    )
    try:
        holder.execute("SELECT txid_current()")  # an id: it holds the log back
        admin.create_game("dinosaurs_extinct", 2)  # after it: held back
        received: list[int] = []
        ended: list[tuple[float, str]] = []

        def follow() -> None:
            try:
                for response in admin.follow_log(follow=False):
                    received.append(response.position)
                ended.append((time.monotonic(), "ended without a status"))
            except StrataError as error:
                ended.append((time.monotonic(), f"{error.code.name} {error.reason}"))

        follower = threading.Thread(target=follow)
        follower.start()
        deadline = time.monotonic() + 20
        while not received and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # into the wait for the held-back end
        assert received and not ended, (received, ended)
        signalled = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        follower.join(GRACE + 5)
        assert ended, "the feed did not end"
        when, status = ended[0]
        assert status == "UNAVAILABLE SHUTTING_DOWN", status
        assert when - signalled < 1.5, when - signalled
        assert_gone_cleanly(server, signalled)
    finally:
        holder.close()
        client.close()
