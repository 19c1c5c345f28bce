"""Reads of the global log from a PostgreSQL hot standby
(``STRATA_READ_DATABASE_URL``): a real standby, made with ``pg_basebackup``
and started with ``pg_ctl`` on a port of its own beside a private primary
(``reliability.cluster``)."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Iterator

import pytest

from eventstore import migrate
from eventstore.base import ConcurrencyError, NewEvent, RecordedEvent
from eventstore.postgres import PostgresEventStore

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[str, str]]:
    """The URLs of a private primary, migrated, and of its hot standby."""
    try:
        from reliability.cluster import PrivateCluster, PrivateStandby

        primary = PrivateCluster()
        primary.create()
    except (FileNotFoundError, OSError) as error:
        pytest.skip(f"no PostgreSQL server binaries to run a cluster: {error}")
    try:
        migrate.upgrade(primary.url)
        standby = PrivateStandby(primary)
        try:
            standby.create()
            yield primary.url, standby.url
        finally:
            standby.destroy()
    finally:
        primary.destroy()


def test_a_follower_reading_a_standby_reads_its_writes_and_never_skips(
    clusters: tuple[str, str],
) -> None:
    primary_url, standby_url = clusters
    store = PostgresEventStore(primary_url, read_urls=[standby_url])
    elsewhere = PostgresEventStore(primary_url)  # another process's appends
    try:
        # Read your writes: an append is in the next read of the log, from
        # the standby once it has replayed it (or from the primary).
        game, position = f"own-{uuid.uuid4()}", 0
        for version in range(20):
            result = store.append(game, version, [NewEvent("Own", {"v": version})])
            read = store.read_all(position)
            assert read and read[-1].position == result.last_position
            position = result.last_position
        assert store.standby_reads > 0, "the standby answered some reads"

        # Writers on the primary through both stores race a follower that
        # reads through the standby, five events at a time.
        committed: list[tuple[str, int, int]] = []
        lock = threading.Lock()
        done = threading.Event()
        seen: list[RecordedEvent] = []

        def write(seed: int) -> None:
            rng = random.Random(seed)
            through = store if seed % 2 else elsewhere
            games = [f"race-{seed}-{n}" for n in range(3)] + ["shared"]
            for _ in range(40):
                while True:
                    game = rng.choice(games)
                    version = through.stream_version(game)
                    try:
                        result = through.append(
                            game, version, [NewEvent("Raced", {})] * rng.randint(1, 3)
                        )
                    except ConcurrencyError:
                        continue
                    break
                with lock:
                    committed.extend(
                        (game, v, result.last_position - result.last_version + v)
                        for v in range(result.first_version, result.last_version + 1)
                    )

        def follow() -> None:
            at = position
            while True:
                finished = done.is_set()
                batch = store.read_all(at, limit=5)
                seen.extend(batch)
                if batch:
                    at = batch[-1].position
                elif finished:
                    return
                else:
                    store.wait_for_append(at, 0.2)

        follower = threading.Thread(target=follow)
        writers = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        follower.start()
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        done.set()
        follower.join(60)

        assert not follower.is_alive()
        positions = [e.position for e in seen]
        assert positions == sorted(set(positions)), "never back, never twice"
        assert sorted((e.game_id, e.version, e.position) for e in seen) == sorted(
            committed
        ), "every committed event, none skipped"
        print(f"standby reads {store.standby_reads}, primary {store.primary_reads}")
    finally:
        store.close()
        elsewhere.close()


def test_a_standby_out_of_reach_leaves_the_reads_to_the_primary(
    postgres_store_url: str,
) -> None:
    store = PostgresEventStore(
        postgres_store_url,
        read_urls=["postgresql://postgres@127.0.0.1:1/strata?connect_timeout=2"],
    )
    try:
        result = store.append(f"game-{uuid.uuid4()}", 0, [NewEvent("Kept", {})] * 2)

        assert [e.position for e in store.read_all()][-1] == result.last_position
        found = store.read_all_matching(0, 10, ["Kept"])
        assert len(found.events) == 2
        assert (store.standby_reads, store.primary_reads) == (0, 2)
    finally:
        store.close()
