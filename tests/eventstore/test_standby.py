"""Reads of the global log from a PostgreSQL hot standby
(``STRATA_READ_DATABASE_URL``): a real standby, made with ``pg_basebackup``
and started with ``pg_ctl`` on a port of its own beside a private primary
(``reliability.cluster``)."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import select

from eventstore import migrate, tables
from eventstore.base import READ_AFTER, ConcurrencyError, NewEvent, RecordedEvent
from eventstore.postgres import PostgresEventStore

pytestmark = pytest.mark.postgres


def _conninfo(url: str) -> str:
    from eventstore.urls import database_url

    parsed = database_url(url).set(drivername="postgresql")
    return parsed.render_as_string(hide_password=False)


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
                batch = store.read_all(at, limit=5)
                seen.extend(batch)
                if batch:
                    at = batch[-1].position
                elif done.is_set() and at >= max(c[2] for c in committed):
                    # Through the last write. (An empty read after the
                    # writers are done is not the end: another store's
                    # last appends may not be known here, or replayed on
                    # the standby, yet.)
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
        game_id = f"game-{uuid.uuid4()}"
        result = store.append(game_id, 0, [NewEvent("Kept", {})] * 2)

        assert [e.position for e in store.read_all()][-1] == result.last_position
        found = store.read_all_matching(0, 10, ["Kept"])
        assert len(found.events) == 2
        assert (store.standby_reads, store.primary_reads) == (0, 2)
        # A game's stream and the read models too.
        assert len(store.read_stream_nearby(game_id)) == 2
        models = store.read_models()
        assert models is not None
        rows = models.query_nearby(
            select(tables.events.c.version).where(tables.events.c.game_id == game_id),
            "game_list",
            0,
        )
        assert sorted(r.version for r in rows) == [1, 2]
        assert (store.standby_reads, store.primary_reads) == (0, 4)
    finally:
        store.close()


def test_a_game_read_from_a_standby_holds_its_writes_and_never_goes_back(
    clusters: tuple[str, str],
) -> None:
    """``read_stream_nearby`` (GetGame, ListLegalActions, WatchGame,
    ReplayGame): each read is a prefix of the stream with every version
    this store appended, and no read shows fewer versions than one before
    it, while other writers append to the same game."""
    primary_url, standby_url = clusters
    store = PostgresEventStore(primary_url, read_urls=[standby_url])
    elsewhere = PostgresEventStore(primary_url)
    game = f"nearby-{uuid.uuid4()}"
    try:
        store.standby_reads = store.primary_reads = 0
        last_seen = 0
        for version in range(0, 60, 2):
            through = store if version % 4 == 0 else elsewhere
            result = through.append(
                game, version, [NewEvent("Step", {"v": version})] * 2
            )
            read = store.read_stream_nearby(game)
            versions = [e.version for e in read]
            assert versions == list(range(1, len(versions) + 1)), "a prefix"
            assert len(versions) >= last_seen, "never back in time"
            if through is store:
                assert len(versions) >= result.last_version, "read your writes"
            last_seen = len(versions)
        assert store.standby_reads > 0, "the standby answered some reads"
        # A range inside what was seen is read whole (never back in time).
        assert [e.version for e in store.read_stream_nearby(game, 10, 12)] == [
            10,
            11,
            12,
        ]
    finally:
        store.close()
        elsewhere.close()


def test_a_server_reading_games_from_a_standby_shows_each_caller_its_writes(
    clusters: tuple[str, str],
) -> None:
    """Through a real server whose store reads a standby: after each
    command, GetGame and ListLegalActions show at least that command's
    version and never an older game than before; ReplayGame and WatchGame
    give the whole game; the standby answered reads."""
    from strata.v1 import game_service_pb2 as pb

    from clients.client import StrataClient
    from eventstore.factory import open_store
    from service.server import create_server
    from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS

    primary_url, standby_url = clusters
    store = open_store(primary_url, read_urls=[standby_url])
    assert isinstance(store, PostgresEventStore)
    running = create_server(store, admin_token=ADMIN_TOKEN, limits=NO_RATE_LIMITS)
    try:
        with StrataClient(f"127.0.0.1:{running.port}") as client:
            game_id = client.create_game("dinosaurs_extinct", 3).game_id
            token = ""
            for seat in range(3):
                me = client.with_token(token)
                token = me.join_game(game_id, f"p{seat}", seat).seat_token
            me = client.with_token(token)
            me.start_game(game_id)
            store.standby_reads = store.primary_reads = 0
            seen = 0
            for _ in range(200):
                game = me.get_game(game_id)
                assert game.version >= seen, "never back in time"
                listed = me.list_legal_actions(game_id)
                assert listed.version >= game.version
                if game.status == pb.GAME_STATUS_FINISHED or not listed.actions:
                    break
                action = listed.actions[0]
                done = me.submit_command(game_id, action.seat, action.command)
                seen = done.version
                assert me.get_game(game_id).version >= seen, "read your writes"
                (listed_game,) = [
                    g for g in me.list_games().games if g.game_id == game_id
                ]
                assert listed_game.version >= seen, "the list reads your writes"
            final = me.get_game(game_id)
            steps = list(me.replay_game(game_id))
            assert [s.event.version for s in steps] == list(range(1, final.version + 1))
            watched = list(me.watch_game(game_id, follow=False))
            assert [w.version for w in watched] == [s.event.version for s in steps]
            # An anonymous caller claiming a position the log never reached
            # is not made to wait for it (nor made others wait): its reads
            # are answered by the standby, as far as the log goes.
            before = store.standby_reads, store.primary_reads
            inflated = [("strata-read-after", str(10**18))]
            for _ in range(5):
                answered = client.stub.GetGame(
                    pb.GetGameRequest(game_id=game_id), metadata=inflated
                )
                assert answered.game.version == final.version
                listed_games = client.stub.ListGames(
                    pb.ListGamesRequest(), metadata=inflated
                )
                assert game_id in [g.game_id for g in listed_games.games]
            assert store.primary_reads == before[1], "no read fell to the primary"
            assert store.standby_reads >= before[0] + 5
            stats = client.with_token(ADMIN_TOKEN).get_statistics("dinosaurs_extinct")
            assert stats.position >= max(s.event.position for s in steps)
            (de,) = stats.statistics
            assert de.games == 1 and de.finished + de.active == 1
            assert store.standby_reads > 0, "the standby answered game reads"
            print(f"standby reads {store.standby_reads}, primary {store.primary_reads}")
    finally:
        running.stop(grace=0.5)
        store.close()


def test_a_caller_reads_its_writes_on_another_replica_that_has_not_heard_of_them(
    clusters: tuple[str, str],
) -> None:
    """Two replicas over one primary and its standby; the second never
    hears of the first's commits (its LISTEN is cut) and the standby's
    replay is paused. A client writes through the first and reads through
    the second: each answer's ``strata-position``, sent back as
    ``strata-read-after``, makes the second replica leave reads the
    standby cannot answer yet to the primary. (Without it, the second
    replica would read the frozen standby: the last check shows it.)"""
    from clients.client import StrataClient
    from eventstore.factory import open_store
    from service.server import create_server
    from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS

    primary_url, standby_url = clusters
    stores = [open_store(primary_url, read_urls=[standby_url]) for _ in range(2)]
    deaf = stores[1]
    assert isinstance(deaf, PostgresEventStore)
    deaf._noticed = lambda position: None  # type: ignore[method-assign]
    servers = [
        create_server(s, admin_token=ADMIN_TOKEN, limits=NO_RATE_LIMITS, background=())
        for s in stores
    ]
    try:
        with (
            StrataClient(f"127.0.0.1:{servers[0].port}") as writer,
            StrataClient(f"127.0.0.1:{servers[1].port}") as reader,
        ):
            reader._seen = writer._seen  # one caller, two connections
            game_id = writer.create_game("dinosaurs_extinct", 2).game_id
            assert writer._seen.position > 0
            assert reader.get_game(game_id).version == 1
            token = ""
            for seat in range(2):
                joined = writer.with_token(token).join_game(game_id, f"p{seat}", seat)
                token = joined.seat_token
                seated = reader.get_game(game_id).seats
                assert sum(1 for s in seated if s.player_name) == seat + 1
            me, over_there = writer.with_token(token), reader.with_token(token)
            me.start_game(game_id)
            replay = psycopg.connect(_conninfo(standby_url), autocommit=True)
            try:
                replay.execute("SELECT pg_wal_replay_pause()")
                for _ in range(6):
                    listed = over_there.list_legal_actions(game_id)
                    if not listed.actions:
                        break
                    action = listed.actions[0]
                    done = me.submit_command(game_id, action.seat, action.command)
                    assert over_there.get_game(game_id).version >= done.version
                    assert (
                        over_there.list_legal_actions(game_id).version >= done.version
                    )
                assert deaf.known_position() == 0, "the second replica heard nothing"
                assert deaf.primary_reads > 0, "the frozen standby was passed over"
                # Without the position, the second replica's store reads what
                # the frozen standby shows (its cache of the game, filled from
                # the primary, never goes back: only the store shows it).
                latest = me.get_game(game_id).version
                assert len(deaf.read_stream_nearby(game_id)) < latest
                told = READ_AFTER.set(writer._seen.position)
                try:
                    assert len(deaf.read_stream_nearby(game_id)) == latest
                finally:
                    READ_AFTER.reset(told)
            finally:
                replay.execute("SELECT pg_wal_replay_resume()")
                replay.close()
    finally:
        for server in servers:
            server.stop(grace=0.5)
        for store in stores:
            store.close()
