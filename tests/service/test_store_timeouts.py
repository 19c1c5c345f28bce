"""A database that hangs, as an operator meets it: PostgreSQL frozen
(SIGSTOP) under a real `strata serve`. The service bounds every call itself
(UNAVAILABLE ``STORE_TIMEOUT`` after ``STRATA_STORE_TIMEOUT``), and what a
client's own deadline or cancellation ended is recorded as that
(DEADLINE_EXCEEDED, CANCELLED) in the access log and the metrics, never as
INTERNAL: an INTERNAL alert means a bug."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from clients.client import StrataClient, StrataError
from eventstore import migrate
from reliability.cluster import PrivateCluster
from tests.service.conftest import http_call
from tests.service.served import Served

pytestmark = pytest.mark.postgres

GAME = "dinosaurs_extinct"


@pytest.fixture
def cluster() -> Iterator[PrivateCluster]:
    try:
        with PrivateCluster() as private:
            migrate.upgrade(private.url)
            yield private
    except FileNotFoundError as missing:  # no PostgreSQL server binaries
        pytest.skip(str(missing))


def test_a_hung_database_is_store_timeout_and_a_clients_deadline_is_its_own(
    cluster: PrivateCluster, tmp_path: Path
) -> None:
    server = Served(
        tmp_path,
        {"STRATA_STORE_TIMEOUT": "1", "STRATA_SHUTDOWN_GRACE": "1"},
        database_url=cluster.url,
    )
    try:
        server.wait_serving()
        client = StrataClient(f"127.0.0.1:{server.port}", timeout=10)
        assert client.create_game(GAME, 2).game_id
        cluster.freeze()
        try:
            # Bounded by the service: UNAVAILABLE after about a second.
            started = time.monotonic()
            with pytest.raises(StrataError) as error:
                client.create_game(GAME, 2)
            assert (error.value.code, error.value.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "STORE_TIMEOUT",
            )
            assert time.monotonic() - started < 5
            # Bounded by the client: its own deadline, recorded as such.
            hurried = StrataClient(f"127.0.0.1:{server.port}", timeout=0.3)
            with pytest.raises(StrataError) as error:
                hurried.create_game(GAME, 2)
            assert error.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
            # Over Connect too.
            over_http = StrataClient(
                f"http://127.0.0.1:{server.http_port}", timeout=10, transport="connect"
            )
            with pytest.raises(StrataError) as error:
                over_http.create_game(GAME, 2)
            assert error.value.reason == "STORE_TIMEOUT"
        finally:
            cluster.thaw()
        deadline = time.monotonic() + 30
        while True:  # back once the database answers again
            try:
                assert client.create_game(GAME, 2).game_id
                break
            except StrataError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        time.sleep(1.1)  # the metrics are rendered at most once a second
        metrics = http_call(server.http_port, "GET", "/metrics")[2].decode()
    finally:
        server.stop(signal.SIGTERM)
    calls = [line for line in server.lines() if line["event"] == "rpc"]
    codes = {(line["code"], line["reason"]) for line in calls}
    assert ("UNAVAILABLE", "STORE_TIMEOUT") in codes
    assert "DEADLINE_EXCEEDED" in {code for code, _ in codes}
    assert "INTERNAL" not in {code for code, _ in codes}
    assert not [
        line for line in server.lines() if line["event"] == "rpc.internal_error"
    ]
    assert 'rpc_response_status_code="INTERNAL"' not in metrics
    assert 'rpc_response_status_code="UNAVAILABLE"' in metrics
