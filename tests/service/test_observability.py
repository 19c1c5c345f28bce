"""What an operator's tools see (operations, second pass): every process
scraped and probed on an address of its own, every series and log line
naming its process, saturation and business figures in a scrape that
promtool accepts, and probes that tell liveness from readiness."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient
from domain import registry
from eventstore.factory import open_store
from service.server import Running, create_server
from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS, http_call
from tests.service.served import ROOT, Served, free_port
from tests.service.test_operations import figure, tls_files

GAME = "dinosaurs_extinct"


def scrape(port: int) -> str:
    status, _, body = http_call(port, "GET", "/metrics")
    assert status == 200
    return body.decode()


def samples(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name + "{")]


@pytest.fixture
def metrics_server(sqlite_url: str) -> Iterator[Running]:
    store = open_store(sqlite_url)
    running = create_server(
        store,
        admin_token=ADMIN_TOKEN,
        port=0,
        http_port=0,
        limits=NO_RATE_LIMITS,
        workers=7,
        metrics_address="127.0.0.1:0",
    )
    try:
        yield running
    finally:
        running.stop(grace=0.5)
        store.close()


def test_a_scrape_shows_saturation_and_the_games(metrics_server: Running) -> None:
    running = metrics_server
    with StrataClient(f"127.0.0.1:{running.port}", timeout=10) as client:
        admin = client.with_token(ADMIN_TOKEN)
        open_game = client.create_game(GAME, 3).game_id
        client.join_game(open_game, "Ada")
        finished = admin.create_game(GAME, 2, bots={0: "random", 1: "random"})
        deadline = time.monotonic() + 30
        while client.get_game(finished.game_id).status != pb.GAME_STATUS_FINISHED:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        # The census reads the game list: wait for the projection.
        deadline = time.monotonic() + 30
        while len(client.list_games().games) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    time.sleep(0.6)  # at least two measures of the loop's lag
    text = scrape(running.metrics_port)
    # Saturation: the pool, the loop, calls in flight, connections.
    assert figure(text, "strata_worker_pool_size") == 7
    assert samples(text, "strata_worker_pool_busy")
    assert samples(text, "strata_worker_pool_queued")
    assert figure(text, "strata_event_loop_lag_seconds_count") >= 2
    assert figure(text, "process_open_fds") > 0
    assert figure(text, "process_resident_memory_bytes") > 0
    assert samples(text, "strata_rpc_server_active_calls")
    assert samples(text, "strata_store_connections")
    # Business: games by type and status, open seats, bot moves.
    assert figure(text, "strata_games", game_type=GAME, status="finished") >= 1
    assert figure(text, "strata_games", game_type=GAME, status="open") >= 1
    assert figure(text, "strata_seats_open", game_type=GAME) >= 2
    assert figure(text, "strata_bot_moves_total", game_type=GAME, bot="random") > 0
    assert figure(text, "strata_bot_move_delay_seconds_count") > 0
    think = figure(text, "strata_bot_think_seconds_count", game_type=GAME, bot="random")
    assert think == figure(text, "strata_bot_moves_total", game_type=GAME, bot="random")
    # What runs: the build, and every game type's rules versions.
    assert figure(text, "strata_build_info") == 1
    for game_type in registry.game_types():
        for version in registry.rules_versions(game_type):
            assert figure(
                text, "strata_rules_info", game_type=game_type, rules_version=version
            )
    # The conventions: durations in seconds, RPC and HTTP.
    assert figure(
        text,
        "rpc_server_call_duration_seconds_count",
        rpc_method="strata.v1.GameService/CreateGame",
        rpc_system_name="grpc",
        rpc_response_status_code="OK",
    )
    http_call(running.http_port, "GET", "/")
    time.sleep(1.1)
    text = scrape(running.metrics_port)
    assert figure(
        text,
        "http_server_request_duration_seconds_count",
        http_route="/",
        http_response_status_code="200",
    )
    assert "milliseconds" not in text
    # Every series says which process it came from.
    series = [
        line
        for line in text.splitlines()
        if line and not line.startswith("#") and "{" in line
    ]
    assert series and all('process="serve"' in line for line in series)
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI"):
            pytest.fail("promtool is missing (.ci/run installs Debian's prometheus)")
        pytest.skip("no promtool here (apt-get install prometheus)")
    checked = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_liveness_is_not_readiness(metrics_server: Running) -> None:
    running = metrics_server
    for port in (running.http_port, running.metrics_port):
        assert http_call(port, "GET", "/livez")[0] == 200
        assert http_call(port, "GET", "/readyz")[0] == 200
    # The database goes away: not ready (take it out of the balancer), but
    # alive (do not restart it).
    store = running.app.store
    real = store.check_health

    def down() -> None:
        raise OSError("the database is down")

    store.check_health = down  # type: ignore[method-assign]
    try:
        deadline = time.monotonic() + 10
        while http_call(running.metrics_port, "GET", "/readyz")[0] != 503:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert http_call(running.metrics_port, "GET", "/healthz")[0] == 503
        assert http_call(running.metrics_port, "GET", "/livez")[0] == 200
        assert http_call(running.http_port, "GET", "/livez")[0] == 200
    finally:
        store.check_health = real  # type: ignore[method-assign]


def test_under_mutual_tls_probes_and_scrapes_need_no_certificate(
    sqlite_url: str, tmp_path: Path
) -> None:
    files = tls_files(trustme.CA(), tmp_path, mutual=True)
    store = open_store(sqlite_url)
    running = create_server(
        store,
        port=0,
        http_port=0,
        limits=NO_RATE_LIMITS,
        tls=files,
        metrics_address="127.0.0.1:0",
    )
    try:
        # The kubelet and a scraper present no client certificate.
        assert http_call(running.metrics_port, "GET", "/readyz")[0] == 200
        assert http_call(running.metrics_port, "GET", "/livez")[0] == 200
        assert scrape(running.metrics_port)
    finally:
        running.stop(grace=0.5)
        store.close()


def _consecutive_free_ports(count: int) -> int:
    """The first of ``count`` ports free now, one after the other."""
    for _ in range(100):
        first = free_port()
        try:
            held = []
            for port in range(first, first + count):
                probe = socket.socket()
                probe.bind(("127.0.0.1", port))
                held.append(probe)
            return first
        except OSError:
            continue
        finally:
            for probe in held:
                probe.close()
    raise RuntimeError("no free ports")


@pytest.mark.postgres
def test_each_serving_process_is_scraped_on_an_address_of_its_own(
    postgres_store_url: str, tmp_path: Path
) -> None:
    first = _consecutive_free_ports(2)
    server = Served(
        tmp_path,
        {
            "STRATA_METRICS_ADDRESS": f"127.0.0.1:{first}",
            "STRATA_ACCESS_LOG": "all",
            "STRATA_MAX_STREAM": "5",  # misspelt: warned of once, not per process
        },
        database_url=postgres_store_url,
        args=("--processes", "2"),
    )
    try:
        seen: dict[str, str] = {}
        deadline = time.monotonic() + 180  # two processes start on a busy machine
        while len(seen) < 2:
            assert time.monotonic() < deadline, server.text()[-2000:]
            for port in (first, first + 1):
                try:
                    text = scrape(port)
                except OSError:
                    continue
                target = samples(text, "target_info")
                assert target
                process = target[0].split('process="')[1].split('"')[0]
                seen[str(port)] = process
            time.sleep(0.2)
        assert sorted(seen.values()) == ["serve-0", "serve-1"]
        # Only the first runs the projection: its lag is in its scrape alone
        # (once its gauges are registered, just after its listeners answer).
        while "strata_projection_lag{" not in scrape(first):
            assert time.monotonic() < deadline, server.text()[-2000:]
            time.sleep(0.2)
        assert "strata_projection_lag{" not in scrape(first + 1)
        # Every log line of each says which process wrote it.
        serving = [line for line in server.lines() if line["event"] == "strata.serving"]
        assert sorted(line["process"] for line in serving) == ["serve-0", "serve-1"]
        assert len({line["pid"] for line in serving}) == 2
        warned = [
            (line["process"], line["variable"], line["closest"])
            for line in server.lines()
            if line["event"] == "config.unknown_variable"
        ]
        assert warned == [("supervisor", "STRATA_MAX_STREAM", "STRATA_MAX_STREAMS")]
    finally:
        server.stop()


@pytest.mark.postgres
def test_the_worker_serves_its_probes_and_metrics(
    postgres_store_url: str, tmp_path: Path
) -> None:
    port = free_port()
    environ = {
        **os.environ,
        "STRATA_DATABASE_URL": postgres_store_url,
        "STRATA_METRICS_ADDRESS": f"127.0.0.1:{port}",
        "STRATA_LOG_LEVEL": "info",
    }
    log = tmp_path / "worker.log"
    with open(log, "w") as errors:
        worker = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "worker"],
            cwd=ROOT,
            env=environ,
            stderr=errors,
        )
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    if http_call(port, "GET", "/readyz")[0] == 200:
                        break
                except OSError:
                    pass
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(0.2)
            assert http_call(port, "GET", "/livez")[0] == 200
            text = scrape(port)
            assert samples(text, "strata_projection_lag")
            assert samples(text, "strata_bots_lag")
            assert all(
                'process="worker"' in line for line in samples(text, "strata_bots_lag")
            )
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(30)
    lines: list[dict[str, Any]] = [
        __import__("json").loads(line) for line in log.read_text().splitlines()
    ]
    assert {line["process"] for line in lines} == {"worker"}
    working = next(line for line in lines if line["event"] == "strata.working")
    assert working["metrics_port"] == port and working["metrics_tls"] == "off"
    assert lines[-1]["event"] == "strata.stopped"
