"""Projections: the game list rebuilt from zero equals the one built live,
after concurrent writers too; a runner killed mid-batch and restarted
misses nothing and doubles nothing; the integration feed and statistics."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import grpc
import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from domain import registry
from eventstore import migrate
from eventstore.base import EventStore, ReadModels
from eventstore.factory import open_store
from eventstore.sql import SQLAlchemyEventStore
from service.answers import seats_to_proto
from service.application import GameApp
from service.callers import Caller
from service.door import Call
from service.projections import GAME_LIST, GameListProjection, GameListRows
from service.servicer import GameServicer
from tests.conftest import DEFAULT_POSTGRES_URL
from tests.extra_games import python_path
from tests.service.conftest import INTEGRATION_TOKEN
from tests.service.test_replays import random_game

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sql_store(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'projections.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_server").create_schema()
    migrate.upgrade(url)
    store = open_store(url)
    assert isinstance(store, SQLAlchemyEventStore)
    yield store
    store.close()


def read_models(store: EventStore) -> ReadModels:
    models = store.read_models()
    assert models is not None  # a SQL store
    return models


def test_a_rebuilt_game_list_equals_the_live_one_after_concurrent_writers(sql_store):
    store = sql_store
    live = GameListProjection(store, batch=7)
    stop = threading.Event()
    runner = threading.Thread(target=live.run_forever, args=(stop, 0.05))
    runner.start()
    types = registry.game_types()

    def writer(n: int) -> None:
        app = GameApp(store)
        for k in range(3):
            game_type = types[(n + k) % len(types)]
            rules = registry.rules_for(game_type)
            random_game(app, game_type, rules.min_players, f"writer-{n}-{k}")
        app.create_game(Caller(admin=True), types[0], 2, seed=f"open-{n}")

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    assert live.wait_for(store.last_position(), timeout=60)
    stop.set()
    runner.join()
    built_live = live.models.all_games()
    assert len(built_live) == 16
    assert sum(1 for g in built_live if g.status == "finished") == 12

    rebuilt = GameListProjection(store, batch=1000)
    rebuilt.rebuild()
    assert rebuilt.models.all_games() == built_live
    assert rebuilt.position == store.last_position()


def test_each_row_keeps_its_games_first_position_met_live_midway_or_rebuilt(
    sql_store,
):
    """A row's created_position (the list's order) is the log position of
    its game's first event, whether the projection met the game at its
    creation or mid-way (a runner started after it, its cache empty); a
    rebuild from zero writes the same rows."""
    store = sql_store
    app = GameApp(store)
    admin = Caller(admin=True)
    first = app.create_game(admin, "cubosaurs", 2, request_id="order-a").game_id
    GameListProjection(store, batch=2).run_until_caught_up()
    second = app.create_game(admin, "cubosaurs", 2).game_id
    for seat, name in enumerate(["Ada", "Bo"]):
        app.join_game(Caller(token=f"st_{name}"), first, seat, name)
    restarted = GameListProjection(store, batch=2)  # meets ``first`` mid-way

    restarted.run_until_caught_up()

    built_live = restarted.models.all_games()
    assert {g.game_id: g.created_position for g in built_live} == {
        game_id: store.read_stream(game_id, 1, 1)[0].position
        for game_id in (first, second)
    }
    assert [g.seats_taken for g in built_live if g.game_id == first] == [2]
    rebuilt = GameListProjection(store, batch=1000)
    rebuilt.rebuild()
    assert rebuilt.models.all_games() == built_live


def test_a_batch_that_fails_midway_leaves_nothing_behind(sql_store, monkeypatch):
    store = sql_store
    app = GameApp(store)
    for seed in range(3):
        random_game(app, "dinosaurs_extinct", 2, f"fail-{seed}")
    projection = GameListProjection(store, batch=50)
    projection.run_once()
    before = (projection.models.checkpoint(GAME_LIST), projection.models.all_games())
    original = GameListRows.apply_game_rows

    def crash(self, name, start, end, rows):
        with self.models.store.write_transaction() as connection:
            from eventstore.tables import game_list

            connection.execute(game_list.delete())
            raise RuntimeError("killed mid-batch")

    monkeypatch.setattr(GameListRows, "apply_game_rows", crash)
    with pytest.raises(RuntimeError):
        projection.run_once()
    assert (
        projection.models.checkpoint(GAME_LIST),
        projection.models.all_games(),
    ) == before
    monkeypatch.setattr(GameListRows, "apply_game_rows", original)
    projection.run_until_caught_up()
    fresh = GameListProjection(store)
    fresh.rebuild()
    assert projection.models.all_games() == fresh.models.all_games()


def test_a_runner_killed_with_sigkill_and_restarted_misses_and_doubles_nothing(
    tmp_path,
):
    url = f"sqlite:///{tmp_path / 'kill.sqlite3'}"
    migrate.upgrade(url)
    store = open_store(url)
    assert isinstance(store, SQLAlchemyEventStore)
    app = GameApp(store)
    for seed in range(8):
        random_game(app, "dinosaurs_extinct", 3, f"kill-{seed}")
    script = (
        "import sys, time\n"
        "from eventstore.factory import open_store\n"
        "from service.projections import GameListProjection\n"
        "p = GameListProjection(open_store(sys.argv[1]), batch=10)\n"
        "while p.run_once():\n"
        "    print(p.position, flush=True)\n"
        "    time.sleep(0.01)\n"
    )
    env = {**os.environ, "PYTHONPATH": python_path(ROOT, ROOT / "protos")}
    runner = subprocess.Popen(
        [sys.executable, "-c", script, url], stdout=subprocess.PIPE, env=env, text=True
    )
    assert runner.stdout is not None
    for _ in range(5):
        runner.stdout.readline()
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    models = GameListRows(read_models(store))
    stopped_at = models.checkpoint(GAME_LIST)
    assert 0 < stopped_at < store.last_position()
    restarted = GameListProjection(store, batch=10)
    restarted.run_until_caught_up()
    fresh = GameListProjection(store)
    live_rows = restarted.models.all_games()
    fresh.rebuild()
    assert fresh.models.all_games() == live_rows
    assert len(live_rows) == 8 and all(r.status == "finished" for r in live_rows)
    store.close()


def test_the_integration_feed_follows_every_game_in_order_with_filters(feed_server):
    app = feed_server.app
    ids = {
        game_type: random_game(app, game_type, 2, f"feed-{game_type}")
        for game_type in registry.game_types()
    }
    target = f"127.0.0.1:{feed_server.port}"
    with StrataClient(target, token=INTEGRATION_TOKEN) as feed:
        everything = [r for r in feed.follow_log(follow=False) if r.HasField("event")]
        positions = [r.event.position for r in everything]
        assert positions == list(range(1, app.store.last_position() + 1))
        first_half = everything[: len(everything) // 2]
        resumed = [
            r
            for r in feed.follow_log(
                after_position=first_half[-1].position, follow=False
            )
            if r.HasField("event")
        ]
        assert [r.event for r in first_half] + [r.event for r in resumed] == [
            r.event for r in everything
        ]
        finished = [
            r.event
            for r in feed.follow_log(event_types=["GameFinished"], follow=False)
            if r.HasField("event")
        ]
        assert {e.game_id for e in finished} == set(ids.values())
        only = [
            r.event
            for r in feed.follow_log(game_types=["dinosaurs_extinct"], follow=False)
            if r.HasField("event")
        ]
        assert {e.game_id for e in only} == {ids["dinosaurs_extinct"]}
        # Public information only: the seed is blank.
        created = [e for e in only if e.WhichOneof("body") == "game_created"]
        assert created and created[0].game_created.seed == ""


def test_a_filtered_feed_reads_only_what_it_sends_and_can_resume_anywhere(
    feed_server,
):
    app = feed_server.app
    ids = {
        game_type: random_game(app, game_type, 2, f"filtered-{game_type}")
        for game_type in registry.game_types()
    }
    last = app.store.last_position()
    everything = app.store.read_all(0, 100_000)
    target = f"127.0.0.1:{feed_server.port}"
    with StrataClient(target, token=INTEGRATION_TOKEN) as feed:
        for after in (0, 1, last // 2, last - 1):
            answers = list(
                feed.follow_log(
                    after_position=after,
                    game_types=["cubosaurs", "dinosaurs_extinct"],
                    event_types=["GameFinished", "PlayerJoined"],
                    follow=False,
                )
            )
            expected = [
                (e.game_id, e.version)
                for e in everything
                if e.position > after
                and e.type in ("GameFinished", "PlayerJoined")
                and e.game_id in (ids["cubosaurs"], ids["dinosaurs_extinct"])
            ]
            sent = [
                (a.event.game_id, a.event.version)
                for a in answers
                if a.HasField("event")
            ]
            assert sent == expected, after
            # Positions only go forward, never past an event still to come,
            # and the last answer says the whole log was read.
            positions = [a.position for a in answers]
            assert positions == sorted(positions)
            assert positions[-1] == last
        nothing = list(feed.follow_log(event_types=["NoSuchEvent"], follow=False))
        assert [a.HasField("event") for a in nothing] == [False] * len(nothing)
        assert nothing and nothing[-1].position == last
        # The creations the filtered read takes in (for each game's type)
        # carry the seed; what the feed sends of them is the public part.
        created = [
            a.event.game_created
            for a in feed.follow_log(event_types=["GameCreated"], follow=False)
            if a.HasField("event")
        ]
        assert len(created) == len(ids)
        assert all(c.game_type and c.seed == "" for c in created)


def test_the_feed_follows_live_and_refuses_seat_tokens(feed_server):
    app = feed_server.app
    target = f"127.0.0.1:{feed_server.port}"
    game_id, _, _ = app.create_game(
        Caller(admin=True), "dinosaurs_extinct", 2, seed="live"
    )
    _, seat_token, _ = app.join_game(app.caller(""), game_id, 0, "a")
    with StrataClient(target, token=seat_token) as seat:
        with pytest.raises(StrataError) as refused:
            list(seat.follow_log(follow=False))
        assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    received: list[int] = []
    done = threading.Event()

    def follow() -> None:
        with StrataClient(target, token=INTEGRATION_TOKEN) as feed:
            for item in feed.follow_log(after_position=2, event_types=["PlayerJoined"]):
                if item.HasField("event"):
                    received.append(item.event.version)
                    done.set()
                    return

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    time.sleep(0.3)
    app.join_game(app.caller(""), game_id, 1, "b")
    assert done.wait(10)
    assert received == [3]


def test_statistics_count_games_lengths_and_wins(feed_server):
    app = feed_server.app
    for seed in range(5):
        random_game(app, "dinosaurs_extinct", 3, f"stats-{seed}")
    app.create_game(Caller(admin=True), "dinosaurs_extinct", 2, seed="open")
    target = f"127.0.0.1:{feed_server.port}"
    with StrataClient(target, token=INTEGRATION_TOKEN) as feed:
        response = feed.get_statistics("dinosaurs_extinct")
    (stats,) = response.statistics
    assert (stats.games, stats.finished, stats.open) == (6, 5, 1)
    assert sum(stats.wins_by_seat.values()) == 5
    assert sum(stats.wins_by_character.values()) == 5
    assert 0 < stats.min_length <= stats.mean_length <= stats.max_length
    assert sum(stats.results.values()) == 5


def test_the_example_leaderboard_counts_every_win_once_across_restarts(
    feed_server, tmp_path
):
    from examples.leaderboard import Leaderboard, feed

    app = feed_server.app
    target = f"127.0.0.1:{feed_server.port}"
    expected: dict[str, int] = {}
    for seed in range(4):
        game_id = random_game(app, "dinosaurs_extinct", 2, f"board-{seed}")
        (winner,) = app.load(game_id).state.outcome.winners
        expected[f"p{winner}"] = expected.get(f"p{winner}", 0) + 1
        if seed == 1:  # a restart in the middle: save, reload, resume
            board = Leaderboard()
            with StrataClient(target, token=INTEGRATION_TOKEN) as client:
                for item in feed(client, board, follow=False):
                    board.apply(item)
            board.save(tmp_path / "board.json")
    board = Leaderboard.load(tmp_path / "board.json")
    with StrataClient(target, token=INTEGRATION_TOKEN) as client:
        for item in feed(client, board, follow=False):
            board.apply(item)
    assert {name: wins for (_, name), wins in board.wins.items()} == expected


def test_a_stream_of_no_game_this_service_runs_is_read_once(sql_store, monkeypatch):
    """Events of a stream whose type the service does not run (another
    application's, or a removed game's) are skipped without reading the
    stream again for each of them."""
    store = sql_store
    from eventstore.base import NewEvent

    store.append("foreign", 0, [NewEvent("Created", {"game_type": "chess"})])
    for version in range(1, 60):
        store.append("foreign", version, [NewEvent("Moved", {"n": version})])
    app = GameApp(store)
    random_game(app, "dinosaurs_extinct", 2, "beside-foreign")
    reads = []
    original = store.read_stream

    def counted(game_id, from_version=1, to_version=None):
        reads.append(game_id)
        return original(game_id, from_version, to_version)

    monkeypatch.setattr(store, "read_stream", counted)
    projection = GameListProjection(store, batch=7)
    # Start past the foreign stream's first event: the projection meets the
    # stream mid-way, as after a restart.
    projection.models.apply_game_rows(GAME_LIST, 0, 1, [])
    projection.position = 1

    projection.run_until_caught_up()

    assert reads.count("foreign") <= 1
    assert [g.game_type for g in projection.models.all_games()] == ["dinosaurs_extinct"]


@pytest.mark.parametrize("game_type", registry.game_types())
def test_the_game_list_shows_at_every_version_what_a_full_fold_shows(
    tmp_path, game_type
):
    """The projection folds only the events its game's rules say can change
    the characters (``character_events``), and moves the version once for
    a run of the others; row by row, one event a batch and five, it must
    show what folding every event shows."""
    url = f"sqlite:///{tmp_path / 'rows.sqlite3'}"
    migrate.upgrade(url)
    store = open_store(url)
    assert isinstance(store, SQLAlchemyEventStore)
    rules = registry.rules_for(game_type)
    app = GameApp(store)
    game_ids = [
        random_game(app, game_type, players, f"rows-{players}")
        for players in sorted({rules.min_players, min(rules.max_players, 3)})
    ]
    full = {}
    finished_at: dict[str, datetime] = {}
    for game_id in game_ids:
        session = app.load(game_id).session
        state = None
        for recorded in store.read_stream(game_id):
            event = session.decode_event(recorded.type, recorded.data)
            state = session.evolve(state, event)
            full[game_id, recorded.version] = state
            if state.outcome is not None:
                finished_at.setdefault(game_id, recorded.recorded_at)

    log = store.read_all(0, store.last_position())
    for batch in (1, 5):
        GameListRows(read_models(store)).reset(GAME_LIST)
        projection = GameListProjection(store, batch=batch)
        checked = 0
        while projection.run_once():
            for game_id in game_ids:
                row = projection.models.game(game_id)
                if row is None:
                    continue
                assert row.version == max(
                    e.version
                    for e in log
                    if e.game_id == game_id and e.position <= projection.position
                )
                state = full[game_id, row.version]
                assert row.characters == rules.characters(state.game), row.version
                assert row.status == state.status.value
                assert row.winners == (state.outcome.winners if state.outcome else ())
                assert row.finished_at == (
                    finished_at[game_id] if state.outcome else None
                )
                checked += 1
        assert checked >= len(full) // batch
        assert projection.position == store.last_position()
    store.close()


def test_a_steady_stream_of_appends_is_applied_in_few_batches(sql_store, monkeypatch):
    """Between batches the projection lets appends gather (``linger``), also
    when every batch finds new events; a reader that waits cuts it short."""
    store = sql_store
    batches = []
    original = GameListRows.apply_game_rows

    def counted(self, name, start, end, rows):
        batches.append(end - start)
        time.sleep(0.02)  # longer than between appends: it always finds more
        return original(self, name, start, end, rows)

    monkeypatch.setattr(GameListRows, "apply_game_rows", counted)
    projection = GameListProjection(store, linger=0.3)
    stop = threading.Event()
    runner = threading.Thread(target=projection.run_forever, args=(stop, 0.05))
    runner.start()
    app = GameApp(store)
    try:
        begun = time.monotonic()
        created = 0
        # An append every 10 ms or so, for 1.5 s and at least 50 of them (a
        # busy machine makes fewer a second).
        while time.monotonic() - begun < 1.5 or created < 50:
            app.create_game(app.caller(""), "dinosaurs_extinct", 2)
            created += 1
            time.sleep(0.01)
        elapsed = time.monotonic() - begun
        assert len(batches) <= elapsed / 0.3 + 4, batches

        projection.linger = 30.0  # only a waiting reader ends this linger
        app.create_game(app.caller(""), "dinosaurs_extinct", 2)
        assert projection.wait_for(store.last_position(), timeout=10)
        assert projection.models.count() == created + 1
    finally:
        stop.set()
        projection.wait_for(0, timeout=0)  # wakes the linger, which sees stop
        runner.join()


def test_listed_games_show_their_seats_from_the_read_model_alone(sql_store):
    """ListGames answers from the game list's rows: the seats (free, a bot,
    a player, one who left) as GetGame shows them, with no game loaded; a
    row written before the read model kept seats is answered from the game."""
    store = sql_store
    app = GameApp(store)
    admin = Caller(admin=True)
    waiting = app.create_game(admin, "cubosaurs", 3, bots=[(1, "heuristic")]).game_id
    app.join_game(Caller(token="st_ada"), waiting, 0, "Ada")
    started = app.create_game(admin, "cubosaurs", 3, bots=[(2, "random")]).game_id
    app.join_game(Caller(token="st_bo"), started, None, "Bo")
    app.join_game(Caller(token="st_cy"), started, None, "Cy")
    app.start_game(admin, started)
    app.leave_game(admin, started, 1)
    projection = GameListProjection(store)
    projection.run_until_caught_up()
    listing = GameApp(store)  # a replica that has loaded no game yet
    listing.queries.game_list = projection
    servicer = GameServicer(listing)
    call = Call("/strata.v1.GameService/ListGames", {}, "127.0.0.1", "test")

    listed = servicer.ListGames(pb.ListGamesRequest(), call).games

    expected = {g: seats_to_proto(app.load(g).state) for g in (waiting, started)}
    assert {g.game_id: list(g.seats) for g in listed} == expected
    assert [(s.taken, s.bot, s.left) for s in expected[started]] == [
        (True, "", False),
        (True, "", True),
        (True, "random", False),
    ]
    assert listing.cached(waiting) is None and listing.cached(started) is None

    (old,) = [r for r in projection.models.all_games() if r.game_id == waiting]
    at = projection.position
    rows = [dataclasses.replace(old, seats=None)]
    assert projection.models.apply_game_rows(GAME_LIST, at, at, rows)
    listed = servicer.ListGames(pb.ListGamesRequest(), call).games
    assert {g.game_id: list(g.seats) for g in listed} == expected
    assert listing.cached(waiting) is not None and listing.cached(started) is None


@pytest.mark.postgres
@pytest.mark.holds_cluster
def test_a_catch_up_held_back_by_a_transaction_elsewhere_goes_on_to_the_end(
    postgres_server,
):
    """On PostgreSQL a transaction running anywhere in the cluster (here
    the tests' own connection, outside the store) holds the log back: a
    rebuild (`strata projections rebuild`) that found nothing more to read
    short of the log's end reads again until it ends, instead of stopping
    there."""
    import psycopg

    url = postgres_server.create_schema()
    migrate.upgrade(url)
    store = open_store(url)
    holder = psycopg.connect(
        os.environ.get("STRATA_TEST_DATABASE_URL", DEFAULT_POSTGRES_URL)
    )
    holder.execute("SELECT txid_current()")  # an id: it holds the log back
    release = threading.Timer(0.8, holder.commit)
    try:
        app = GameApp(store)
        for n in range(3):
            random_game(app, "dinosaurs_extinct", 2, f"held-{n}")
        projection = GameListProjection(store, batch=50)
        release.start()

        applied = projection.rebuild()

        assert projection.position == store.last_position()
        assert applied == len(store.read_all(0, 100_000))
        assert len(projection.models.all_games()) == 3
    finally:
        release.cancel()
        holder.close()
        store.close()
