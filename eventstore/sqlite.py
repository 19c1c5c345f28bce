"""The embedded event store: one SQLite file, no server to run.

SQLite serializes writers on the whole file, which gives global positions in
commit order for free (see ``eventstore.sql``). The store sets the file up
for concurrent use:

* WAL journal, so readers never block the writer nor the writer readers;
* ``BEGIN IMMEDIATE`` for every write transaction, so a writer takes the
  write lock before reading the stream version instead of failing to
  upgrade a read lock half-way (SQLITE_BUSY that no timeout can cure);
* a busy timeout, so writers of other processes wait for the lock;
* a lock per store in front of the file's lock, so the threads sharing a
  store queue for it instead of sleeping in SQLite's busy handler;
* ``synchronous=FULL``: an acknowledged append is on disk.

Appends through this store wake its waiters at once; appends through other
stores or processes are noticed by a poller thread that reads the last
position every ``poll_interval`` (0.1 s), from the first wait until the
store is closed.

``sqlite://`` (in memory) is for tools and tests: the store creates the
schema itself, and all threads share one connection behind a lock.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from sqlalchemy import Connection, create_engine, event, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool
from sqlalchemy.sql.dml import Insert

from eventstore import tables
from eventstore.base import StoreError, StoreUnavailable
from eventstore.migrate import upgrade_connection
from eventstore.readmodels import SQLReadModels
from eventstore.sql import SQLAlchemyEventStore, dumps_json
from eventstore.urls import database_url, is_sqlite_memory

log = logging.getLogger(__name__)

#: Execution option that makes the transaction begin with BEGIN IMMEDIATE.
_WRITE = "strata_write"


class SQLiteEventStore(SQLAlchemyEventStore):
    """The event store in a SQLite file (``sqlite:///path/to/strata.db``).

    Safe to share between the threads of a process and between processes
    using the same file. The schema of a file must exist
    (``eventstore.migrate``); an in-memory store creates its own.
    """

    def __init__(
        self,
        url: str | URL,
        *,
        pool_size: int = 10,
        busy_timeout: float = 30.0,
        poll_interval: float = 0.1,
    ) -> None:
        parsed = database_url(url)
        if parsed.get_backend_name() != "sqlite":
            raise ValueError(f"not a SQLite URL: {parsed.drivername}")
        self._memory = is_sqlite_memory(parsed)
        self._busy_timeout = busy_timeout
        self._poll_interval = poll_interval
        self._lock = threading.RLock()
        if self._memory:
            engine = create_engine(
                parsed,
                poolclass=StaticPool,
                connect_args={"check_same_thread": False},
                json_serializer=dumps_json,
            )
        else:
            engine = create_engine(
                parsed,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_pre_ping=True,
                connect_args={"check_same_thread": False, "timeout": busy_timeout},
                json_serializer=dumps_json,
            )
        event.listen(engine, "connect", self._on_connect)
        event.listen(engine, "begin", _on_begin)
        super().__init__(engine)
        self._write_engine = engine.execution_options(**{_WRITE: True})
        if self._memory:
            # Nobody else can migrate a private database: it starts migrated.
            with self._begin_write() as connection:
                upgrade_connection(connection)

    def read_models(self) -> SQLReadModels:
        """The read models kept in this database (see
        :meth:`EventStore.read_models`)."""
        return SQLReadModels(self)

    def check_health(self) -> None:
        """Open the file afresh and take its write lock for a moment: a file
        gone unreadable, or locked by another writer for over a second, is
        unavailable (a pooled connection would go on reading it)."""
        if self._memory:
            return
        path = self._engine.url.database or ""
        try:
            probe = sqlite3.connect(
                f"file:{path}?mode=rw", uri=True, timeout=1.0, isolation_level=None
            )
            try:
                probe.execute("BEGIN IMMEDIATE")
                probe.execute("SELECT 1 FROM events LIMIT 1").fetchall()
                probe.execute("ROLLBACK")
            finally:
                probe.close()
        except sqlite3.Error as error:
            raise StoreUnavailable(
                f"the SQLite file {path} is unusable: {error}"
            ) from None

    def _on_connect(
        self, connection: sqlite3.Connection, _record: ConnectionPoolEntry
    ) -> None:
        # Take transaction control away from the sqlite3 module: _on_begin
        # emits the BEGIN we want, and sqlite3 still commits and rolls back.
        connection.isolation_level = None
        connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        if not self._memory:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = FULL")

    @contextmanager
    def _begin_write(self) -> Iterator[Connection]:
        with self._lock, self._write_engine.begin() as connection:
            yield connection

    def _begin_read(self) -> AbstractContextManager[Connection]:
        if not self._memory:
            return self._engine.connect()
        return _locked(self._lock, self._engine.connect())

    def _next_command_sequence(self, connection: Connection) -> int:
        # Free of contention: the write transaction already holds the file lock.
        counter = tables.counters
        sequence = connection.execute(
            update(counter)
            .where(counter.c.name == tables.COMMAND_SEQUENCE_COUNTER)
            .values(value=counter.c.value + 1)
            .returning(counter.c.value)
        ).scalar_one()
        return int(sequence)

    def _upsert_snapshot(self, values: Mapping[str, Any]) -> Insert:
        statement = sqlite_insert(tables.snapshots).values(dict(values))
        return statement.on_conflict_do_update(
            index_elements=[tables.snapshots.c.game_id],
            set_={name: statement.excluded[name] for name in values},
        )

    def _watch(self, stop: threading.Event, ready: threading.Event) -> None:
        if self._memory:  # nobody else can write to a private in-memory database
            ready.set()
            return
        while not stop.is_set():
            try:
                self._notifier.advance(self.last_position())
                ready.set()
            except StoreError as error:
                log.warning("event store poller: %s", error)
            stop.wait(self._poll_interval)


def _on_begin(connection: Connection) -> None:
    mode = "IMMEDIATE" if connection.get_execution_options().get(_WRITE) else ""
    connection.exec_driver_sql(f"BEGIN {mode}")


@contextmanager
def _locked(
    lock: threading.RLock, inner: AbstractContextManager[Connection]
) -> Iterator[Connection]:
    with lock, inner as connection:
        yield connection
