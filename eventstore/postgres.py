"""The event store on PostgreSQL, through psycopg 3 and SQLAlchemy Core.

Positions are claimed from a counter row locked until commit (see
``eventstore.sql``). The same statement that claims them sends
``NOTIFY strata_events, '<last position>'``, which PostgreSQL delivers at
commit, and only if the transaction commits.

Appends go through a :class:`~eventstore.groupcommit.GroupCommitter`: the
appends that arrive while one commits share the next commit (one WAL flush
for many), on a connection of its own, in raw psycopg with prepared
statements. The hot reads (a game's events, a command's log entry, a
stream's version) skip SQLAlchemy too (``eventstore.rawread``).

Each store runs one listener thread on a dedicated connection (started on
the first :meth:`~PostgresEventStore.wait_for_append`). It LISTENs, reads
the last position (nothing committed before the LISTEN is missed), and wakes
waiters on every notification. When the connection drops (server restart,
failover) it reconnects with backoff and reads the last position again, so
appends made while it was away still wake the waiters.
"""

from __future__ import annotations

import asyncio
import logging
import select
import socket
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import psycopg
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.engine import URL
from sqlalchemy.sql.dml import Insert

from eventstore import tables
from eventstore.base import (
    AppendResult,
    CommandRecord,
    ConcurrencyError,
    DuplicateCommand,
    MatchingEvents,
    NewCommand,
    NewEvent,
    RecordedEvent,
    StoreUnavailable,
)
from eventstore.groupcommit import Append, GroupCommitter
from eventstore.rawread import RawReader
from eventstore.sql import _NO_SCHEMA, SQLAlchemyEventStore, dumps_json, utc_now
from eventstore.urls import database_url

log = logging.getLogger(__name__)

#: The LISTEN/NOTIFY channel; the payload is the last position appended.
CHANNEL = "strata_events"

# One round trip: claim the positions and queue the notification.
_CLAIM_AND_NOTIFY = text(
    "WITH claimed AS ("
    " UPDATE counters SET value = value + :count WHERE name = :name"
    " RETURNING value)"
    " SELECT value, pg_notify(:channel, value::text) FROM claimed"
)

#: How long the listener sleeps between idle liveness checks.
_IDLE_CHECK = 30.0
_MAX_BACKOFF = 5.0


class PostgresEventStore(SQLAlchemyEventStore):
    """The event store in a PostgreSQL database.

    Accepts ``postgresql://``, ``postgres://`` and ``postgresql+psycopg://``
    URLs. The schema must exist (``eventstore.migrate``).
    """

    def __init__(
        self, url: str | URL, *, pool_size: int = 10, connect_timeout: int = 10
    ) -> None:
        parsed = database_url(url)
        if parsed.get_backend_name() != "postgresql":
            raise ValueError(f"not a PostgreSQL URL: {parsed.drivername}")
        connect_args: dict[str, Any] = {}
        if "connect_timeout" not in parsed.query:
            connect_args["connect_timeout"] = connect_timeout
        if "application_name" not in parsed.query:
            connect_args["application_name"] = "strata"
        engine = create_engine(
            parsed,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=True,
            connect_args=connect_args,
            json_serializer=dumps_json,
        )
        super().__init__(engine)
        args, params = engine.dialect.create_connect_args(engine.url)
        self._listener_args = list(args)
        self._listener_params: dict[str, Any] = {
            **params,
            **connect_args,
            "application_name": "strata-listener",
            # Notice a silently dead peer, not only a closed socket.
            "keepalives": 1,
            "keepalives_idle": 30,
            "keepalives_interval": 10,
            "keepalives_count": 3,
        }
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_reader.setblocking(False)
        self._committer: GroupCommitter | None = None
        self._committer_lock = threading.Lock()
        # Idle connections kept: every request thread may read at once.
        self._reader = RawReader(self._connect_reader, _unavailable, idle=64)

    # -- hot reads ----------------------------------------------------------

    def read_stream(
        self, game_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """Events of a game with ``from_version <= version <= to_version``."""
        return self._reader.read_stream(game_id, from_version, to_version)

    def find_command(self, game_id: str, command_id: str) -> CommandRecord | None:
        """The logged command with this id, if any."""
        return self._reader.find_command(game_id, command_id)

    def read_all(
        self, after_position: int = 0, limit: int = 1000
    ) -> list[RecordedEvent]:
        """Up to ``limit`` events with position > ``after_position``, in order
        (see :meth:`SQLAlchemyEventStore.read_all`)."""
        return self._reader.read_all(after_position, limit)

    def read_all_matching(
        self,
        after_position: int,
        limit: int,
        event_types: Collection[str] = (),
        game_ids: Collection[str] = (),
    ) -> MatchingEvents:
        """The matching events of the next ``limit``, in one round trip (see
        :meth:`EventStore.read_all_matching`)."""
        return self._reader.read_all_matching(
            after_position, limit, event_types, game_ids
        )

    def stream_version(self, game_id: str) -> int:
        """The last version of a game's stream (0 when it has none)."""
        return self._reader.stream_version(game_id)

    def execute_raw(
        self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[tuple[Any, ...]]:
        """The rows of one SQL statement (psycopg placeholders) run on a
        pooled autocommit connection: prepared, its own transaction, one
        round trip; for read models that keep their hot statements off
        SQLAlchemy. A connection found dead is replaced and the statement
        run again: it must be safe to run twice (a read, a compare-and-set).
        """
        return self._reader.execute(sql, parameters)

    def _connect_reader(self) -> psycopg.Connection[Any]:
        return psycopg.connect(
            *self._listener_args,
            **{**self._listener_params, "application_name": "strata-reader"},
            autocommit=True,
        )

    # -- appending --------------------------------------------------------

    def append(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command: NewCommand | None = None,
    ) -> AppendResult:
        """Append ``events`` atomically after ``expected_version``, sharing
        the commit with the appends that arrive meanwhile.

        See :meth:`EventStore.append`; the logged command's outcome gets the
        versions this append wrote.
        """
        pending = self._pending(game_id, expected_version, events, command)
        self._group_committer().append(pending)
        return self._concluded(pending, command)

    async def append_async(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command: NewCommand | None = None,
    ) -> AppendResult:
        """:meth:`append` awaited on the caller's event loop: no thread waits
        for the commit. Only an append that wrote nothing needs reads to
        say why, and those run in the loop's default executor."""
        pending = self._pending(game_id, expected_version, events, command)
        await self._group_committer().append_async(pending)
        if pending.error is None and pending.last_position is not None:
            return self._concluded(pending, command)
        return await asyncio.to_thread(self._concluded, pending, command)

    @staticmethod
    def _pending(
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command: NewCommand | None,
    ) -> Append:
        """The append as the group committer takes it."""
        if not events:
            raise ValueError("an append needs at least one event")
        if expected_version < 0:
            raise ValueError(f"expected_version {expected_version} is negative")
        first_version = expected_version + 1
        last_version = expected_version + len(events)
        logged: dict[str, Any] | None = None
        if command is not None:
            outcome = replace(
                command.outcome, first_version=first_version, last_version=last_version
            )
            logged = {
                "command_id": command.command_id,
                "actor": command.actor,
                "payload": dumps_json(command.payload),
                "decided": command.decided_at_version,
                "first_version": first_version,
                "last_version": last_version,
                "error_kind": outcome.error_kind,
                "error_reason": outcome.error_reason,
                "error_message": outcome.error_message,
            }
        return Append(
            game_id=game_id,
            expected_version=expected_version,
            count=len(events),
            events=dumps_json([[e.type, e.schema_version, e.data] for e in events]),
            recorded_at=utc_now(),
            command=logged,
        )

    def _concluded(self, pending: Append, command: NewCommand | None) -> AppendResult:
        """The result of an answered append, or the error that says why it
        wrote nothing."""
        game_id = pending.game_id
        expected_version = pending.expected_version
        if pending.error is not None:
            error = _unavailable(pending.error)
            if error is pending.error:
                raise error
            raise error from pending.error
        if pending.last_position is not None:
            return AppendResult(
                expected_version + 1,
                expected_version + pending.count,
                pending.last_position,
                pending.recorded_at,
            )
        # Nothing was written: a stale version, a command logged before, or
        # a collision with another process's append.
        if command is not None:
            first = self.find_command(game_id, command.command_id)
            if first is not None:
                raise DuplicateCommand(first)
            if pending.stream_version == expected_version:
                # Its logging was rolled back meanwhile: rare; a retry works.
                raise DuplicateCommand(self._first_record(game_id, command.command_id))
        actual = pending.stream_version
        if actual is None or actual == expected_version:
            actual = self.stream_version(game_id)
        raise ConcurrencyError(game_id, expected_version, actual)

    def _group_committer(self) -> GroupCommitter:
        with self._committer_lock:
            if self._committer is None:
                self._committer = GroupCommitter(
                    self._connect_writer, CHANNEL, self._notifier.advance
                )
            return self._committer

    def _connect_writer(self) -> psycopg.Connection[Any]:
        return psycopg.connect(
            *self._listener_args,
            **{**self._listener_params, "application_name": "strata-writer"},
        )

    def _claim_positions(self, connection: Connection, count: int) -> int:
        claimed = connection.execute(
            _CLAIM_AND_NOTIFY,
            {"count": count, "name": tables.POSITION_COUNTER, "channel": CHANNEL},
        ).one()
        return int(claimed.value)

    def _upsert_snapshot(self, values: Mapping[str, Any]) -> Insert:
        statement = postgres_insert(tables.snapshots).values(dict(values))
        return statement.on_conflict_do_update(
            index_elements=[tables.snapshots.c.game_id],
            set_={name: statement.excluded[name] for name in values},
        )

    # -- the listener -----------------------------------------------------

    def _watch(self, stop: threading.Event, ready: threading.Event) -> None:
        backoff = 0.1
        while not stop.is_set():
            try:
                with psycopg.connect(
                    *self._listener_args, autocommit=True, **self._listener_params
                ) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    row = connection.execute(
                        "SELECT coalesce(max(position), 0) FROM events"
                    ).fetchone()
                    self._notifier.advance(int(row[0]) if row else 0)
                    ready.set()
                    backoff = 0.1
                    self._listen(connection, stop)
            except psycopg.Error as error:
                if stop.is_set():
                    return
                if backoff == 0.1:  # the first failure of an outage: one line
                    log.warning(
                        "event store listener lost the database (%s); reconnecting",
                        " ".join(str(error).split()),
                    )
                stop.wait(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF)

    def _listen(
        self, connection: psycopg.Connection[Any], stop: threading.Event
    ) -> None:
        wake = self._wake_reader.fileno()
        while not stop.is_set():
            readable, _, _ = select.select(
                [connection.fileno(), wake], [], [], _IDLE_CHECK
            )
            if wake in readable:
                return
            if not readable:
                connection.execute("SELECT 1")  # raises if the server went away
            for notification in connection.notifies(timeout=0):
                if notification.payload.isdigit():
                    self._notifier.advance(int(notification.payload))

    def _wake_watcher(self) -> None:
        self._wake_writer.send(b"\0")

    def close(self) -> None:
        """Stop the listener and the group committer, close the connections."""
        with self._committer_lock:
            committer, self._committer = self._committer, None
        if committer is not None:
            committer.close()
        self._reader.close()
        super().close()
        self._wake_reader.close()
        self._wake_writer.close()


def _unavailable(error: BaseException) -> BaseException:
    """The store's error for a database error met by the group committer."""
    if isinstance(error, psycopg.errors.UndefinedTable):
        return StoreUnavailable(_NO_SCHEMA)
    if isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        return StoreUnavailable(f"database unavailable: {error}")
    return error
