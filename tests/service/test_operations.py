"""Operating Strata: health that tells the truth, metrics, traces, JSON logs
with one access line per call, TLS on every listener."""

from __future__ import annotations

import http.client
import json
import os
import re
import ssl
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import structlog.testing
import trustme
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from strata.v1 import game_service_pb2 as pb
from strata.v1 import game_service_pb2_grpc as pb_grpc

from clients.client import StrataClient, StrataError, Tls
from eventstore import migrate
from eventstore.factory import open_store
from service import telemetry
from service.http import Metrics
from service.server import Running, create_server
from service.tls import TlsFiles
from tests.extra_games import python_path
from tests.service.conftest import (
    ADMIN_TOKEN,
    NO_RATE_LIMITS,
    TRANSPORTS,
    client_for,
    http_call,
)
from tests.service.test_cli import ROOT, free_port

GAME = "dinosaurs_extinct"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def health_of(running: Running, service: str = "") -> int:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        return int(
            stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
        )


def within(seconds: float, check: Callable[[], bool]) -> float:
    """How long ``check`` took to come true (fails after ``seconds``)."""
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < seconds, f"not within {seconds} s"
        time.sleep(0.05)
    return time.monotonic() - started


def play_bots_game(client: StrataClient, admin: StrataClient) -> str:
    game_id = admin.create_game(GAME, 2, bots={0: "random", 1: "random"}).game_id
    within(60, lambda: admin.get_game(game_id).status == pb.GAME_STATUS_FINISHED)
    return game_id


# -- health -------------------------------------------------------------------------


def test_health_follows_a_sqlite_file_that_becomes_unreadable(
    server: Running, sqlite_url: str
) -> None:
    path = Path(sqlite_url.removeprefix("sqlite:///"))
    services = (
        "",
        "strata.v1.GameService",
        "strata.v1.AdminService",
        "strata.v1.IntegrationService",
    )
    assert all(health_of(server, s) == SERVING for s in services)
    mode = path.stat().st_mode
    if os.geteuid() == 0:
        pytest.skip("root reads any file: the lock case below covers SQLite")
    path.chmod(0)
    try:
        assert within(2.5, lambda: health_of(server) == NOT_SERVING) <= 2.5
        assert all(health_of(server, s) == NOT_SERVING for s in services)
    finally:
        path.chmod(stat.S_IMODE(mode))
    within(2.5, lambda: health_of(server) == SERVING)


def test_health_follows_a_sqlite_file_locked_by_another_writer(
    server: Running, sqlite_url: str
) -> None:
    path = sqlite_url.removeprefix("sqlite:///")
    assert health_of(server) == SERVING
    locker = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE')\n"
            "print('locked', flush=True)\n"
            "time.sleep(30)\n",
            path,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        took = within(2.5, lambda: health_of(server) == NOT_SERVING)
        assert took <= 2.5
        status, _, body = get(server, "/healthz")
        assert status == 503 and json.loads(body)["status"] == "NOT_SERVING"
    finally:
        locker.kill()
        locker.wait()
    assert within(2.5, lambda: health_of(server) == SERVING) <= 2.5
    assert get(server, "/healthz")[0] == 200


@pytest.mark.postgres
def test_health_follows_a_postgresql_outage(tmp_path: Path) -> None:
    from reliability.cluster import PrivateCluster

    with PrivateCluster() as cluster:
        migrate.upgrade(cluster.url)
        store = open_store(cluster.url)
        running = create_server(store, port=0, limits=NO_RATE_LIMITS, http_port=0)
        try:
            assert health_of(running) == SERVING
            cluster.stop("immediate")
            assert within(2.5, lambda: health_of(running) == NOT_SERVING) <= 2.5
            assert get(running, "/healthz")[0] == 503
            cluster.start()
            assert within(2.5, lambda: health_of(running) == SERVING) <= 2.5
            with client_for(running, "grpc") as client:
                assert client.create_game(GAME, 2).game_id  # and it serves again
        finally:
            running.stop(grace=0.5)
            store.close()


def test_a_graceful_shutdown_says_not_serving_first_then_drains(
    sqlite_url: str,
) -> None:
    store = open_store(sqlite_url)
    running = create_server(store, port=0, limits=NO_RATE_LIMITS, http_port=0)
    seen: list[int] = []
    channel = grpc.insecure_channel(f"127.0.0.1:{running.port}")
    stub = health_pb2_grpc.HealthStub(channel)
    watch = stub.Watch(health_pb2.HealthCheckRequest(), timeout=30)
    assert next(watch).status == SERVING
    client = StrataClient(f"127.0.0.1:{running.port}", timeout=10)
    game_id = client.create_game(GAME, 2).game_id
    stream = client.stub.WatchGame(pb.WatchGameRequest(game_id=game_id), timeout=30)
    assert next(stream).event.version == 1
    running.stop(grace=1.0)
    try:
        for answer in watch:
            seen.append(answer.status)
    except grpc.RpcError:
        pass
    assert seen and seen[0] == NOT_SERVING
    store.close()
    channel.close()
    client.close()


# -- metrics ------------------------------------------------------------------------


def get(running: Running, path: str) -> tuple[int, dict[str, str], bytes]:
    return http_call(running.http_port, "GET", path)


def figure(text: str, name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        sample, _, value = line.rpartition(" ")
        if all(f'{k}="{v}"' in sample for k, v in labels.items()):
            total += float(value)
    return total


def test_metrics_show_the_calls_commands_and_store_after_a_game(
    server: Running, client: StrataClient, admin: StrataClient
) -> None:
    before = get(server, "/metrics")[2].decode()
    scraped = time.monotonic()
    play_bots_game(client, admin)
    client.list_game_types()
    # A scrape within a second of the last gets the same rendering.
    time.sleep(max(0.0, Metrics().max_age - (time.monotonic() - scraped)))
    status, headers, body = get(server, "/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    after = body.decode()
    calls = "rpc_server_call_duration_seconds_count"
    for labels in (
        {"rpc_method": "strata.v1.GameService/CreateGame", "rpc_system_name": "grpc"},
        {
            "rpc_method": "strata.v1.GameService/ListGameTypes",
            "rpc_response_status_code": "OK",
        },
    ):
        assert figure(after, calls, **labels) > figure(before, calls, **labels)
    commands = "strata_commands_total"
    kept = {"game_type": GAME, "outcome": "accepted"}
    assert figure(after, commands, **kept) > figure(before, commands, **kept) + 5
    appends = "strata_store_append_duration_seconds_count"
    assert figure(after, appends) > figure(before, appends)
    assert "strata_projection_lag" in after
    assert "strata_store_connections" in after
    assert "strata_bots_lag" in after


def test_metrics_count_refusals_at_the_door_and_open_streams(sqlite_url: str):
    import dataclasses

    store = open_store(sqlite_url)
    running = create_server(
        store,
        port=0,
        http_port=0,
        limits=dataclasses.replace(NO_RATE_LIMITS, rate_per_peer=2, burst_seconds=1),
    )
    try:
        with client_for(running, "grpc") as client:
            refused = 0
            for _ in range(10):
                try:
                    client.list_game_types()
                except StrataError:
                    refused += 1
            assert refused
            text = get(running, "/metrics")[2].decode()
            assert figure(text, "strata_door_refused_total", reason="RATE_LIMITED") >= (
                refused
            )
    finally:
        running.stop(grace=0.5)
        store.close()


# -- traces and logs ----------------------------------------------------------------


@pytest.fixture(scope="module")
def spans() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    telemetry.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


def test_a_call_is_a_span_with_load_decide_and_append_under_the_callers_trace(
    spans: InMemorySpanExporter, server: Running, admin: StrataClient
) -> None:
    game_id = admin.create_game(GAME, 2).game_id
    for seat in range(2):
        admin.join_game(game_id, f"p{seat}", seat=seat)
    admin.start_game(game_id)
    action = admin.list_legal_actions(game_id).actions[0]
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    traceparent = f"00-{trace_id}-00f067aa0ba902b7-01"
    spans.clear()
    admin.stub.SubmitCommand(
        pb.SubmitCommandRequest(
            game_id=game_id, seat=action.seat, command=action.command, command_id="t-1"
        ),
        timeout=10,
        metadata=[
            ("authorization", f"Bearer {ADMIN_TOKEN}"),
            ("traceparent", traceparent),
        ],
    )
    finished = spans.get_finished_spans()
    rpc = [s for s in finished if s.name == "strata.v1.GameService/SubmitCommand"]
    assert len(rpc) == 1
    root = rpc[0]
    assert format(root.context.trace_id, "032x") == trace_id
    assert root.kind is trace.SpanKind.SERVER
    assert root.attributes is not None
    assert root.attributes["rpc.method"] == "strata.v1.GameService/SubmitCommand"
    assert root.attributes["rpc.system.name"] == "grpc"
    assert root.attributes["rpc.response.status_code"] == "OK"
    children = {
        s.name
        for s in finished
        if s.parent and s.parent.span_id == (root.context.span_id)
    }
    assert {"decide", "append"} <= children


@pytest.mark.parametrize("access_log", ["all", "errors"])
def test_every_log_line_is_json_with_the_calls_ids(
    tmp_path: Path, access_log: str
) -> None:
    """A real `strata serve` at debug: every line it writes is JSON (grpc's,
    uvicorn's and the standard library's too), with one access line per call
    carrying its request and trace ids."""
    lines = _serve_and_log(
        tmp_path,
        {"STRATA_LOG_LEVEL": "debug", "STRATA_ACCESS_LOG": access_log},
        _create_and_miss,
    )
    records = [json.loads(line) for line in lines]  # every line is JSON
    access = [r for r in records if r.get("event") == "rpc"]
    missing = [r for r in access if r["method"].endswith("/GetGame")]
    assert missing and missing[0]["code"] == "NOT_FOUND" and missing[0]["reason"]
    assert re.fullmatch(r"[0-9a-f]{32}", missing[0]["trace_id"])
    assert missing[0]["peer"] and "127.0.0.1" not in json.dumps(missing[0])
    created = [r for r in access if r["method"].endswith("/CreateGame")]
    if access_log == "all":
        assert created and created[0]["code"] == "OK" and created[0]["request_id"]
        assert created[0]["ms"] >= 0
    else:
        assert not created


def _create_and_miss(client: StrataClient) -> None:
    client.create_game(GAME, 2, request_id="log-1")
    with pytest.raises(StrataError):
        client.get_game("missing-game")


def _serve_and_log(
    tmp_path: Path, env: dict[str, str], calls: Callable[[StrataClient], object]
) -> list[str]:
    """Run `strata serve` with ``env``, make ``calls``, stop it: its stderr."""
    port, http_port = free_port(), free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve"],
            env={
                **os.environ,
                "PYTHONPATH": python_path(ROOT, ROOT / "protos"),
                "STRATA_DATABASE_URL": f"sqlite:///{tmp_path / 'log.sqlite3'}",
                "STRATA_PORT": str(port),
                "STRATA_HTTP_PORT": str(http_port),
                "STRATA_HOST": "127.0.0.1",
                **env,
            },
            stderr=out,
            cwd=tmp_path,
        )
        try:
            with StrataClient(f"127.0.0.1:{port}", timeout=5) as client:
                within(60, lambda: _answers(client))
                calls(client)
        finally:
            process.terminate()
            process.wait(timeout=30)
    return [line for line in log.read_text().splitlines() if line.strip()]


def _answers(client: StrataClient) -> bool:
    try:
        client.list_game_types()
        return True
    except StrataError:
        return False


def test_the_request_id_is_echoed_in_the_response_metadata(server: Running) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.GameServiceStub(channel)
        _, call = stub.ListGameTypes.with_call(
            pb.ListGameTypesRequest(),
            metadata=[("x-request-id", "my-request-7")],
            timeout=5,
        )
        assert ("x-request-id", "my-request-7") in tuple(call.trailing_metadata())


# -- TLS -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def tls_files(authority: trustme.CA, tmp_path: Path, mutual: bool) -> TlsFiles:
    cert = authority.issue_cert("127.0.0.1", "localhost")
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(cert_path))
    cert.private_key_pem.write_to_path(str(key_path))
    ca_path = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_path))
    return TlsFiles(str(cert_path), str(key_path), str(ca_path) if mutual else "")


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mutual-tls"])
def test_every_listener_speaks_tls(
    authority: trustme.CA, tmp_path: Path, sqlite_url: str, mutual: bool
) -> None:
    files = tls_files(authority, tmp_path, mutual)
    assert files.problems() == []
    store = open_store(sqlite_url)
    running = create_server(
        store,
        admin_token=ADMIN_TOKEN,
        port=0,
        limits=NO_RATE_LIMITS,
        http_port=0,
        tls=files,
    )
    ca = str(tmp_path / "ca.pem")
    client_cert = authority.issue_cert("strata-client")
    cert_file, key_file = tmp_path / "client.pem", tmp_path / "client.key"
    client_cert.cert_chain_pems[0].write_to_path(str(cert_file))
    client_cert.private_key_pem.write_to_path(str(key_file))
    tls = Tls(ca, str(cert_file), str(key_file)) if mutual else Tls(ca)
    try:
        targets = (
            ("grpc", f"127.0.0.1:{running.port}"),
            ("connect", f"https://127.0.0.1:{running.http_port}"),
            ("grpc-web", f"https://127.0.0.1:{running.http_port}"),
        )
        for transport, target in targets:
            with StrataClient(target, transport=transport, tls=tls, timeout=5) as c:
                assert c.list_game_types().game_types
        # A plaintext client gets nowhere.
        with (
            StrataClient(f"127.0.0.1:{running.port}", timeout=2) as plain,
            pytest.raises(StrataError),
        ):
            plain.list_game_types()
        if mutual:  # and without a client certificate neither
            for transport, target in targets:
                with (
                    StrataClient(
                        target, transport=transport, tls=Tls(ca), timeout=3
                    ) as anonymous,
                    pytest.raises((StrataError, Exception)),
                ):
                    anonymous.list_game_types()
        context = ssl.create_default_context(cafile=ca)
        if mutual:
            context.load_cert_chain(str(cert_file), str(key_file))
        connection = http.client.HTTPSConnection(
            "127.0.0.1", running.http_port, context=context, timeout=5
        )
        connection.request("GET", "/healthz")
        assert connection.getresponse().status == 200
        connection.close()
    finally:
        running.stop(grace=0.5)
        store.close()


def test_tls_files_that_do_not_go_together_are_refused(tmp_path: Path) -> None:
    assert TlsFiles(str(tmp_path / "none.pem"), "").problems()
    assert any("go together" in p for p in TlsFiles(str(tmp_path / "x"), "").problems())


# -- outages in the logs ------------------------------------------------------------


def _unavailable_while(down: dict[str, bool], method: Any) -> Any:
    """``method``, raising StoreUnavailable while ``down["value"]``."""
    from eventstore.base import StoreUnavailable

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if down["value"]:
            raise StoreUnavailable("connection refused")
        return method(*args, **kwargs)

    return flaky


def _logs_of_an_outage(
    loop: Any, down: dict[str, bool]
) -> list[structlog.typing.EventDict]:
    """What a background ``loop(stop)`` logs while its database is gone for
    half a second (about 25 of its passes), then back."""
    stop = threading.Event()
    with structlog.testing.capture_logs() as logs:
        thread = threading.Thread(target=loop, args=(stop,))
        thread.start()
        time.sleep(0.5)
        down["value"] = False
        time.sleep(0.3)
        stop.set()
        thread.join()
    return logs


def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends(
    tmp_path: Path,
) -> None:
    """The bot runner's loop against a database that is gone for a while:
    a line when it goes, a line when it is back, no traceback a second."""
    from eventstore.memory import InMemoryEventStore
    from service.application import GameApp
    from service.bots import BotRunner

    store = InMemoryEventStore()
    down = {"value": True}
    store.read_all_matching = _unavailable_while(  # type: ignore[method-assign]
        down, store.read_all_matching
    )
    runner = BotRunner(GameApp(store))
    logs = _logs_of_an_outage(lambda stop: runner.run_forever(stop, 0.02), down)
    events = [e["event"] for e in logs if e["event"].startswith("bots.")]
    assert events == ["bots.store_unavailable", "bots.store_back"]
    assert all("exc_info" not in e for e in logs)


def test_the_timekeepers_outage_is_two_lines_too() -> None:
    """The timekeeper's sweep, twice a second, met a failover's seconds
    without a primary with an error line each time; now as the other loops."""
    from eventstore.memory import InMemoryEventStore
    from service.application import GameApp
    from service.clocks import Timekeeper

    store = InMemoryEventStore()
    app = GameApp(store)
    down = {"value": True}
    store.read_all_matching = _unavailable_while(  # type: ignore[method-assign]
        down, store.read_all_matching
    )
    logs = _logs_of_an_outage(Timekeeper(app, every=0.02).run_forever, down)
    events = [e["event"] for e in logs if e["event"].startswith("clocks.")]
    assert events == ["clocks.store_unavailable", "clocks.store_back"]
    assert all(e["log_level"] != "error" for e in logs)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_answer_tells_the_client_how_far_the_log_went(
    server: Running, transport: str
) -> None:
    """strata-position on every unary answer, over each transport: the
    client keeps the highest and sends it back as strata-read-after (its
    copies made with with_token share it)."""
    with client_for(server, transport) as client:
        assert client._seen.position == 0
        game_id = client.create_game("dinosaurs_extinct", 2).game_id
        created = client._seen.position
        assert created > 0
        seat = client.with_token("")
        seat.join_game(game_id, "Ada", 0)
        assert client._seen.position > created  # the join, seen by the copy
        first = next(client.watch_game(game_id, follow=False))
        assert first.position <= created
        assert ("strata-read-after", str(client._seen.position)) in client._metadata()
