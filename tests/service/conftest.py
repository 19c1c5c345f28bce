"""A real gRPC server on a free port, over a real SQLite store."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clients.client import StrataClient
from eventstore import migrate
from eventstore.factory import open_store
from service.limits import LimitSettings
from service.server import Running, create_server

ADMIN_TOKEN = "test-admin-token"

#: The servers of these tests play whole games as fast as the machine lets
#: them, from one connection, and seat many players from one address: the
#: production rates and quotas (500 calls/s a connection, 250 a game, 8
#: open seats an address, …) would make them fail on a fast machine. The
#: limits have their own tests (test_limits.py, test_abuse.py), with their
#: own settings.
NO_RATE_LIMITS = LimitSettings(
    rate_per_peer=0,
    rate_per_address=0,
    rate_per_token=0,
    rate_per_game=0,
    creations_per_minute=0,
    max_open_seats=0,
    max_timed_games=0,
    bot_moves_per_second=0,
)


def http_call(
    port: int,
    method: str,
    path: str,
    body: Any = b"",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request to the HTTP listener on ``port``: status, headers (names
    in lower case) and body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return (
            response.status,
            {k.lower(): v for k, v in response.getheaders()},
            response.read(),
        )
    finally:
        connection.close()


def serve(url: str) -> Iterator[Running]:
    """A real server (gRPC and HTTP on free ports) on the store at ``url``,
    with the test limits (:data:`NO_RATE_LIMITS`), until the generator ends."""
    store = open_store(url)
    running = create_server(
        store, admin_token=ADMIN_TOKEN, port=0, limits=NO_RATE_LIMITS, http_port=0
    )
    try:
        yield running
    finally:
        running.stop(grace=0.5)
        store.close()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """The migrated SQLite database of ``server`` (other replicas may share it)."""
    url = f"sqlite:///{tmp_path / 'strata.sqlite3'}"
    migrate.upgrade(url)
    return url


#: The transports every end-to-end case of the matrix runs over: gRPC,
#: Connect (JSON) and gRPC-Web, to one server (its gRPC port and its HTTP
#: listener).
TRANSPORTS = ["grpc", "connect", "grpc-web"]


@pytest.fixture(params=["grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    """The transport of ``client`` (a module runs the matrix by overriding
    this fixture with ``params=TRANSPORTS``)."""
    name: str = request.param
    return name


@pytest.fixture
def server(sqlite_url: str) -> Iterator[Running]:
    yield from serve(sqlite_url)


#: The integration token of ``feed_server``; its admin token is "admin".
INTEGRATION_TOKEN = "integration-secret"


@pytest.fixture
def feed_server(sqlite_url: str) -> Iterator[Running]:
    """A real server that also takes an integration token (the feed's)."""
    store = open_store(sqlite_url)
    running = create_server(
        store,
        admin_token="admin",
        port=0,
        integration_tokens=(INTEGRATION_TOKEN,),
        limits=NO_RATE_LIMITS,
    )
    yield running
    running.stop(0.5)
    store.close()


@pytest.fixture
def target(server: Running) -> str:
    return f"127.0.0.1:{server.port}"


def client_for(running: Running, transport: str, timeout: float = 10) -> StrataClient:
    """A client of ``running`` over ``transport``."""
    if transport == "grpc":
        return StrataClient(f"127.0.0.1:{running.port}", timeout=timeout)
    return StrataClient(
        f"http://127.0.0.1:{running.http_port}", timeout=timeout, transport=transport
    )


@pytest.fixture
def client(server: Running, transport: str) -> Iterator[StrataClient]:
    with client_for(server, transport) as c:
        yield c


@pytest.fixture
def admin(client: StrataClient) -> StrataClient:
    return client.with_token(ADMIN_TOKEN)


def play_first_actions(
    client: StrataClient, game_id: str, tokens: list[str], moves: int
) -> None:
    """Up to ``moves`` moves: each time the first legal action of any seat
    (as the admin lists them), sent with that seat's token; fewer once
    nobody may act."""
    admin = client.with_token(ADMIN_TOKEN)
    for _ in range(moves):
        listed = admin.list_legal_actions(game_id)
        if not listed.actions:
            return
        action = listed.actions[0]
        client.with_token(tokens[action.seat]).submit_command(
            game_id, action.seat, action.command
        )
