"""The HTTP listener: the Connect and gRPC-Web API as a browser or `curl`
meets it, CORS, bad input over HTTP, and the web table's files."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from domain import registry
from eventstore.factory import open_store
from service.server import Running, create_server
from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS, http_call

ORIGIN = "https://table.example"


def request(
    running: Running,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    return http_call(running.http_port, method, path, body, headers)


def call_json(
    running: Running, method: str, body: dict[str, Any], token: str = ""
) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    status, _, raw = request(
        running, "POST", method, json.dumps(body).encode(), headers
    )
    return status, json.loads(raw)


@pytest.fixture
def cors_server(sqlite_url: str) -> Iterator[Running]:
    store = open_store(sqlite_url)
    running = create_server(
        store,
        admin_token=ADMIN_TOKEN,
        port=0,
        limits=NO_RATE_LIMITS,
        http_port=0,
        cors_origins=(ORIGIN,),
    )
    try:
        yield running
    finally:
        running.stop(grace=0.5)
        store.close()


def test_curl_lists_the_game_types_over_connect_json(server: Running) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("no curl here")
    out = subprocess.run(
        [
            curl,
            "-s",
            "-H",
            "Content-Type: application/json",
            "-d",
            "{}",
            f"http://127.0.0.1:{server.http_port}/strata.v1.GameService/ListGameTypes",
        ],
        capture_output=True,
        check=True,
        timeout=20,
    ).stdout
    types = {t["gameType"] for t in json.loads(out)["gameTypes"]}
    assert types == set(registry.game_types())


def test_an_error_carries_the_same_code_and_reason_as_over_grpc(server: Running):
    status, error = call_json(
        server, "/strata.v1.GameService/CreateGame", {"gameType": "chess", "players": 2}
    )
    assert status == 400
    assert error["code"] == "invalid_argument"
    details = error["details"]
    assert isinstance(details, list)
    assert {d["type"] for d in details} == {
        "google.rpc.ErrorInfo",
        "google.rpc.BadRequest",
    }
    status, error = call_json(
        server,
        "/strata.v1.GameService/CreateGame",
        {"gameType": "dinosaurs_extinct", "players": 2, "seed": "mine"},
    )
    assert (status, error["code"]) == (403, "permission_denied")


def test_bad_requests_get_the_protocols_error_never_a_500(server: Running) -> None:
    base = "/strata.v1.GameService/"
    cases = [
        # Malformed JSON, a field of the wrong type, nesting past any message.
        ("POST", base + "GetGame", b"{not json", "application/json", 400),
        ("POST", base + "GetGame", b'{"gameId": 7}', "application/json", 400),
        ("POST", base + "GetGame", b'{"a":' * 3000 + b"1", "application/json", 400),
        # Bytes that are not the message.
        ("POST", base + "GetGame", b"\xff\xff\xff", "application/proto", 400),
        # A content type no protocol has.
        ("POST", base + "GetGame", b"{}", "text/plain", 415),
        # An unknown method, an unknown service.
        ("POST", base + "Nope", b"{}", "application/json", 404),
        ("POST", "/strata.v1.Nope/GetGame", b"{}", "application/json", 404),
    ]
    for method, path, body, content_type, expected in cases:
        status, _, raw = request(
            server, method, path, body, {"Content-Type": content_type}
        )
        assert status == expected, (path, body[:20], status, raw[:200])
        assert b"Traceback" not in raw
    # Over the size limit: refused before it is read whole.
    status, _, raw = request(
        server,
        "POST",
        base + "JoinGame",
        b'{"playerName": "' + b"x" * (2 << 20) + b'"}',
        {"Content-Type": "application/json"},
    )
    assert 400 <= status < 500 and b"Traceback" not in raw
    assert request(server, "GET", "/healthz")[0] == 200


def test_a_stream_cut_midway_leaves_the_service_well(server: Running) -> None:
    status, game = call_json(
        server,
        "/strata.v1.GameService/CreateGame",
        {"gameType": "dinosaurs_extinct", "players": 2},
    )
    assert status == 200
    # A Connect stream whose request envelope stops half-way, then the
    # connection drops.
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=5) as raw:
        body = json.dumps({"gameId": game["gameId"]}).encode()
        envelope = b"\x00" + (len(body) + 50).to_bytes(4, "big") + body
        raw.sendall(
            b"POST /strata.v1.GameService/WatchGame HTTP/1.1\r\n"
            b"Host: x\r\nContent-Type: application/connect+json\r\n"
            + f"Content-Length: {len(envelope) + 50}\r\n\r\n".encode()
            + envelope
        )
    status, again = call_json(
        server, "/strata.v1.GameService/GetGame", {"gameId": game["gameId"]}
    )
    assert status == 200 and again["game"]["version"] == "1"


def test_a_cors_preflight_from_an_allowed_origin_is_answered(
    cors_server: Running,
) -> None:
    status, headers, _ = request(
        cors_server,
        "OPTIONS",
        "/strata.v1.GameService/CreateGame",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": (
                "authorization, content-type, connect-protocol-version"
            ),
        },
    )
    assert status == 200
    assert headers["access-control-allow-origin"] == ORIGIN
    allowed = headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "connect-protocol-version" in allowed
    status, headers, body = request(
        cors_server,
        "POST",
        "/strata.v1.GameService/ListGameTypes",
        b"{}",
        {"Origin": ORIGIN, "Content-Type": "application/json"},
    )
    assert status == 200 and json.loads(body)["gameTypes"]
    assert headers["access-control-allow-origin"] == ORIGIN
    exposed = headers["access-control-expose-headers"].lower()
    for name in ("grpc-status", "grpc-message", "grpc-status-details-bin"):
        assert name in exposed


def test_an_origin_not_listed_gets_no_cors_answer(
    cors_server: Running, server: Running
) -> None:
    preflight = {
        "Origin": "https://evil.example",
        "Access-Control-Request-Method": "POST",
    }
    status, headers, _ = request(
        cors_server, "OPTIONS", "/strata.v1.GameService/CreateGame", headers=preflight
    )
    assert status == 400 and "access-control-allow-origin" not in headers
    # Without STRATA_CORS_ORIGINS: the same origin only.
    preflight["Origin"] = ORIGIN
    _, headers, _ = request(
        server, "OPTIONS", "/strata.v1.GameService/CreateGame", headers=preflight
    )
    assert "access-control-allow-origin" not in headers


def test_the_web_table_is_served_at_the_root_and_at_game_links(server: Running):
    for path in ("/", "/game/0123456789abcdef0123456789abcdef"):
        status, headers, body = request(server, "GET", path)
        assert status == 200 and headers["content-type"].startswith("text/html")
        assert b"Strata" in body
