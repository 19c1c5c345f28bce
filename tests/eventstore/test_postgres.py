"""What only the PostgreSQL store promises: its URLs, LISTEN/NOTIFY through
dropped connections, and a clear error when the server is away."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy.engine import URL

from eventstore import migrate
from eventstore.base import ConcurrencyError, EventStore, NewEvent, StoreUnavailable
from eventstore.postgres import PostgresEventStore
from eventstore.urls import database_url
from tests.eventstore import raw_sql

pytestmark = pytest.mark.postgres

UNREACHABLE = "postgresql://postgres@127.0.0.1:1/strata?connect_timeout=2"


@pytest.fixture
def url(postgres_store_url: str) -> str:
    return postgres_store_url


@pytest.fixture
def stores(url: str) -> Iterator[list[EventStore]]:
    opened: list[EventStore] = []
    yield opened
    for store in opened:
        store.close()


def _open(stores: list[EventStore], url: str) -> EventStore:
    store = PostgresEventStore(url)
    stores.append(store)
    return store


def _terminate(url: str, application_name: str) -> int:
    """Kill this database's server connections of one application; how many."""
    return int(
        raw_sql.execute(
            url,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = :name "
            "AND pid <> pg_backend_pid()",
            name=application_name,
        )
    )


def _count_listeners(url: str) -> int:
    return int(
        raw_sql.execute(
            url,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = "
            "current_database() AND application_name = 'strata-listener'",
        )
    )


@pytest.mark.parametrize("scheme", ["postgres", "postgresql", "postgresql+psycopg"])
def test_every_postgres_url_scheme_opens_the_store(
    url: str, stores: list[EventStore], scheme: str
) -> None:
    parsed = database_url(url).set(drivername=scheme)

    store = _open(stores, parsed.render_as_string(hide_password=False))

    assert store.last_position() >= 0


def test_the_listener_reconnects_after_its_connection_is_killed(
    url: str, stores: list[EventStore]
) -> None:
    store, other = _open(stores, url), _open(stores, url)
    start = other.last_position()
    assert store.wait_for_append(start, 0.1) is False  # starts the listener
    assert _terminate(url, "strata-listener") == 1

    other.append(f"game-{uuid.uuid4()}", 0, [NewEvent("WhileAway", {})])
    assert store.wait_for_append(start, 5), "the reconnect catches up"

    deadline = time.monotonic() + 5
    while _count_listeners(url) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _count_listeners(url) == 1
    woken: list[bool] = []
    waiter = threading.Thread(
        target=lambda: woken.append(store.wait_for_append(start + 1, 10))
    )
    waiter.start()
    time.sleep(0.2)
    assert waiter.is_alive()
    other.append(f"game-{uuid.uuid4()}", 0, [NewEvent("AfterReconnect", {})])
    waiter.join(2)
    assert woken == [True], "woken by a notification on the new connection"


def test_a_rolled_back_append_wakes_nobody(url: str, stores: list[EventStore]) -> None:
    store, other = _open(stores, url), _open(stores, url)
    other.append(f"game-{uuid.uuid4()}", 0, [NewEvent("First", {})] * 3)
    last = other.last_position()
    assert store.wait_for_append(last, 0.1) is False  # starts the listener
    # Rewind the counter so that the next claim collides and rolls back.
    raw_sql.execute(url, "UPDATE counters SET value = value - 1")

    with pytest.raises(ConcurrencyError):
        other.append(f"game-{uuid.uuid4()}", 0, [NewEvent("Doomed", {})] * 3)

    assert store.wait_for_append(last, 0.5) is False


def test_the_pool_survives_the_server_dropping_its_connections(
    url: str, stores: list[EventStore]
) -> None:
    store = _open(stores, url)
    store.last_position()
    assert _terminate(url, "strata") >= 1

    store.append(f"game-{uuid.uuid4()}", 0, [NewEvent("AfterDrop", {})])


def test_an_unreachable_server_makes_the_store_unavailable() -> None:
    store = PostgresEventStore(UNREACHABLE)
    try:
        with pytest.raises(StoreUnavailable):
            store.append("game", 0, [NewEvent("Created", {})])
        with pytest.raises(StoreUnavailable):
            store.read_all()
        assert store.wait_for_append(0, 0.2) is False
    finally:
        store.close()
    with pytest.raises(StoreUnavailable):
        migrate.check(UNREACHABLE)


def test_passwords_survive_the_url_rewrite() -> None:
    url = database_url("postgres://user:p%40ss%25word@db.example:6543/strata")

    assert isinstance(url, URL)
    assert url.drivername == "postgresql+psycopg"
    assert url.password == "p@ss%word"
    assert (url.host, url.port, url.database) == ("db.example", 6543, "strata")


def test_one_batch_mixing_logged_stale_and_plain_appends_answers_each(
    url: str, stores: list[EventStore]
) -> None:
    """Appends queued while the committer is busy share one batch: with and
    without a command to log, on one stream in sequence and on others, one
    of them stale; each gets its own answer and the stream its events."""
    from eventstore.base import NewCommand
    from eventstore.groupcommit import GroupCommitter

    store = _open(stores, url)
    assert isinstance(store, PostgresEventStore)
    shared, other = f"g-{uuid.uuid4().hex}", f"g-{uuid.uuid4().hex}"
    committer = store._group_committer()
    busy = threading.Lock()
    original = GroupCommitter._commit

    def held(self: GroupCommitter, batch: object) -> None:
        with busy:
            original(self, batch)  # type: ignore[arg-type]

    outcomes: dict[str, object] = {}

    def append(name: str, game: str, expected: int, logged: bool) -> None:
        command = NewCommand(f"c-{name}", "test", {"n": name}) if logged else None
        try:
            result = store.append(game, expected, [NewEvent("E", {"n": name})], command)
            outcomes[name] = (result.first_version, result.last_version)
        except ConcurrencyError as error:
            outcomes[name] = ("conflict", error.actual)

    plan = [
        ("a", shared, 0, True),
        ("b", shared, 1, False),
        ("c", other, 0, False),
        ("d", shared, 2, True),
        ("stale", other, 0, True),
        ("e", shared, 3, False),
    ]
    threads = [threading.Thread(target=append, args=step) for step in plan]
    with busy:
        GroupCommitter._commit = held  # type: ignore[method-assign]
        try:
            for thread in threads:  # queued in order while the batch waits
                thread.start()
                time.sleep(0.05)
        finally:
            GroupCommitter._commit = original  # type: ignore[method-assign]
    for thread in threads:
        thread.join(10)

    assert outcomes == {
        "a": (1, 1),
        "b": (2, 2),
        "c": (1, 1),
        "d": (3, 3),
        "stale": ("conflict", 1),
        "e": (4, 4),
    }
    assert [e.data["n"] for e in store.read_stream(shared)] == ["a", "b", "d", "e"]
    assert store.find_command(other, "c-stale") is None
    assert committer is store._group_committer()
