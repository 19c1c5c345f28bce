"""Calls that never reach a method are calls too: a Connect request to no
method or service (404), of a content type not served (415), with a
malformed protocol header (400) or the wrong HTTP method (405), and a gRPC
call to a method that does not exist (UNIMPLEMENTED) each get the access
line and the RPC metric every other call gets, from a real `strata serve`
as an operator reads them (its log, a scrape). And the ``CreateGame``
access line names the game it made."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from tests.service.conftest import http_call
from tests.service.served import Served
from tests.service.test_operations import figure

CALLS = "rpc_server_call_duration_seconds_count"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    running = Served(tmp_path_factory.mktemp("malformed"))
    try:
        running.wait_serving()
        yield running
    finally:
        running.stop()


def access_line(served: Served, request_id: str) -> dict[str, Any]:
    """The access line (``"event": "rpc"``) of the call ``request_id``."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for line in served.lines():
            if line.get("event") == "rpc" and line.get("request_id") == request_id:
                return line
        time.sleep(0.05)
    raise AssertionError(f"no access line for {request_id}")


def scrape(served: Served) -> str:
    time.sleep(1.1)  # a scrape is rendered at most once a second
    status, _, body = http_call(served.http_port, "GET", "/metrics")
    assert status == 200
    return body.decode()


@pytest.mark.parametrize(
    ("path", "headers", "status", "code", "method"),
    [
        (
            "/strata.v1.GameService/NoSuchMethod",
            {"content-type": "application/json"},
            404,
            "UNIMPLEMENTED",
            "strata.v1.GameService/_OTHER",
        ),
        (
            "/strata.v1.NoSuchService/Anything",
            {"content-type": "application/json"},
            404,
            "UNIMPLEMENTED",
            "_OTHER",
        ),
        (
            "/strata.v1.GameService/ListGameTypes",
            {"content-type": "text/plain"},
            415,
            "UNIMPLEMENTED",
            "strata.v1.GameService/ListGameTypes",
        ),
        (
            "/strata.v1.GameService/ListGameTypes",
            {"content-type": "application/json", "connect-protocol-version": "7"},
            400,
            "INVALID_ARGUMENT",
            "strata.v1.GameService/ListGameTypes",
        ),
    ],
    ids=["no-method", "no-service", "content-type", "protocol-header"],
)
def test_a_malformed_connect_request_has_its_access_line_and_metric(
    served: Served,
    path: str,
    headers: dict[str, str],
    status: int,
    code: str,
    method: str,
) -> None:
    request_id = f"malformed-{status}-{len(path)}-{len(headers)}"
    answered, _, _ = http_call(
        served.http_port,
        "POST",
        path,
        b"{}",
        {**headers, "x-request-id": request_id},
    )
    assert answered == status
    line = access_line(served, request_id)
    assert line["code"] == code
    assert line["reason"] == f"HTTP_{status}"
    assert line["method"] == f"/{method}"
    assert line["transport"] == "connect"
    assert (
        figure(
            scrape(served),
            CALLS,
            rpc_method=method,
            rpc_response_status_code=code,
            rpc_system_name="connectrpc",
        )
        >= 1
    )


@pytest.mark.parametrize(
    ("asked", "method"),
    [
        ("/strata.v1.GameService/NoSuchMethod", "strata.v1.GameService/_OTHER"),
        ("/some.other.Service/Method", "_OTHER"),
    ],
)
def test_a_grpc_call_to_no_method_is_unimplemented_with_its_line_and_metric(
    served: Served, asked: str, method: str
) -> None:
    request_id = f"unimplemented-{len(asked)}"
    with (
        grpc.insecure_channel(f"127.0.0.1:{served.port}") as channel,
        pytest.raises(grpc.RpcError) as raised,
    ):
        channel.unary_unary(asked)(
            b"", timeout=10, metadata=(("x-request-id", request_id),)
        )
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    line = access_line(served, request_id)
    assert (line["code"], line["reason"]) == ("UNIMPLEMENTED", "UNKNOWN_METHOD")
    assert line["method"] == f"/{method}" and line["transport"] == "grpc"
    assert (
        figure(
            scrape(served),
            CALLS,
            rpc_method=method,
            rpc_response_status_code="UNIMPLEMENTED",
            rpc_system_name="grpc",
        )
        >= 1
    )


def test_health_and_reflection_are_still_served_beside_the_catch_all(
    served: Served,
) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{served.port}") as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=10
        )
    assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_the_create_game_access_line_names_the_game_it_made(served: Served) -> None:
    status, _, body = http_call(
        served.http_port,
        "POST",
        "/strata.v1.GameService/CreateGame",
        json.dumps({"gameType": "dinosaurs_extinct", "players": 2}).encode(),
        {"content-type": "application/json", "x-request-id": "create-one"},
    )
    assert status == 200
    game_id = json.loads(body)["gameId"]
    line = access_line(served, "create-one")
    assert line["code"] == "OK" and line["game_id"] == game_id


def test_no_line_of_the_log_is_an_error(served: Served) -> None:
    """Nothing a caller sent wrong is the service's error."""
    levels = {line["level"] for line in served.lines()}
    assert "error" not in levels


def test_made_up_grpc_paths_on_the_http_port_grow_no_metric(served: Served) -> None:
    """gRPC over HTTP/1.1 is refused (it needs HTTP/2) with its line and
    metric, named as the method when it is one, else ``_OTHER``: a caller
    making up paths cannot add series to the scrape."""
    made_up = [f"/strata.v1.GameService/Made{n}Up" for n in range(20)]
    made_up += [f"/made.up{n}.Service/Call" for n in range(20)]
    for path in made_up:
        status, _, _ = http_call(
            served.http_port, "POST", path, b"", {"content-type": "application/grpc"}
        )
        assert status == 415
    body = scrape(served)
    assert not [path for path in made_up if path.lstrip("/") in body]
    for method in ("strata.v1.GameService/_OTHER", "_OTHER"):
        assert (
            figure(
                body,
                CALLS,
                rpc_method=method,
                rpc_response_status_code="UNIMPLEMENTED",
            )
            >= 20
        )
