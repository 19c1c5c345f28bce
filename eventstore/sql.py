"""The event store on SQLAlchemy Core, shared by the SQLite and PostgreSQL stores.

Global positions: never behind a reader
---------------------------------------
A follower of the global log reads ``position > p`` and remembers the last
position it saw. If an event could become visible at a position below one
a reader has already passed (a transaction that drew position 7 committing
after one that drew 8), the follower would read 8, move its mark past 7,
and never see 7. Sequences and identity columns have exactly this problem.
Each backend prevents it its own way.

**SQLite** has a single writer: positions come from the ``counters`` row,
claimed in the write transaction that holds the file's lock, so they are
dense and in commit order, and a rolled-back append takes its claim back.

**PostgreSQL** orders the log by transaction id, without a lock shared by
the writers (``eventstore.postgres``): the events a transaction appends get
``pg_current_xact_id() << 16`` plus their rank in it (1, 2, ...), and a
reader returns only events below ``pg_snapshot_xmin(pg_current_snapshot())
<< 16``, the first transaction still running. A transaction that is still
running when a reader passes its id cannot exist (ids are handed out in
order, and every transaction below the snapshot's xmin has ended), so
nothing ever appears behind a position read. Appends of different
processes commit in parallel; the price is that a reader waits for the
oldest running transaction of the cluster, and positions are sparse.
``docs/SCALING.md`` weighs this against the alternatives.

Concurrency of one stream
-------------------------
An append first compares the stream's last version with ``expected_version``
(the cheap, common conflict), then relies on the ``(game_id, version)``
primary key: two appends racing from the same version both pass the check,
but the second INSERT violates the key and its transaction rolls back, so
exactly one wins.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import threading
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, Row, func, select, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.sql.dml import Insert

from eventstore import tables
from eventstore.base import (
    AppendResult,
    CommandOutcome,
    CommandRecord,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    MatchingEvents,
    NewCommand,
    NewEvent,
    PoolUsage,
    RecordedEvent,
    Snapshot,
    StoreError,
    StoreUnavailable,
    check_append,
    check_import,
    check_rejection,
    encode_json,
)
from eventstore.loops import AppendNotifier
from eventstore.tracing import trace_engine

log = logging.getLogger(__name__)

#: SQLSTATE of "undefined table" on PostgreSQL.
_UNDEFINED_TABLE = "42P01"
#: Values in one ``IN (...)`` list (SQLite caps a statement's parameters).
_IN_CHUNK = 500
_NO_SCHEMA = (
    "the database has no event store schema: run the migrations "
    "(python -m eventstore.migrate upgrade <database URL>)"
)


#: The JSON text of event data, payloads and snapshots (the port's, once).
dumps_json = encode_json


def utc_now() -> datetime:
    """The current time, UTC-aware."""
    return datetime.now(UTC)


@contextmanager
def translate_errors() -> Iterator[None]:
    """Turn "the database cannot be used" errors into :class:`StoreUnavailable`.

    Covers a server that is down or restarting, a dropped connection, a
    full pool, a locked SQLite file and a database without the schema.
    A value that cannot be encoded (data that is not JSON) raises the
    encoder's own ``ValueError`` or ``TypeError``. Integrity errors are left
    to the caller, which knows what they mean.
    """
    try:
        yield
    except sa_exc.TimeoutError as error:
        raise StoreUnavailable(f"no database connection available: {error}") from error
    except (sa_exc.OperationalError, sa_exc.InterfaceError) as error:
        if "no such table" in str(error.orig):
            raise StoreUnavailable(_NO_SCHEMA) from error
        raise StoreUnavailable(f"database unavailable: {error.orig}") from error
    except sa_exc.DBAPIError as error:
        if getattr(error.orig, "sqlstate", None) == _UNDEFINED_TABLE:
            raise StoreUnavailable(_NO_SCHEMA) from error
        if error.connection_invalidated:
            raise StoreUnavailable(f"database connection lost: {error.orig}") from error
        raise
    except sa_exc.StatementError as error:
        # A value the store could not encode, such as data that is not JSON.
        if isinstance(error.orig, TypeError | ValueError):
            raise type(error.orig)(str(error.orig)) from error
        raise


class _StreamConflict(Exception):
    def __init__(self, actual: int | None) -> None:
        self.actual = actual


class _CommandConflict(Exception):
    pass


def pool_usage(name: str, engine: Engine) -> PoolUsage | None:
    """What ``engine``'s pool holds now (None: a pool that keeps no count,
    as SQLite's single shared connection)."""
    pool = engine.pool
    checkedout = getattr(pool, "checkedout", None)
    checkedin = getattr(pool, "checkedin", None)
    size = getattr(pool, "size", None)
    if checkedout is None or checkedin is None or size is None:
        return None
    overflow = getattr(pool, "_max_overflow", 0)
    return PoolUsage(
        name, int(checkedout()), int(checkedin()), int(size()) + max(overflow, 0)
    )


class SQLAlchemyEventStore(EventStore):
    """The store's logic on SQLAlchemy Core; a subclass per database supplies
    transactions, position claims, upserts and the watcher that notices
    appends made elsewhere."""

    def __init__(self, engine: Engine) -> None:
        self._engine = trace_engine(engine)
        self._notifier = AppendNotifier()
        self._stop = threading.Event()
        self._watcher_ready = threading.Event()
        self._watcher: threading.Thread | None = None
        self._watcher_lock = threading.Lock()
        self._tails: dict[str, _SharedRead] = {}
        self._tails_lock = threading.Lock()

    # -- for read models ----------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (read models share the store's database)."""
        return self._engine

    def write_transaction(self) -> AbstractContextManager[Connection]:
        """A connection in a write transaction, committed when the block ends
        (for read models that must commit with their checkpoint)."""
        return self._begin_write()

    def read_connection(self) -> AbstractContextManager[Connection]:
        """A connection for reading, released when the block ends."""
        return self._begin_read()

    # -- what a backend supplies ------------------------------------------

    def _begin_write(self) -> AbstractContextManager[Connection]:
        """A connection in a write transaction, committed when the block ends."""
        return self._engine.begin()

    def _begin_read(self) -> AbstractContextManager[Connection]:
        """A connection for reading, released when the block ends."""
        return self._engine.connect()

    def _claim_positions(self, connection: Connection, count: int) -> int:
        """Reserve ``count`` global positions; returns the last one (the
        others are the ``count - 1`` below it).

        Here: from the counter row, whose lock is held until the transaction
        ends (see the module docstring), so it must be the last step before
        inserting the events.
        """
        claimed = connection.execute(
            update(tables.counters)
            .where(tables.counters.c.name == tables.POSITION_COUNTER)
            .values(value=tables.counters.c.value + count)
            .returning(tables.counters.c.value)
        ).scalar_one()
        return int(claimed)

    def _next_command_sequence(self, connection: Connection) -> int | None:
        """The next command sequence, or None when the database assigns it."""
        return None

    @abc.abstractmethod
    def _upsert_snapshot(self, values: Mapping[str, Any]) -> Insert:
        """An INSERT of a snapshot row that replaces the game's previous one."""

    @abc.abstractmethod
    def _watch(self, stop: threading.Event, ready: threading.Event) -> None:
        """Advance ``self._notifier`` on appends made by other connections,
        until ``stop`` is set; set ``ready`` once it is watching."""

    def _wake_watcher(self) -> None:
        """Interrupt the watcher's wait so it sees ``stop`` (default: nothing)."""

    # -- appending --------------------------------------------------------

    def append(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command: NewCommand | None = None,
    ) -> AppendResult:
        """Append ``events`` atomically after ``expected_version``.

        See :meth:`EventStore.append`. The logged command's outcome gets the
        versions this append wrote. An empty batch is refused with
        :class:`ValueError`: a command that changes nothing is a rejection
        (:meth:`record_rejection`).
        """
        check_append(events, expected_version)
        first_version = expected_version + 1
        last_version = expected_version + len(events)
        recorded_at = utc_now()
        try:
            with translate_errors(), self._begin_write() as connection:
                if command is not None:
                    logged = self._select_command(
                        connection, game_id, command.command_id
                    )
                    if logged is not None:
                        raise DuplicateCommand(logged)
                actual = self._select_stream_version(connection, game_id)
                if actual != expected_version:
                    raise _StreamConflict(actual)
                if command is not None:
                    outcome = replace(
                        command.outcome,
                        first_version=first_version,
                        last_version=last_version,
                    )
                    self._insert_command(
                        connection, game_id, command, outcome, recorded_at
                    )
                last_position = self._claim_positions(connection, len(events))
                first_position = last_position - len(events) + 1
                rows = [
                    {
                        "game_id": game_id,
                        "version": first_version + offset,
                        "position": first_position + offset,
                        "type": event.type,
                        "schema_version": event.schema_version,
                        "data": event.data,
                        "recorded_at": recorded_at,
                    }
                    for offset, event in enumerate(events)
                ]
                try:
                    connection.execute(tables.events.insert(), rows)
                except sa_exc.IntegrityError as error:
                    raise _StreamConflict(None) from error
        except _CommandConflict:
            assert command is not None
            raise DuplicateCommand(
                self._first_record(game_id, command.command_id)
            ) from None
        except _StreamConflict as conflict:
            # A retry of a command that already went through finds the stream
            # moved on; it must get the first outcome, not a conflict.
            if command is not None:
                logged = self.find_command(game_id, command.command_id)
                if logged is not None:
                    raise DuplicateCommand(logged) from None
            current = conflict.actual
            if current is None:
                current = self.stream_version(game_id)
            raise ConcurrencyError(game_id, expected_version, current) from None
        self._notifier.advance(last_position, commit=True)
        return AppendResult(first_version, last_version, last_position, recorded_at)

    def import_game(
        self,
        game_id: str,
        events: Sequence[RecordedEvent],
        commands: Sequence[CommandRecord],
    ) -> AppendResult:
        """Write an exported game (see :meth:`EventStore.import_game`)."""
        check_import(events)
        try:
            with translate_errors(), self._begin_write() as connection:
                actual = self._select_stream_version(connection, game_id)
                if actual != 0:
                    raise _StreamConflict(actual)
                for record in sorted(commands, key=lambda c: c.sequence):
                    self._insert_command(
                        connection,
                        game_id,
                        NewCommand(
                            command_id=record.command_id,
                            actor=record.actor,
                            payload=record.payload,
                            outcome=record.outcome,
                            decided_at_version=record.decided_at_version,
                        ),
                        record.outcome,
                        record.recorded_at,
                    )
                last_position = self._claim_positions(connection, len(events))
                first_position = last_position - len(events) + 1
                connection.execute(
                    tables.events.insert(),
                    [
                        {
                            "game_id": game_id,
                            "version": event.version,
                            "position": first_position + offset,
                            "type": event.type,
                            "schema_version": event.schema_version,
                            "data": event.data,
                            "recorded_at": event.recorded_at,
                        }
                        for offset, event in enumerate(events)
                    ],
                )
        except (_StreamConflict, _CommandConflict) as conflict:
            raise ConcurrencyError(
                game_id, 0, getattr(conflict, "actual", None)
            ) from None
        self._notifier.advance(last_position, commit=True)
        return AppendResult(1, len(events), last_position)

    # -- the command log --------------------------------------------------

    def record_rejection(self, game_id: str, command: NewCommand) -> CommandRecord:
        """Log a refused command (see :meth:`EventStore.record_rejection`).

        ``command.outcome`` must carry the error (a non-empty ``error_kind``).
        """
        check_rejection(command)
        try:
            with translate_errors(), self._begin_write() as connection:
                logged = self._select_command(connection, game_id, command.command_id)
                if logged is not None:
                    return logged
                return self._insert_command(
                    connection, game_id, command, command.outcome, utc_now()
                )
        except _CommandConflict:
            return self._first_record(game_id, command.command_id)

    def find_command(self, game_id: str, command_id: str) -> CommandRecord | None:
        """The logged command with this id, if any."""
        with translate_errors(), self._begin_read() as connection:
            return self._select_command(connection, game_id, command_id)

    def read_commands(
        self, game_id: str, after_sequence: int = 0, limit: int | None = None
    ) -> list[CommandRecord]:
        """A game's logged commands in the order they were logged (see
        :meth:`EventStore.read_commands`)."""
        query = (
            select(tables.commands)
            .where(tables.commands.c.game_id == game_id)
            .where(tables.commands.c.sequence > after_sequence)
            .order_by(tables.commands.c.sequence)
        )
        if limit is not None:
            query = query.limit(max(limit, 0))
        with translate_errors(), self._begin_read() as connection:
            return [_command_record(row) for row in connection.execute(query)]

    def connections_in_use(self) -> int | None:
        """Connections checked out of the engine's pool now."""
        checkedout = getattr(self._engine.pool, "checkedout", None)
        return None if checkedout is None else int(checkedout())

    def connection_pools(self) -> list[PoolUsage]:
        """The engine's pool (named ``primary``)."""
        usage = pool_usage("primary", self._engine)
        return [] if usage is None else [usage]

    def count_refusals(self, game_id: str) -> int:
        """How many refused commands a game's command log holds."""
        query = (
            select(func.count())
            .select_from(tables.commands)
            .where(tables.commands.c.game_id == game_id)
            .where(tables.commands.c.error_kind != "")
        )
        with translate_errors(), self._begin_read() as connection:
            return int(connection.execute(query).scalar_one())

    def _first_record(self, game_id: str, command_id: str) -> CommandRecord:
        logged = self.find_command(game_id, command_id)
        if logged is None:
            # The competing insert was rolled back after ours failed: rare,
            # and the caller's retry will succeed.
            raise StoreError(f"command {command_id} was logged concurrently; retry")
        return logged

    def _select_command(
        self, connection: Connection, game_id: str, command_id: str
    ) -> CommandRecord | None:
        row = connection.execute(
            select(tables.commands).where(
                tables.commands.c.game_id == game_id,
                tables.commands.c.command_id == command_id,
            )
        ).one_or_none()
        return None if row is None else _command_record(row)

    def _insert_command(
        self,
        connection: Connection,
        game_id: str,
        command: NewCommand,
        outcome: CommandOutcome,
        recorded_at: datetime,
    ) -> CommandRecord:
        values: dict[str, Any] = {
            "game_id": game_id,
            "command_id": command.command_id,
            "actor": command.actor,
            "payload": command.payload,
            "decided_at_version": command.decided_at_version,
            "first_version": outcome.first_version,
            "last_version": outcome.last_version,
            "error_kind": outcome.error_kind,
            "error_reason": outcome.error_reason,
            "error_message": outcome.error_message,
            "recorded_at": recorded_at,
        }
        sequence = self._next_command_sequence(connection)
        if sequence is not None:
            values["sequence"] = sequence
        try:
            sequence = connection.execute(
                tables.commands.insert()
                .values(values)
                .returning(tables.commands.c.sequence)
            ).scalar_one()
        except sa_exc.IntegrityError as error:
            raise _CommandConflict() from error
        return CommandRecord(
            game_id=game_id,
            command_id=command.command_id,
            actor=command.actor,
            payload=command.payload,
            outcome=outcome,
            decided_at_version=command.decided_at_version,
            recorded_at=recorded_at,
            sequence=int(sequence),
        )

    # -- reading ----------------------------------------------------------

    def read_stream(
        self, game_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """Events of a game with ``from_version <= version <= to_version``."""
        query = select(tables.events).where(
            tables.events.c.game_id == game_id, tables.events.c.version >= from_version
        )
        if to_version is not None:
            query = query.where(tables.events.c.version <= to_version)
        with translate_errors(), self._begin_read() as connection:
            rows = connection.execute(query.order_by(tables.events.c.version))
            return [_recorded_event(row) for row in rows]

    def stream_version(self, game_id: str) -> int:
        """The last version of a game's stream (0 when it has none)."""
        with translate_errors(), self._begin_read() as connection:
            return self._select_stream_version(connection, game_id)

    def _select_stream_version(self, connection: Connection, game_id: str) -> int:
        version = connection.execute(
            select(func.max(tables.events.c.version)).where(
                tables.events.c.game_id == game_id
            )
        ).scalar_one()
        return int(version or 0)

    def read_all(
        self, after_position: int = 0, limit: int = 1000
    ) -> list[RecordedEvent]:
        """Up to ``limit`` events with position > ``after_position``, in order.

        Positions commit in order on a single writer (see the module
        docstring), so what one query sees is always a prefix of the log.
        """
        query = (
            select(tables.events)
            .where(tables.events.c.position > after_position)
            .order_by(tables.events.c.position)
            .limit(limit)
        )
        with translate_errors(), self._begin_read() as connection:
            return [_recorded_event(row) for row in connection.execute(query)]

    def read_all_matching(
        self,
        after_position: int,
        limit: int,
        event_types: Collection[str] = (),
        game_ids: Collection[str] = (),
    ) -> MatchingEvents:
        """The matching events of the next ``limit`` (see
        :meth:`EventStore.read_all_matching`): the stretch is read without
        the events' bodies, then the matching events by position (stored
        events never change, so the second read cannot disagree)."""
        events = tables.events
        scan = (
            select(events.c.position, events.c.type, events.c.game_id)
            .where(events.c.position > after_position)
            .order_by(events.c.position)
            .limit(limit)
        )
        types, games = set(event_types), set(game_ids)
        with translate_errors(), self._begin_read() as connection:
            scanned = connection.execute(scan).all()
            wanted = [p for p, t, g in scanned if t in types or g in games]
            found: list[RecordedEvent] = []
            for start in range(0, len(wanted), _IN_CHUNK):
                query = (
                    select(events)
                    .where(events.c.position.in_(wanted[start : start + _IN_CHUNK]))
                    .order_by(events.c.position)
                )
                found += [_recorded_event(row) for row in connection.execute(query)]
        through = scanned[-1][0] if scanned else after_position
        return MatchingEvents(found, through, len(scanned))

    def known_position(self) -> int:
        """The highest position appended here or heard of (PostgreSQL's
        LISTEN, SQLite's watcher)."""
        return self._notifier.position

    def last_position(self) -> int:
        """The highest global position committed (0 for an empty store)."""
        with translate_errors(), self._begin_read() as connection:
            position = connection.execute(select(func.max(tables.events.c.position)))
            return int(position.scalar_one() or 0)

    def list_streams(self, after_game_id: str = "", limit: int = 100) -> list[str]:
        """Game ids in id order, after ``after_game_id``."""
        query = (
            select(tables.events.c.game_id)
            .distinct()
            .where(tables.events.c.game_id > after_game_id)
            .order_by(tables.events.c.game_id)
            .limit(limit)
        )
        with translate_errors(), self._begin_read() as connection:
            return list(connection.execute(query).scalars())

    # -- snapshots --------------------------------------------------------

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Store (or replace) the snapshot of a game."""
        statement = self._upsert_snapshot(
            {
                "game_id": snapshot.game_id,
                "version": snapshot.version,
                "schema_version": snapshot.schema_version,
                "state": snapshot.state,
                "saved_at": utc_now(),
            }
        )
        with translate_errors(), self._begin_write() as connection:
            connection.execute(statement)

    def load_snapshot(self, game_id: str) -> Snapshot | None:
        """The latest snapshot of a game, if any."""
        query = select(tables.snapshots).where(tables.snapshots.c.game_id == game_id)
        with translate_errors(), self._begin_read() as connection:
            row = connection.execute(query).one_or_none()
        if row is None:
            return None
        return Snapshot(
            game_id=row.game_id,
            version=row.version,
            schema_version=row.schema_version,
            state=row.state,
        )

    # -- live notification ------------------------------------------------

    def wait_for_append(self, after_position: int, timeout: float) -> bool:
        """Block until an event past ``after_position`` may exist, or ``timeout``.

        Appends through this store wake waiters at once; appends through
        other connections are noticed by the backend's watcher thread,
        started on the first wait.
        """
        deadline = time.monotonic() + timeout
        self._start_watcher()
        self._watcher_ready.wait(max(deadline - time.monotonic(), 0.0))
        return self._notifier.wait_past(after_position, deadline - time.monotonic())

    def interrupt_waits(self) -> None:
        self._notifier.interrupt()

    def _stream_tail(
        self, game_id: str, version: int
    ) -> tuple[int, list[RecordedEvent]]:
        """At most one read per wake-up: the mark to wait past is the count
        of commits the store has noticed, taken before the read (a commit
        after it wakes the wait, whatever its position), instead of a query
        for the last position; and the followers of one game woken by one
        append share one read (:meth:`_read_tail`)."""
        self._start_watcher()
        seen = self._notifier.ticks
        return seen, self._read_tail(game_id, version, seen)

    def _wait_after_tail(self, mark: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        self._watcher_ready.wait(timeout)
        self._notifier.wait_tick(mark, deadline - time.monotonic())

    async def _wait_after_tail_async(self, mark: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        if not self._watcher_ready.is_set():
            await asyncio.to_thread(self._watcher_ready.wait, timeout)
        await self._notifier.wait_tick_async(mark, deadline - time.monotonic())

    async def wait_for_append_async(self, after_position: int, timeout: float) -> bool:
        """:meth:`wait_for_append` without holding a thread."""
        deadline = time.monotonic() + timeout
        self._start_watcher()
        if not self._watcher_ready.is_set():
            await asyncio.to_thread(
                self._watcher_ready.wait, max(deadline - time.monotonic(), 0.0)
            )
        return await self._notifier.wait_past_async(
            after_position, deadline - time.monotonic()
        )

    def _read_tail(self, game_id: str, version: int, seen: int) -> list[RecordedEvent]:
        """``read_stream(game_id, version)``, shared with a read of the same
        game already running that started late enough to see everything
        committed up to ``seen`` and early enough in the stream."""
        # ``seen`` and the marks are counts of commits noticed.
        with self._tails_lock:
            read = self._tails.get(game_id)
            joined = (
                read is not None and read.mark >= seen and read.from_version <= version
            )
            if not joined:
                read = _SharedRead(seen, version)
                self._tails[game_id] = read
        assert read is not None
        if joined:
            read.done.wait()
            if read.error is not None:
                raise read.error
            return [e for e in read.events if e.version >= version]
        try:
            read.events = self.read_stream(game_id, version)
        except BaseException as error:
            read.error = error
            raise
        finally:
            with self._tails_lock:
                if self._tails.get(game_id) is read:
                    del self._tails[game_id]
            read.done.set()
        return read.events

    def _start_watcher(self) -> None:
        with self._watcher_lock:
            if self._watcher is not None or self._stop.is_set():
                return
            self._watcher = threading.Thread(
                target=self._watch,
                args=(self._stop, self._watcher_ready),
                name=f"{type(self).__name__}-watcher",
                daemon=True,
            )
            self._watcher.start()

    def close(self) -> None:
        """Stop the watcher thread and close the pooled connections."""
        with self._watcher_lock:
            self._stop.set()
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            self._wake_watcher()
            watcher.join()
        self._engine.dispose()


class _SharedRead:
    """A read of a game's stream that other followers may wait for."""

    def __init__(self, mark: int, from_version: int) -> None:
        self.mark = mark
        self.from_version = from_version
        self.events: list[RecordedEvent] = []
        self.error: BaseException | None = None
        self.done = threading.Event()


def _recorded_event(row: Row[Any]) -> RecordedEvent:
    return RecordedEvent(
        game_id=row.game_id,
        version=row.version,
        position=row.position,
        type=row.type,
        schema_version=row.schema_version,
        data=row.data,
        recorded_at=row.recorded_at,
    )


def _command_record(row: Row[Any]) -> CommandRecord:
    return CommandRecord(
        game_id=row.game_id,
        command_id=row.command_id,
        actor=row.actor,
        payload=row.payload,
        outcome=CommandOutcome(
            first_version=row.first_version,
            last_version=row.last_version,
            error_kind=row.error_kind,
            error_reason=row.error_reason,
            error_message=row.error_message,
        ),
        decided_at_version=row.decided_at_version,
        recorded_at=row.recorded_at,
        sequence=row.sequence,
    )
