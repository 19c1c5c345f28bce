"""No stale primary: a store whose connections are on an old primary never
acknowledges a write the new timeline lacks, and finds the new primary by
itself through a URL that names every server.

Real servers (``reliability.cluster``): a private primary and its hot
standby, the primary fenced read-only (as a failover manager may leave an
old primary) and the standby promoted; and a primary whose synchronous
standby never answers, its commit's wait cancelled (PostgreSQL then
answers the commit with success and a warning)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from eventstore import migrate
from eventstore.base import NewCommand, NewEvent, Snapshot, StoreUnavailable
from eventstore.postgres import PostgresEventStore

pytestmark = pytest.mark.postgres


def _sql(port: int, statement: str, *parameters: Any) -> list[tuple[Any, ...]]:
    """Rows of one statement run on a private server as its superuser."""
    with psycopg.connect(
        f"host=127.0.0.1 port={port} user=postgres dbname=postgres",
        autocommit=True,
    ) as connection:
        cursor = connection.execute(statement, parameters or None)
        return cursor.fetchall() if cursor.description else []


def _stored(port: int, game_id: str) -> int:
    """How many events of the game the server at ``port`` holds."""
    return int(
        _sql(port, "SELECT count(*) FROM events WHERE game_id = %s", game_id)[0][0]
    )


def _private() -> Any:
    try:
        from reliability.cluster import PrivateCluster

        cluster = PrivateCluster()
        cluster.create()
    except (FileNotFoundError, OSError) as error:
        pytest.skip(f"no PostgreSQL server binaries to run a cluster: {error}")
    return cluster


@pytest.fixture
def pair() -> Iterator[tuple[Any, Any]]:
    """A migrated private primary and its hot standby."""
    from reliability.cluster import PrivateStandby

    primary = _private()
    try:
        migrate.upgrade(primary.url)
        standby = PrivateStandby(primary)
        try:
            standby.create()
            yield primary, standby
        finally:
            standby.destroy()
    finally:
        primary.destroy()


def _replayed(standby: Any, game_id: str, count: int) -> None:
    deadline = time.monotonic() + 30
    while _stored(standby.port, game_id) < count:
        assert time.monotonic() < deadline, "the standby never replayed the append"
        time.sleep(0.05)


def test_a_primary_fenced_read_only_acknowledges_nothing_and_the_new_one_is_found(
    pair: tuple[Any, Any],
) -> None:
    primary, standby = pair
    both = (
        f"postgresql://postgres@127.0.0.1:{primary.port},127.0.0.1:{standby.port}"
        "/postgres?target_session_attrs=read-write&connect_timeout=5"
    )
    store = PostgresEventStore(both)
    try:
        before = f"before-{uuid.uuid4()}"
        store.append(before, 0, [NewEvent("Kept", {})] * 2)
        store.save_snapshot(Snapshot(before, 2, 1, {"kept": True}))
        store.check_health()
        _replayed(standby, before, 2)

        # The failover manager fences the old primary: it stays up, and the
        # store's connections to it stay open, but it takes no more writes.
        _sql(primary.port, "ALTER SYSTEM SET default_transaction_read_only = on")
        _sql(primary.port, "SELECT pg_reload_conf()")
        time.sleep(0.5)  # the server's backends take the reload in turn

        # Nothing is acknowledged while no server takes writes: health says
        # so on the connection it holds, the append and a write through the
        # pool are UNAVAILABLE (and drop their connections).
        with pytest.raises(StoreUnavailable, match="takes no writes"):
            store.check_health()
        during = f"during-{uuid.uuid4()}"
        with pytest.raises(StoreUnavailable):
            store.append(during, 0, [NewEvent("Refused", {})])
        with pytest.raises(StoreUnavailable):
            store.save_snapshot(Snapshot(before, 2, 1, {"kept": False}))
        with pytest.raises(StoreUnavailable, match="read-only"):
            store.check_health()
        assert _stored(primary.port, during) == 0

        # The standby is promoted: the same store, not reopened, writes there.
        standby.promote()
        after = f"after-{uuid.uuid4()}"
        command = NewCommand(
            command_id="c1", actor="seat:0", payload={}, decided_at_version=0
        )
        store.append(after, 0, [NewEvent("Written", {})], command)
        store.save_snapshot(Snapshot(before, 2, 1, {"kept": "again"}))
        store.check_health()
        assert _stored(standby.port, after) == 1
        assert _stored(primary.port, after) == 0, "nothing went to the old primary"
        assert store.find_command(after, "c1") is not None
        assert [e.version for e in store.read_stream(before)] == [1, 2]
        snapshot = store.load_snapshot(before)
        assert snapshot is not None and snapshot.state == {"kept": "again"}
    finally:
        store.close()


@pytest.fixture
def lonely_primary() -> Iterator[Any]:
    """A migrated private server whose commits wait for a synchronous
    standby that never comes (a primary cut off from its standby)."""
    primary = _private()
    try:
        migrate.upgrade(primary.url)
        yield primary
    finally:
        primary.destroy()


def test_a_commit_whose_wait_for_the_standby_is_cancelled_is_not_acknowledged(
    lonely_primary: Any,
) -> None:
    port = lonely_primary.port
    store = PostgresEventStore(lonely_primary.url)
    try:
        store.append(f"warm-{uuid.uuid4()}", 0, [NewEvent("Warm", {})])
        _sql(port, "ALTER SYSTEM SET synchronous_standby_names = 'gone'")
        _sql(port, "SELECT pg_reload_conf()")
        time.sleep(0.5)

        game = f"cut-off-{uuid.uuid4()}"
        outcome: list[BaseException | None] = []

        def append() -> None:
            try:
                store.append(game, 0, [NewEvent("Unreplicated", {})])
                outcome.append(None)
            except BaseException as error:
                outcome.append(error)

        appending = threading.Thread(target=append)
        appending.start()
        deadline = time.monotonic() + 20
        waiting: list[tuple[Any, ...]] = []
        while not waiting:
            assert time.monotonic() < deadline, "the commit never waited"
            time.sleep(0.05)
            waiting = _sql(
                port,
                "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' "
                "AND application_name = 'strata-writer'",
            )
        assert outcome == [], "no answer while the commit waits for the standby"
        # What an operator, or a tool, may do to a stuck commit: cancel its
        # wait. PostgreSQL then reports success, with a warning.
        _sql(port, "SELECT pg_cancel_backend(%s)", waiting[0][0])
        appending.join(20)

        assert len(outcome) == 1
        assert isinstance(outcome[0], StoreUnavailable), outcome
        assert "outcome is unknown" in str(outcome[0])
        # It did commit locally: answering success would have acknowledged
        # a write no standby has.
        assert _stored(port, game) == 1

        _sql(port, "ALTER SYSTEM RESET synchronous_standby_names")
        _sql(port, "SELECT pg_reload_conf()")
        time.sleep(0.5)
        store.append(game, 1, [NewEvent("Replicated", {})])
        assert [e.version for e in store.read_stream(game)] == [1, 2]
    finally:
        store.close()


def test_the_urls_keepalives_reach_the_stores_own_connections(
    postgres_store_url: str,
) -> None:
    """How soon a connection to a machine that died silently is given up is
    the operator's to set in the URL (docs/SCALING.md): the store's own
    defaults do not override it."""
    url = f"{postgres_store_url}?keepalives_idle=7&tcp_user_timeout=9000"
    store = PostgresEventStore(url)
    try:
        connection = store._connect_reader()
        try:
            parameters = connection.info.get_parameters()
        finally:
            connection.close()
        assert parameters["keepalives_idle"] == "7"
        assert parameters["tcp_user_timeout"] == "9000"
        assert parameters["keepalives"] == "1"
    finally:
        store.close()
