"""Hostile load, round two: the attacks of the issue of that name, each
performed against a real server (gRPC and HTTP listeners on free ports) as
an anonymous caller would, and each refused at its cause.

1. Large JSON bodies: bounded per method before they are read, the caller's
   rates counted before any decoding, JSON bounded in values and depth and
   decoded off the event loop.
2. Made-up tokens of any size: headers bounded, tokens of a known shape,
   every per-caller table keyed by a fixed-size digest and bounded.
3. Slow and idle connections: header and body timeouts, a cap per address
   and in all, refusals logged once per interval.
6. ``/metrics``: on a listener of its own or behind a token, and cheap.
7. One client is one address on every listener (and behind a trusted proxy,
   the address the proxy names).
8. What gave HTTP 500 or INTERNAL: each a proper status with a reason.
9. The web table's pages: a Content-Security-Policy and no framing.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import http.client
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import structlog.testing
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from eventstore.factory import open_store
from service import connect_transport, gate, http_edge, telemetry
from service.buckets import TokenBuckets
from service.config import Config, ConfigError
from service.gate import MAX_JSON_VALUES
from service.http_edge import Throttled
from service.limits import LimitSettings
from service.server import Running, create_server
from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS, http_call
from tests.service.served import Served

CREATE = "/strata.v1.GameService/CreateGame"
LIST_TYPES = "/strata.v1.GameService/ListGameTypes"
IMPORT = "/strata.v1.AdminService/ImportGame"
GAME = "dinosaurs_extinct"

Factory = Callable[..., Running]


@pytest.fixture
def make_server(sqlite_url: str) -> Iterator[Factory]:
    """Servers on one SQLite store, each with the test limits changed by
    the keywords given (``LimitSettings`` fields) and ``create_server``'s
    own keywords under ``server``."""
    store = open_store(sqlite_url)
    started: list[Running] = []

    def make(server: dict[str, Any] | None = None, **limits: Any) -> Running:
        running = create_server(
            store,
            admin_token=ADMIN_TOKEN,
            port=0,
            http_port=0,
            limits=dataclasses.replace(NO_RATE_LIMITS, **limits),
            **(server or {}),
        )
        started.append(running)
        return running

    try:
        yield make
    finally:
        for running in started:
            running.stop(grace=0.5)
        store.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """``strata serve`` processes (their logs read as an operator would)."""
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
            process.stop()


# -- talking HTTP by hand ----------------------------------------------------------


def raw(
    port: int,
    data: bytes,
    wait: float = 5.0,
    source: str = "",
) -> bytes:
    """Send ``data`` on a new connection; everything the server answered
    until it closed the connection (or ``wait`` passed: ``<timeout>``)."""
    sock = socket.socket()
    if source:
        sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.settimeout(wait)
    answer = b""
    try:
        sock.sendall(data)
        while chunk := sock.recv(65536):
            answer += chunk
    except TimeoutError:
        answer += b"<timeout>"
    except ConnectionResetError:
        answer += b"<reset>"
    finally:
        sock.close()
    return answer


def post(
    running: Running | None,
    path: str,
    body: bytes,
    headers: dict[str, str] | None = None,
    port: int = 0,
) -> tuple[int, dict[str, str], bytes]:
    if not port:
        assert running is not None
        port = running.http_port
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return http_call(port, "POST", path, body, all_headers)


def get(
    running: Running, path: str, port: int = 0, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    return http_call(port or running.http_port, "GET", path, headers=headers)


def reason(body: bytes) -> tuple[str, str]:
    """A Connect error's code and ErrorInfo reason."""
    error = json.loads(body)
    for detail in error.get("details", ()):
        if detail["type"] == "google.rpc.ErrorInfo":
            value = base64.b64decode(detail["value"] + "==")
            info = error_details_pb2.ErrorInfo.FromString(value)
            return error["code"], info.reason
    return error["code"], ""


def envelope(message: bytes, flags: int = 0) -> bytes:
    return bytes([flags]) + len(message).to_bytes(4, "big") + message


def grpc_web_status(body: bytes) -> dict[str, str]:
    """The trailers of a gRPC-Web response body (its last frame)."""
    at = 0
    trailers: dict[str, str] = {}
    while at + 5 <= len(body):
        flags, size = body[at], int.from_bytes(body[at + 1 : at + 5], "big")
        frame = body[at + 5 : at + 5 + size]
        if flags & 0x80:
            for line in frame.decode().split("\r\n"):
                key, _, value = line.partition(":")
                if key:
                    trailers[key.strip().lower()] = value.strip()
        at += 5 + size
    return trailers


def wait_for_lines(server: Served, event: str, count: int) -> list[dict[str, Any]]:
    """The log's lines of ``event``, once there are ``count`` (an access line
    is written as its call ends, which may be just after the answer)."""
    deadline = time.monotonic() + 10
    while True:
        lines = [line for line in server.lines() if line["event"] == event]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def health_check(running: Running) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=10
        )
    assert answer.status == health_pb2.HealthCheckResponse.SERVING


# -- 1. one connection froze the service with large JSON bodies -------------------


def test_a_body_longer_than_its_methods_bound_is_refused_before_it_is_sent(
    make_server: Factory,
) -> None:
    running = make_server()
    # Only the headers: the server answers from Content-Length, never waiting
    # for (or reading) the 870 kB it announces.
    head = (
        f"POST {CREATE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 870000\r\n\r\n"
    ).encode()
    answer = raw(running.http_port, head, wait=5)
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 429"), answer[:200]
    chunked = body.split(b"\r\n", 1)[1] if b"\r\n" in body else body
    assert reason(chunked.rsplit(b"\r\n0\r\n", 1)[0].strip()) == (
        "resource_exhausted",
        "REQUEST_TOO_LARGE",
    )
    # gRPC-Web, and a chunked body that grows past the bound as it comes.
    status_code, headers, web = post(
        running,
        CREATE,
        envelope(b'{"gameType":"' + b"x" * 70_000 + b'"}'),
        {"Content-Type": "application/grpc-web+json"},
    )
    assert status_code == 200
    trailers = {**headers, **grpc_web_status(web)}
    assert trailers["grpc-status"] == "8", trailers
    connection = http.client.HTTPConnection("127.0.0.1", running.http_port, timeout=10)
    chunks = iter([b"[" + b"1," * 20_000, b"1," * 20_000, b"1]"])
    connection.request(
        "POST",
        CREATE,
        body=chunks,
        headers={"Content-Type": "application/json"},
        encode_chunked=True,
    )
    response = connection.getresponse()
    assert reason(response.read())[1] == "REQUEST_TOO_LARGE"
    connection.close()


def test_grpc_bytes_past_the_methods_bound_are_never_parsed(
    make_server: Factory,
) -> None:
    running = make_server()
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        send = channel.unary_unary(
            CREATE,
            request_serializer=lambda raw_bytes: raw_bytes,
            response_deserializer=pb.CreateGameResponse.FromString,
        )
        # 100 kB that are no message at all: refused for their size, unread
        # (parsed, they would be MALFORMED_REQUEST).
        with pytest.raises(grpc.RpcError) as error:
            send(b"\xff" * 100_000, timeout=10)
        assert error.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "limit is 65536" in (error.value.details() or "")
        with pytest.raises(grpc.RpcError) as error:
            send(b"\xff" * 1_000, timeout=10)
        assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_a_gzip_body_that_inflates_past_the_bound_is_refused(
    make_server: Factory,
) -> None:
    running = make_server()
    bomb = gzip.compress(b'{"gameType":"' + b"x" * 2_000_000 + b'"}')
    assert len(bomb) < 10_000
    status, _, body = post(running, CREATE, bomb, {"Content-Encoding": "gzip"})
    assert (status, reason(body)) == (
        429,
        ("resource_exhausted", "REQUEST_TOO_LARGE"),
    )


def test_an_import_is_refused_to_a_caller_without_the_admin_token_before_its_body(
    make_server: Factory,
) -> None:
    running = make_server()
    head = (
        f"POST {IMPORT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 900000\r\n\r\n"
    ).encode()
    answer = raw(running.http_port, head, wait=5)
    assert answer.startswith(b"HTTP/1.1 403"), answer[:200]
    assert b'"permission_denied"' in answer


def test_the_callers_rate_is_counted_before_its_body_is_decoded(
    make_server: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[str] = []
    real = gate.decode_json

    def counting(*args: Any) -> Any:
        decoded.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(gate, "decode_json", counting)
    monkeypatch.setattr(connect_transport, "decode_json", counting)
    running = make_server(rate_per_peer=2, burst_seconds=1)
    # A large body of many values: the kind that took the loop 1.5 s.
    bots = json.dumps(
        {"gameType": GAME, "players": 2, "bots": [{"seat": 9, "bot": "random"}] * 300}
    ).encode()
    assert len(bots) > gate.DECODE_ON_LOOP_BYTES
    connection = http.client.HTTPConnection("127.0.0.1", running.http_port, timeout=10)
    answers = []
    for _ in range(6):  # one connection: its bucket holds two
        connection.request(
            "POST", CREATE, body=bots, headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        answers.append(reason(response.read())[1])
    connection.close()
    assert answers.count("RATE_LIMITED") >= 4, answers
    # Only the admitted bodies were decoded, and never on the event loop.
    assert 0 < len(decoded) == 6 - answers.count("RATE_LIMITED"), answers
    assert "strata-grpc" not in decoded


def test_json_past_its_bounds_in_values_or_depth_is_refused_unread(
    make_server: Factory,
) -> None:
    running = make_server()
    many = b'{"gameType":"x","bots":[' + b",".join([b"{}"] * MAX_JSON_VALUES) + b"]}"
    assert len(many) < 64 * 1024
    status, _, body = post(running, CREATE, many)
    assert (status, reason(body)) == (400, ("invalid_argument", "REQUEST_TOO_COMPLEX"))
    deep = b'{"gameType":' + b"[" * 200 + b"]" * 200 + b"}"
    status, _, body = post(running, CREATE, deep)
    assert status == 400 and reason(body)[0] == "invalid_argument"
    # Within the bounds, a body as large as allowed still plays.
    game = json.dumps({"gameType": GAME, "players": 2, "requestId": "r" * 100})
    status, _, body = post(running, CREATE, game.encode())
    assert status == 200 and json.loads(body)["gameId"]
    health_check(running)


# -- 2. made-up tokens of any size stayed in memory -------------------------------


def test_a_header_past_the_bound_is_431_and_kept_nowhere(make_server: Factory) -> None:
    running = make_server()
    before = len(running.limits.tokens)  # type: ignore[union-attr]
    for _ in range(20):
        answer = raw(
            running.http_port,
            b"POST " + LIST_TYPES.encode() + b" HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nAuthorization: Bearer "
            + b"a" * 1_000_000
            + b"\r\nContent-Length: 2\r\n\r\n{}",
        )
        assert answer.startswith(b"HTTP/1.1 431"), answer[:100]
    assert len(running.limits.tokens) == before  # type: ignore[union-attr]
    # gRPC bounds metadata alike.
    with StrataClient(f"127.0.0.1:{running.port}", timeout=10) as client:
        with pytest.raises(StrataError) as error:
            client.with_token("a" * 20_000).list_game_types()
        assert error.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED


@pytest.mark.parametrize("transport", ["grpc", "connect"])
def test_a_token_of_no_known_shape_is_refused_and_counted_nowhere(
    make_server: Factory, transport: str
) -> None:
    running = make_server(rate_per_token=100)
    limits = running.limits
    assert limits is not None
    client = (
        StrataClient(f"127.0.0.1:{running.port}", timeout=10)
        if transport == "grpc"
        else StrataClient(
            f"http://127.0.0.1:{running.http_port}", timeout=10, transport=transport
        )
    )
    with client:
        odd = ("t" * 300, "has space", "st_a,b", "st_ok€")
        # (gRPC's own client cannot send a character outside ASCII.)
        for token in odd if transport != "grpc" else odd[:-1]:
            with pytest.raises(StrataError) as error:
                client.with_token(token).list_game_types()
            assert (error.value.code, error.value.reason) in {
                (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MALFORMED"),
                (grpc.StatusCode.UNAUTHENTICATED, "BAD_AUTHORIZATION"),
            }
        assert len(limits.tokens) == 0
        # Tokens of the known shape are counted, each under a 16-byte digest.
        for n in range(50):
            client.with_token(f"st_made-up-{n:03d}" + "x" * 200).list_game_types()
    assert len(limits.tokens) == 50
    assert all(len(key) == 16 for key in limits.tokens._buckets)


def test_every_bucket_table_is_bounded_in_entries() -> None:
    now = [0.0]
    buckets = TokenBuckets(1.0, 100.0, clock=lambda: now[0], max_keys=1000)
    for n in range(20_000):
        now[0] += 0.0001  # none refills: pruning alone would keep them all
        buckets.take(f"token-{n}")
    assert len(buckets) <= 1000
    # The most recent keys are the ones kept.
    assert "token-19999" in buckets and "token-0" not in buckets


def test_tokens_the_service_is_configured_with_must_have_the_shape() -> None:
    with pytest.raises(ConfigError) as error:
        Config.from_env({"STRATA_ADMIN_TOKEN": "has spaces in it"})
    assert "STRATA_ADMIN_TOKEN" in str(error.value)
    with pytest.raises(ConfigError):
        Config.from_env({"STRATA_INTEGRATION_TOKENS": "ok-token,bad token"})
    assert Config.from_env({"STRATA_ADMIN_TOKEN": "s3cret-admin_token"}).admin_token


# -- 3. slow and idle connections were kept for ever ------------------------------


def test_slow_and_idle_connections_are_closed_after_the_header_timeout(
    make_server: Factory,
) -> None:
    running = make_server(header_timeout=1, body_timeout=1)
    started = time.monotonic()
    results: list[bytes] = []

    def slow_loris() -> None:
        sock = socket.create_connection(("127.0.0.1", running.http_port))
        sock.settimeout(0.2)
        answer = b""
        try:
            for byte in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40:
                sock.sendall(bytes([byte]))
                try:
                    answer += sock.recv(1000)
                    if answer:
                        break
                except TimeoutError:
                    pass
        except OSError:
            pass
        finally:
            sock.close()
        results.append(answer)

    def idle() -> None:
        results.append(raw(running.http_port, b"", wait=10))

    def slow_body() -> None:
        head = (
            f"POST {LIST_TYPES} HTTP/1.1\r\nHost: x\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        results.append(raw(running.http_port, head.encode(), wait=10))

    threads = [
        threading.Thread(target=f)
        for f in [slow_loris] * 5 + [idle] * 5 + [slow_body] * 3
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert len(results) == 13
    assert all(r.startswith(b"HTTP/1.1 408") for r in results), results
    assert time.monotonic() - started < 10
    # Every connection is given back (the server hears of each close just
    # after the client's).
    edge = running.http.edge  # type: ignore[union-attr]
    deadline = time.monotonic() + 10
    while len(edge.connections) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(edge.connections) == 0


def test_connections_past_the_cap_per_address_are_refused_and_others_served(
    served: Callable[..., Served],
) -> None:
    server = served(STRATA_MAX_CONNECTIONS_PER_ADDRESS="10", STRATA_HEADER_TIMEOUT="30")
    held = [
        socket.create_connection(("127.0.0.1", server.http_port)) for _ in range(10)
    ]
    try:
        refused = [raw(server.http_port, b"", wait=5) for _ in range(200)]
        assert all(r.startswith(b"HTTP/1.1 503") for r in refused)
        # Another address, gRPC health and a unary call are served meanwhile.
        answer = raw(
            server.http_port,
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            source="127.0.0.2",
        )
        assert answer.startswith(b"HTTP/1.1 200")
        with StrataClient(f"127.0.0.1:{server.port}", timeout=10) as client:
            assert client.list_game_types().game_types
    finally:
        for sock in held:
            sock.close()
    # Two hundred refusals, one log line (with the count).
    lines = [
        line for line in server.lines() if line["event"] == "http.connections_refused"
    ]
    assert len(lines) == 1
    assert lines[0]["counts"]["connections_per_address"] >= 1


def test_connections_past_the_cap_in_all_are_refused_before_descriptors_run_out(
    make_server: Factory,
) -> None:
    running = make_server(max_connections=20, max_connections_per_address=0)
    assert running.http.edge.connections.total == 20  # type: ignore[union-attr]
    held = [
        socket.create_connection(("127.0.0.1", running.http_port)) for _ in range(20)
    ]
    try:
        assert raw(running.http_port, b"", wait=5).startswith(b"HTTP/1.1 503")
        health_check(running)
    finally:
        for sock in held:
            sock.close()


def test_the_default_cap_leaves_a_reserve_of_descriptors() -> None:
    import resource

    budget = http_edge.connection_budget()
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert 2 * budget + http_edge.DESCRIPTOR_RESERVE <= soft


def test_a_refusal_is_logged_once_per_interval_with_a_count() -> None:
    with structlog.testing.capture_logs() as logs:
        throttled = Throttled("test.refused", interval=60)
        for _ in range(1000):
            throttled.note("connections_full")
    assert [e["counts"] for e in logs if e["event"] == "test.refused"] == [
        {"connections_full": 1}
    ]


# -- 6. /metrics was public and unthrottled ----------------------------------------


def test_metrics_on_an_address_of_their_own_and_not_on_the_public_listener(
    make_server: Factory,
) -> None:
    running = make_server(server={"metrics_address": "127.0.0.1:0"})
    assert running.metrics_port
    status, _, body = get(running, "/metrics", port=running.metrics_port)
    assert status == 200 and b"process_open_fds" in body
    assert get(running, "/healthz", port=running.metrics_port)[0] == 200
    assert get(running, "/metrics")[0] == 404


def test_metrics_behind_a_token(make_server: Factory) -> None:
    running = make_server(server={"metrics_token": "scrape-me"})
    assert get(running, "/metrics")[0] == 401
    assert get(running, "/metrics", authorization="Bearer wrong")[0] == 401
    assert get(running, "/metrics", authorization="Bearer scrape-me")[0] == 200


def test_many_scrapes_cost_one_rendering(
    make_server: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[float] = []
    real = telemetry.prometheus_text

    def counting() -> bytes:
        rendered.append(time.monotonic())
        return real()

    monkeypatch.setattr(telemetry, "prometheus_text", counting)
    running = make_server()
    scrapers = [
        threading.Thread(target=lambda: [get(running, "/metrics") for _ in range(10)])
        for _ in range(4)
    ]
    started = time.monotonic()
    for scraper in scrapers:
        scraper.start()
    for scraper in scrapers:
        scraper.join(30)
    seconds = time.monotonic() - started
    # Forty scrapes; at most one rendering a second (and the first).
    assert len(rendered) <= seconds + 1


# -- 7. one client was two addresses -------------------------------------------------


def test_one_client_is_one_address_over_grpc_and_http(make_server: Factory) -> None:
    running = make_server(rate_per_address=3, burst_seconds=1)
    over_grpc = StrataClient(f"127.0.0.1:{running.port}", timeout=10)
    over_connect = StrataClient(
        f"http://127.0.0.1:{running.http_port}", timeout=10, transport="connect"
    )
    refused = 0
    with over_grpc, over_connect:
        for client in (over_grpc, over_connect) * 3:
            try:
                client.list_game_types()
            except StrataError as error:
                assert error.reason == "RATE_LIMITED"
                refused += 1
    # One bucket of three for both transports (two buckets let all six in).
    assert refused >= 2


def test_an_anonymous_request_id_names_one_game_whatever_the_transport(
    make_server: Factory,
) -> None:
    running = make_server()
    over_grpc = StrataClient(f"127.0.0.1:{running.port}", timeout=10)
    over_connect = StrataClient(
        f"http://127.0.0.1:{running.http_port}", timeout=10, transport="connect"
    )
    with over_grpc, over_connect:
        first = over_grpc.create_game(GAME, 2, request_id="same-key")
        again = over_connect.create_game(GAME, 2, request_id="same-key")
        assert again.game_id == first.game_id
        assert len(over_grpc.list_games().games) == 1


def test_behind_a_trusted_proxy_the_forwarded_address_counts(
    make_server: Factory,
) -> None:
    trusting = make_server(
        rate_per_address=2, burst_seconds=1, server={"trusted_proxies": ("127.0.0.1",)}
    )
    untrusting = make_server(rate_per_address=2, burst_seconds=1)

    def calls(running: Running) -> list[int]:
        return [
            post(
                running,
                LIST_TYPES,
                b"{}",
                {"X-Forwarded-For": f"198.51.100.{n}, 127.0.0.1"},
            )[0]
            for n in range(6)
        ]

    # Six clients behind the proxy: six addresses, each within its rate.
    assert calls(trusting) == [200] * 6
    # A caller that is no trusted proxy cannot choose its address.
    assert calls(untrusting).count(429) >= 3
    # gRPC metadata from a trusted proxy counts the same way.
    with grpc.insecure_channel(f"127.0.0.1:{trusting.port}") as channel:
        stub = channel.unary_unary(
            LIST_TYPES,
            request_serializer=pb.ListGameTypesRequest.SerializeToString,
            response_deserializer=pb.ListGameTypesResponse.FromString,
        )
        for n in range(6):
            stub(
                pb.ListGameTypesRequest(),
                metadata=(("x-forwarded-for", f"203.0.113.{n}"),),
                timeout=10,
            )


def test_a_trusted_proxy_setting_must_be_addresses() -> None:
    config = Config.from_env({"STRATA_TRUSTED_PROXIES": "10.0.0.0/8, ::1"})
    assert config.trusted_proxies == ("10.0.0.0/8", "::1")
    with pytest.raises(ConfigError) as error:
        Config.from_env({"STRATA_TRUSTED_PROXIES": "proxy.example"})
    assert "STRATA_TRUSTED_PROXIES" in str(error.value)


# -- 8. 500s and INTERNAL on the HTTP listener -----------------------------------------


def test_what_gave_500_or_internal_gets_its_status_and_reason(
    served: Callable[..., Served],
) -> None:
    server = served()
    port = server.http_port

    def send(
        path: str, body: bytes, **headers: str
    ) -> tuple[int, dict[str, str], bytes]:
        return post(None, path, body, headers, port=port)

    # A read-after position of digits int() refuses: ignored, not INTERNAL.
    # (http.client sends a header's characters as Latin-1: these are the two
    # bytes of '²' in UTF-8, as curl sends them.)
    superscript = "\u00b2".encode().decode("latin-1")
    assert send(LIST_TYPES, b"{}", **{"strata-read-after": superscript})[0] == 200
    # A header that is not UTF-8: 400 with its reason, before the door.
    answer = raw(
        port,
        b"POST " + LIST_TYPES.encode() + b" HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nX-Odd: \xff\xfe\r\n"
        b"Content-Length: 2\r\nConnection: close\r\n\r\n{}",
    )
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    # gRPC on the HTTP/1.1 port: 415, gRPC's UNIMPLEMENTED, and why.
    status, headers, body = send(
        LIST_TYPES, b"", **{"Content-Type": "application/grpc"}
    )
    assert (status, headers["grpc-status"]) == (415, "12")
    assert b"HTTP/2" in body
    # A message marked compressed with no compression named: INVALID_ARGUMENT.
    watch = "/strata.v1.GameService/WatchGame"
    status, headers, body = send(
        watch,
        envelope(b"\x0a\x01x", flags=1),
        **{"Content-Type": "application/grpc-web+proto"},
    )
    assert {**headers, **grpc_web_status(body)}["grpc-status"] == "3"
    status, headers, body = send(
        watch,
        envelope(b"\x0a\x01x", flags=1),
        **{"Content-Type": "application/connect+proto"},
    )
    assert b"invalid_argument" in body, body
    # Each has an access line with its reason; none a traceback or an error.
    wait_for_lines(server, "rpc", 6)
    logged = server.lines()
    reasons = [line.get("reason") for line in logged if line["event"] == "rpc"]
    assert {"HEADER_INVALID", "GRPC_NEEDS_HTTP2"} <= set(reasons)
    assert reasons.count("COMPRESSION_MISSING") == 2
    assert not [line for line in logged if line["level"] in ("error", "critical")]
    assert "Traceback" not in server.text()


def test_an_unknown_method_is_recorded_under_one_name(
    served: Callable[..., Served],
) -> None:
    server = served()
    for n in range(5):
        path = f"/strata.v1.GameService/Nope{n}"
        assert post(None, path, b"{}", port=server.http_port)[0] == 404
    logged = wait_for_lines(server, "rpc", 5)
    assert {line["method"] for line in logged} == {"/strata.v1.GameService/_OTHER"}
    assert [line["code"] for line in logged] == ["UNIMPLEMENTED"] * 5


# -- 9. the web page could be framed by anyone --------------------------------------


@pytest.mark.parametrize("path", ["/", "/game/abc", "/static/app.js"])
def test_the_web_tables_pages_forbid_framing_and_foreign_scripts(
    make_server: Factory, path: str
) -> None:
    running = make_server()
    status, headers, _ = get(running, path)
    assert status == 200
    policy = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "script-src 'self'" in policy
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"


def test_limits_settings_name_their_variables() -> None:
    variables = LimitSettings.variables()
    for name in (
        "STRATA_MAX_HEADER_BYTES",
        "STRATA_HEADER_TIMEOUT",
        "STRATA_BODY_TIMEOUT",
        "STRATA_MAX_CONNECTIONS",
        "STRATA_MAX_CONNECTIONS_PER_ADDRESS",
    ):
        assert name in variables.values()
    settings = LimitSettings.from_env(
        {"STRATA_MAX_HEADER_BYTES": "4096", "STRATA_HEADER_TIMEOUT": "2.5"}
    )
    assert (settings.max_header_bytes, settings.header_timeout) == (4096, 2.5)
