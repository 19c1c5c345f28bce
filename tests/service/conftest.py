"""A real gRPC server on a free port, over a real SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
    bot_moves_per_second=0,
)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """The migrated SQLite database of ``server`` (other replicas may share it)."""
    url = f"sqlite:///{tmp_path / 'strata.sqlite3'}"
    migrate.upgrade(url)
    return url


@pytest.fixture
def server(sqlite_url: str) -> Iterator[Running]:
    store = open_store(sqlite_url)
    running = create_server(
        store, admin_token=ADMIN_TOKEN, port=0, limits=NO_RATE_LIMITS
    )
    try:
        yield running
    finally:
        running.stop(grace=0.5)
        store.close()


@pytest.fixture
def target(server: Running) -> str:
    return f"127.0.0.1:{server.port}"


@pytest.fixture
def client(target: str) -> Iterator[StrataClient]:
    with StrataClient(target, timeout=10) as c:
        yield c


@pytest.fixture
def admin(client: StrataClient) -> StrataClient:
    return client.with_token(ADMIN_TOKEN)
