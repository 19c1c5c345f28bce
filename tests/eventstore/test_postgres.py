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

    away = other.append(f"game-{uuid.uuid4()}", 0, [NewEvent("WhileAway", {})])
    assert store.wait_for_append(start, 5), "the reconnect catches up"

    deadline = time.monotonic() + 5
    while _count_listeners(url) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _count_listeners(url) == 1
    woken: list[bool] = []
    waiter = threading.Thread(
        target=lambda: woken.append(store.wait_for_append(away.last_position, 10))
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
    # A trigger makes the next insert of events collide and roll back.
    doomed = f"game-{uuid.uuid4()}"
    raw_sql.execute(
        url,
        "CREATE OR REPLACE FUNCTION doom() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE unique_violation; END $$",
    )
    raw_sql.execute(
        url,
        f"CREATE TRIGGER doom BEFORE INSERT ON events FOR EACH ROW "
        f"WHEN (NEW.game_id = '{doomed}') EXECUTE FUNCTION doom()",
    )

    try:
        with pytest.raises(ConcurrencyError):
            other.append(doomed, 0, [NewEvent("Doomed", {})] * 3)
    finally:
        raw_sql.execute(url, "DROP TRIGGER doom ON events")

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


# -- the global log without a global lock -----------------------------------


def _write_in_a_process(
    url: str, seed: int, appends: int, threads: int
) -> list[tuple[str, int, int]]:
    """A writer process: ``threads`` threads append ``appends`` times each
    to games of their own and of everyone's, some of them slow (see the
    test); the (game, version, position) of every event committed."""
    import random

    store = PostgresEventStore(url)
    committed: list[tuple[str, int, int]] = []
    lock = threading.Lock()
    shared = [f"shared-{n}" for n in range(4)]

    def write(thread: int) -> None:
        rng = random.Random(seed * 100 + thread)
        own = [
            f"{kind}-{seed}-{thread}-{n}" for kind in ("slow", "fast") for n in (1, 2)
        ]
        for _ in range(appends):
            while True:
                game = rng.choice(own + shared)
                version = store.stream_version(game)
                size = rng.randint(1, 3)
                try:
                    result = store.append(
                        game,
                        version,
                        [NewEvent("Raced", {"n": n}) for n in range(size)],
                    )
                except ConcurrencyError:
                    continue
                break
            with lock:
                committed.extend(
                    (
                        game,
                        version,
                        result.last_position - result.last_version + version,
                    )
                    for version in range(result.first_version, result.last_version + 1)
                )

    workers = [threading.Thread(target=write, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    store.close()
    return committed


def test_a_follower_racing_writers_in_several_processes_never_skips_an_event(
    url: str, stores: list[EventStore]
) -> None:
    """Four processes of four threads each append to their own and shared
    games while a follower reads the log in small batches. The appends of a
    game whose id begins with ``slow-`` hold their transaction open for up
    to 20 ms (a trigger sleeps), so transactions commit out of the order of
    their ids all the time: the follower must still see every committed
    event exactly once, in increasing positions."""
    import multiprocessing

    raw_sql.execute(
        url,
        "CREATE OR REPLACE FUNCTION dawdle() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN PERFORM pg_sleep(random() * 0.02); RETURN NEW; END $$",
    )
    raw_sql.execute(
        url,
        "CREATE TRIGGER dawdle BEFORE INSERT ON events FOR EACH ROW "
        "WHEN (NEW.game_id LIKE 'slow-%' AND NEW.version % 2 = 1) "
        "EXECUTE FUNCTION dawdle()",
    )
    follower_store = _open(stores, url)
    seen: list[tuple[str, int, int]] = []
    held_back = 0
    done = threading.Event()
    errors: list[BaseException] = []

    def follow() -> None:
        nonlocal held_back
        position = 0
        try:
            while True:
                finished = done.is_set()
                batch = follower_store.read_all(position, limit=5)
                seen.extend((e.game_id, e.version, e.position) for e in batch)
                if batch:
                    position = batch[-1].position
                elif finished:
                    return
                else:
                    held_back += follower_store.last_position() > position
                    follower_store.wait_for_append(position, 0.2)
        except BaseException as error:
            errors.append(error)

    follower = threading.Thread(target=follow)
    follower.start()
    try:
        context = multiprocessing.get_context("spawn")
        with context.Pool(4) as pool:
            results = pool.starmap(
                _write_in_a_process, [(url, seed, 30, 4) for seed in range(4)]
            )
    finally:
        done.set()
        follower.join(60)
        raw_sql.execute(url, "DROP TRIGGER dawdle ON events")

    committed = sorted(event for result in results for event in result)
    assert not errors
    assert not follower.is_alive()
    assert len(committed) >= 4 * 4 * 30
    positions = [position for _, _, position in seen]
    assert positions == sorted(set(positions)), "increasing, each event once"
    assert sorted(seen) == committed, "every committed event seen, none skipped"
    print(f"{len(committed)} events; follower held back {held_back} times")


def test_an_append_of_more_events_than_a_transaction_can_position_is_refused(
    url: str, stores: list[EventStore]
) -> None:
    store = _open(stores, url)
    game = f"game-{uuid.uuid4()}"

    with pytest.raises(ValueError, match="at most 65535"):
        store.append(game, 0, [NewEvent("Many", {})] * 65_536)

    assert store.stream_version(game) == 0
    assert store.append(game, 0, [NewEvent("Many", {})] * 65_535).last_version == 65_535


def test_a_group_commit_batch_holds_at_most_a_transactions_worth_of_events() -> None:
    from datetime import UTC, datetime

    from eventstore.groupcommit import MAX_EVENTS_PER_TRANSACTION, Append, _fitting

    def appends(*counts: int) -> list[Append]:
        at = datetime.now(UTC)
        return [Append(f"g{i}", 0, n, "[]", at) for i, n in enumerate(counts)]

    assert _fitting(appends(3, 3, 3), 512) == 3
    assert _fitting(appends(3, 3, 3), 2) == 2
    assert _fitting(appends(MAX_EVENTS_PER_TRANSACTION - 1, 1, 1), 512) == 2
    assert _fitting(appends(MAX_EVENTS_PER_TRANSACTION, 1), 512) == 1
    assert _fitting(appends(40_000, 40_000, 1), 512) == 1
    assert _fitting([], 512) == 0
