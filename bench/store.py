"""Store-level figures: appends against PostgreSQL and ``eventsourcing``,
load time against length, fold rates, the projection rebuild."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from bench.db import Database
from eventstore.base import NewCommand, NewEvent, Snapshot
from eventstore.postgres import PostgresEventStore
from service.application import GameApp
from service.projections import GameListProjection

#: The store's append, written as directly as PostgreSQL allows: one
#: statement that checks the stream's version, logs the command, claims the
#: position from the counter row and inserts the event, then the commit.
APPEND_SQL = """
WITH stream AS (
  SELECT coalesce(max(version), 0) AS version FROM events WHERE game_id = {g}
), command AS (
  INSERT INTO commands (game_id, command_id, actor, payload, decided_at_version,
    first_version, last_version, error_kind, error_reason, error_message,
    recorded_at)
  SELECT {g}, {c}, 'bench', '{{"seat":0}}', stream.version, stream.version + 1,
    stream.version + 1, '', '', '', now()
  FROM stream
  RETURNING first_version
), claimed AS (
  UPDATE counters SET value = value + 1
  WHERE name = 'position' AND EXISTS (SELECT FROM command)
  RETURNING value
)
INSERT INTO events (game_id, version, position, type, schema_version, data,
  recorded_at)
SELECT {g}, command.first_version, claimed.value, 'TurnPassed', 1,
  '{{"seat":0}}', now()
FROM command, claimed
RETURNING position, pg_notify('strata_events', position::text)
"""


@dataclass
class Rate:
    """Operations per second, with latency percentiles (seconds)."""

    per_second: float
    p50: float
    p99: float
    count: int

    def as_dict(self) -> dict[str, float]:
        return {
            "per_second": round(self.per_second, 1),
            "p50_ms": round(self.p50 * 1000, 3),
            "p99_ms": round(self.p99 * 1000, 3),
            "count": self.count,
        }


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def threaded(
    writers: int,
    duration: float,
    setup: Callable[[int], Callable[[], None]],
    warmup: float = 0.3,
) -> Rate:
    """``writers`` threads each calling its operation (made by ``setup``)
    in a loop; the rate inside the window after ``warmup``."""
    operations = [setup(i) for i in range(writers)]
    start = time.perf_counter() + warmup
    end = start + duration
    latencies: list[list[float]] = [[] for _ in range(writers)]

    def loop(index: int) -> None:
        operation = operations[index]
        mine = latencies[index]
        while True:
            begun = time.perf_counter()
            if begun >= end:
                return
            operation()
            if begun >= start:
                mine.append(time.perf_counter() - begun)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [x for part in latencies for x in part]
    return Rate(
        len(every) / duration,
        percentile(every, 0.5),
        percentile(every, 0.99),
        len(every),
    )


# -- appends ------------------------------------------------------------------


def our_appends(database: Database, writers: int, duration: float) -> Rate:
    """PostgresEventStore.append of one event with its command, one stream
    per writer (the command path's write)."""
    store = PostgresEventStore(database.url, pool_size=writers)
    try:

        def setup(index: int) -> Callable[[], None]:
            game_id = f"bench-ours-{uuid.uuid4().hex}"
            version = [0]

            def append() -> None:
                store.append(
                    game_id,
                    version[0],
                    [NewEvent("TurnPassed", {"seat": 0})],
                    NewCommand(
                        uuid.uuid4().hex,
                        "bench",
                        {"seat": 0, "type": "PassTurn", "command": {}},
                        decided_at_version=version[0],
                    ),
                )
                version[0] += 1

            return append

        return threaded(writers, duration, setup)
    finally:
        store.close()


def raw_appends(database: Database, writers: int, duration: float) -> Rate:
    """The same write as one statement through psycopg (prepared), a
    connection per thread."""
    sql = APPEND_SQL.format(g="%(g)s", c="%(c)s")
    connections: list[psycopg.Connection[Any]] = []

    def setup(index: int) -> Callable[[], None]:
        connection = psycopg.connect(
            database.libpq(), autocommit=True, prepare_threshold=0
        )
        connections.append(connection)
        game_id = f"bench-raw-{uuid.uuid4().hex}"

        def append() -> None:
            connection.execute(sql, {"g": game_id, "c": uuid.uuid4().hex}).fetchone()

        return append

    try:
        return threaded(writers, duration, setup)
    finally:
        for connection in connections:
            connection.close()


def pgbench_appends(database: Database, clients: int, duration: float) -> Rate:
    """The same statement from pgbench (C, libpq, prepared): PostgreSQL's
    own rate for the store's write. NaN without pgbench."""
    if shutil.which("pgbench") is None:
        return Rate(float("nan"), float("nan"), float("nan"), 0)
    script = APPEND_SQL.format(
        g="('pgbench-' || :client_id || '-' || :run)", c="md5(random()::text)"
    )
    script = " ".join(script.split()) + ";\n"
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as file:
        file.write(script)
        file.flush()
        output = subprocess.run(
            [
                "pgbench",
                "-n",
                "-M",
                "prepared",
                "-c",
                str(clients),
                "-j",
                "2",
                "-T",
                str(max(1, round(duration))),
                "-D",
                f"run={uuid.uuid4().hex[:8]}",
                "-f",
                file.name,
                database.libpq(),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    tps = float(_match(r"tps = ([\d.]+)", output))
    latency = float(_match(r"latency average = ([\d.]+) ms", output)) / 1000
    count = int(_match(r"number of transactions actually processed: (\d+)", output))
    return Rate(tps, latency, float("nan"), count)


def _match(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    if found is None:
        raise RuntimeError(f"pgbench said:\n{text}")
    return found.group(1)


def eventsourcing_appends(database: Database, writers: int, duration: float) -> Rate:
    """The eventsourcing library's PostgreSQL application recorder (global
    notification ids, like our positions), one aggregate per writer."""
    from eventsourcing.persistence import StoredEvent
    from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore

    parts = database.parts
    datastore = PostgresDatastore(
        dbname=database.name,
        host=parts.host or "127.0.0.1",
        port=parts.port or 5432,
        user=parts.username or "postgres",
        password=str(parts.password or ""),
        pool_size=writers,
    )
    recorder = PostgresApplicationRecorder(datastore, events_table_name="es_events")
    recorder.create_table()
    try:

        def setup(index: int) -> Callable[[], None]:
            originator = uuid.uuid4()
            version = [1]

            def append() -> None:
                recorder.insert_events(
                    [
                        StoredEvent(
                            originator, version[0], "bench:TurnPassed", b'{"seat":0}'
                        )
                    ]
                )
                version[0] += 1

            return append

        return threaded(writers, duration, setup)
    finally:
        datastore.close()


# -- loading and folding -------------------------------------------------------


def long_game(store: PostgresEventStore, events: int, snapshot: bool) -> str:
    """A game of ``events`` events: a real start, then turns passed back and
    forth (TurnPassed folds like any event; no rule ends the game)."""
    app = GameApp(store, admin_token="bench-admin")
    admin = app.caller("bench-admin")
    game_id, _, _ = app.create_game(admin, "dinosaurs_extinct", 2, seed="bench")
    for seat in range(2):
        app.join_game(admin, game_id, seat, f"p{seat}")
    version = app.start_game(admin, game_id)
    if version > events:
        raise ValueError(f"a game has at least {version} events")
    while version < events:
        batch = min(500, events - version)
        store.append(
            game_id,
            version,
            [NewEvent("TurnPassed", {"seat": (version + i) % 2}) for i in range(batch)],
        )
        version += batch
    if snapshot:
        # What GameApp keeps for a game it played: a snapshot every
        # SNAPSHOT_EVERY versions, here the last one.
        from service.games import SNAPSHOT_EVERY, snapshot_schema

        at = version - version % SNAPSHOT_EVERY
        loaded = app.load(game_id)
        state = loaded.session.fold(
            (
                loaded.session.decode_event(e.type, e.data, e.schema_version)
                for e in store.read_stream(game_id, 1, at)
            ),
        )
        store.save_snapshot(
            Snapshot(
                game_id,
                at,
                snapshot_schema(loaded.session),
                loaded.session.encode_state(state),
            )
        )
    return game_id


def cold_load_seconds(store: PostgresEventStore, game_id: str, repeats: int) -> float:
    """Median time to load a game through a new GameApp (empty cache)."""
    times = []
    for _ in range(repeats):
        app = GameApp(store)
        begun = time.perf_counter()
        app.load(game_id)
        times.append(time.perf_counter() - begun)
    return statistics.median(times)


def eventsourcing_fold_seconds(database: Database, events: int, repeats: int) -> float:
    """Median time for the eventsourcing library to get an aggregate of
    ``events`` events from PostgreSQL (no snapshots, fresh application)."""
    from bench.es_model import Turns, TurnsApp

    parts = database.parts
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": database.name,
        "POSTGRES_HOST": parts.host or "127.0.0.1",
        "POSTGRES_PORT": str(parts.port or 5432),
        "POSTGRES_USER": parts.username or "postgres",
        "POSTGRES_PASSWORD": str(parts.password or ""),
        "CREATE_TABLE": "y",
    }
    app = TurnsApp(env=env)
    aggregate = Turns()
    for i in range(events - 1):
        aggregate.pass_turn(i % 2)
    app.save(aggregate)
    app.close()
    times = []
    for _ in range(repeats):
        fresh = TurnsApp(env=env)
        begun = time.perf_counter()
        got: Turns = fresh.repository.get(aggregate.id)
        times.append(time.perf_counter() - begun)
        fresh.close()
        if got.version != events:
            raise RuntimeError(f"eventsourcing folded {got.version} events")
    return statistics.median(times)


def projection_rebuild(database: Database) -> tuple[int, float]:
    """Events applied and seconds taken by GameListProjection.rebuild."""
    store = PostgresEventStore(database.url)
    try:
        projection = GameListProjection(store)
        begun = time.perf_counter()
        applied = projection.rebuild()
        return applied, time.perf_counter() - begun
    finally:
        store.close()
