"""The event store on PostgreSQL, through psycopg 3 and SQLAlchemy Core.

Positions follow transaction ids (see ``eventstore.sql``): an appending
transaction gives its events ``pg_current_xact_id() << 16`` plus their rank,
and the reads of the global log stop below the oldest transaction still
running, so no writer waits for another's commit and no reader passes an
event that could still appear behind it. After each commit the group
committer sends ``NOTIFY strata_events, '<last position>'`` in a
transaction of its own (``eventstore.groupcommit`` says why not in the
appending one; an import, rare, still notifies in its appending
transaction). A follower that read nothing while a commit past its
position is known waits for the next commit
noticed (the transaction holding the log back may be any writer's, so at
most :data:`_HELD_BACK_POLL` at a time).

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
import functools
import itertools
import logging
import select
import socket
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import psycopg
from sqlalchemy import Connection, NullPool, create_engine, event, text
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.engine import URL, Engine, ExceptionContext
from sqlalchemy.sql.dml import Insert

from eventstore import pgsql, tables
from eventstore.base import (
    READ_AFTER,
    AppendResult,
    CommandRecord,
    ConcurrencyError,
    DuplicateCommand,
    MatchingEvents,
    NewCommand,
    NewEvent,
    PoolUsage,
    RecordedEvent,
    StoreUnavailable,
    check_append,
)
from eventstore.groupcommit import MAX_EVENTS_PER_TRANSACTION, Append, GroupCommitter
from eventstore.rawread import RawReader
from eventstore.readmodels import SQLReadModels
from eventstore.sql import (
    _NO_SCHEMA,
    SQLAlchemyEventStore,
    dumps_json,
    pool_usage,
    utc_now,
)
from eventstore.tracing import trace_engine
from eventstore.urls import database_url

log = logging.getLogger(__name__)

#: The LISTEN/NOTIFY channel; the payload is the last position appended.
CHANNEL = "strata_events"

#: How long a follower held back by a running transaction waits for the
#: next commit before it reads again.
_HELD_BACK_POLL = 0.02
#: How long a read of the log waits for the transactions that hold back a
#: commit it knows of (transactions of other databases of the cluster
#: count: a long one anywhere holds the log back).
_SETTLE_WAIT = 0.5
#: How long a read of the log waits for a standby to replay this store's
#: known commits before it reads the primary instead.
_STANDBY_WAIT = 0.2
_T = TypeVar("_T")

#: How long the listener sleeps between idle liveness checks.
_IDLE_CHECK = 30.0
_MAX_BACKOFF = 5.0


class PostgresEventStore(SQLAlchemyEventStore):
    """The event store in a PostgreSQL database.

    Accepts ``postgresql://``, ``postgres://`` and ``postgresql+psycopg://``
    URLs. The schema must exist (``eventstore.migrate``).
    """

    def __init__(
        self,
        url: str | URL,
        *,
        pool_size: int = 10,
        connect_timeout: int = 10,
        read_urls: Sequence[str | URL] = (),
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
        event.listen(engine, "handle_error", _read_only_is_a_lost_connection)
        super().__init__(engine)
        args, params = engine.dialect.create_connect_args(engine.url)
        self._listener_args = list(args)
        self._listener_params: dict[str, Any] = {
            # Notice a silently dead peer, not only a closed socket (the
            # URL's own keepalives_* and tcp_user_timeout win).
            "keepalives": 1,
            "keepalives_idle": 30,
            "keepalives_interval": 10,
            "keepalives_count": 3,
            **params,
            **connect_args,
            "application_name": "strata-listener",
        }
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_reader.setblocking(False)
        self._committer: GroupCommitter | None = None
        self._committer_lock = threading.Lock()
        # Idle connections kept: every request thread may read at once.
        self._reader = RawReader(self._connect_reader, _unavailable, idle=64)
        #: Hot standbys that serve the reads of the global log (see
        #: :meth:`_from_standby`), taken in turn.
        self._standbys = [
            RawReader(
                _standby_connector(database_url(read_url), connect_timeout),
                _unavailable,
                idle=16,
            )
            for read_url in read_urls
        ]
        self._next_standby = itertools.count()
        #: SQLAlchemy engines of the standbys, for the read models' queries
        #: (:meth:`standby_engine`), made on first use.
        self._standby_urls = [database_url(u) for u in read_urls]
        self._standby_engines: dict[int, Engine] = {}
        self._standby_engines_lock = threading.Lock()
        self._connect_timeout = connect_timeout
        #: Every standby read so far showed the log below this bound: a
        #: later one must too, so no reader of this store sees the log
        #: shrink when its reads move between standbys that lag unequally.
        self._shown_below = 0
        #: Reads of the log a standby answered, and those it left to the
        #: primary (behind this store's commits, or unreachable).
        self.standby_reads = 0
        self.primary_reads = 0

    # -- hot reads ----------------------------------------------------------

    def read_models(self) -> SQLReadModels:
        """The read models kept in this database (see
        :meth:`EventStore.read_models`), with PostgreSQL's fast paths: a
        batch in one round trip, reads from the hot standby."""
        return SQLReadModels(self, postgres=self)

    def read_stream(
        self, game_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """Events of a game with ``from_version <= version <= to_version``."""
        return self._reader.read_stream(game_id, from_version, to_version)

    def read_stream_nearby(
        self, game_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """A game's events from the next standby (the primary without one,
        or when the standby is unreachable or behind): read below its
        settled bound, once that is past every commit this store knows of,
        so the answer is a prefix of the stream, holds this process's own
        writes and never goes back in time (:meth:`_from_standby`)."""
        answered = self._from_standby(
            self._owed(),
            lambda reader: reader.read_stream_settled(
                game_id, from_version, to_version
            ),
        )
        if answered is not None:
            return answered
        return self._reader.read_stream(game_id, from_version, to_version)

    def find_command(self, game_id: str, command_id: str) -> CommandRecord | None:
        """The logged command with this id, if any."""
        return self._reader.find_command(game_id, command_id)

    def read_all(
        self, after_position: int = 0, limit: int = 1000
    ) -> list[RecordedEvent]:
        """Up to ``limit`` events with position > ``after_position``, in
        order, below the oldest transaction still running (see
        ``eventstore.sql``). When that holds back a commit this store already
        knows of (its own appends included), it waits for the older
        transactions to end first, up to :data:`_SETTLE_WAIT`: a process
        reads its own appends in the log, as it would with one writer."""
        known = self._owed()
        answered = self._from_standby(
            known, lambda reader: reader.read_all(after_position, limit)
        )
        if answered is not None:
            return answered
        events, bound = self._reader.read_all(after_position, limit)
        if bound <= known and known > after_position and len(events) < limit:
            self._settle(known)
            events, bound = self._reader.read_all(after_position, limit)
        return events

    def read_all_matching(
        self,
        after_position: int,
        limit: int,
        event_types: Collection[str] = (),
        game_ids: Collection[str] = (),
    ) -> MatchingEvents:
        """The matching events of the next ``limit``, in one round trip (see
        :meth:`EventStore.read_all_matching`), waiting like :meth:`read_all`."""
        known = self._owed()
        from_standby = self._from_standby(
            known,
            lambda reader: reader.read_all_matching(
                after_position, limit, event_types, game_ids
            ),
        )
        if from_standby is not None:
            return from_standby
        found, bound = self._reader.read_all_matching(
            after_position, limit, event_types, game_ids
        )
        if bound <= known and known > after_position and found.scanned < limit:
            self._settle(known)
            found, bound = self._reader.read_all_matching(
                after_position, limit, event_types, game_ids
            )
        return found

    def _owed(self) -> int:
        """The position a read must show: every commit this store knows of
        and the caller's ``strata-read-after`` (:data:`READ_AFTER`), never
        taken past the log's end: a caller claiming more than this store has
        heard of costs one look at the primary, not a wait (an invented
        position would otherwise hold each of its reads back until the
        waits ran out)."""
        known = self._notifier.position
        asked = READ_AFTER.get()
        if asked > known:
            known = max(known, min(asked, self.last_position()))
        return known

    def _from_standby(
        self, known: int, read: Callable[[RawReader], tuple[_T, int]]
    ) -> _T | None:
        """``read`` answered by the next standby, once it has replayed every
        commit this store knows of (``known``, its own appends included):
        read your writes. A standby is read below its own oldest running
        transaction, which covers the transactions it has not replayed the
        end of, so it never shows an event that could still appear behind
        it. None (read the primary) when there is no standby, or it is
        unreachable or still behind after :data:`_STANDBY_WAIT`."""
        if not self._standbys:
            return None
        known = max(known, self._shown_below - 1)
        standby = self._standbys[next(self._next_standby) % len(self._standbys)]
        deadline = time.monotonic() + _STANDBY_WAIT
        pause = 0.001
        try:
            answer, bound = read(standby)
            while bound <= known:
                if time.monotonic() >= deadline:
                    self.primary_reads += 1
                    return None
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
                if standby.settled_bound() > known:
                    answer, bound = read(standby)
        except StoreUnavailable:
            self.primary_reads += 1
            return None
        self._shown_below = max(self._shown_below, bound)
        self.standby_reads += 1
        return answer

    def standby_engine(self) -> Engine | None:
        """An engine of the next standby (None without standbys): what the
        read models query, within :data:`_STANDBY_WAIT`, when the standby
        shows their checkpoint far enough (``ReadModels.query_nearby``)."""
        if not self._standby_urls:
            return None
        index = next(self._next_standby) % len(self._standby_urls)
        with self._standby_engines_lock:
            engine = self._standby_engines.get(index)
            if engine is None:
                engine = self._standby_engines[index] = trace_engine(
                    create_engine(
                        self._standby_urls[index],
                        pool_size=2,
                        max_overflow=4,
                        pool_pre_ping=True,
                        connect_args={
                            "connect_timeout": self._connect_timeout,
                            "application_name": "strata-standby-reader",
                        },
                    )
                )
        return engine

    #: How long a read model's query waits for a standby to show its
    #: checkpoint far enough before it asks the primary.
    standby_wait = _STANDBY_WAIT

    def _settle(self, position: int) -> bool:
        """Wait until no transaction that could append below ``position``
        is still running (True), or :data:`_SETTLE_WAIT` passed (False)."""
        deadline = time.monotonic() + _SETTLE_WAIT
        pause = 0.0005
        while time.monotonic() < deadline:
            time.sleep(pause)
            if self._reader.settled_bound() > position:
                return True
            pause = min(pause * 2, 0.01)
        return False

    def check_health(self) -> None:
        """Raise :class:`StoreUnavailable` unless the primary answers and
        takes writes: a server that turned read-only (a standby, or an old
        primary its failover manager fenced) makes the service NOT_SERVING,
        and its idle connections are dropped, so that a later probe
        connects afresh and finds the writable server."""
        ((read_only, _),) = self._reader.execute(pgsql.READ_ONLY_NOW, ())
        if read_only == "on":
            self._forget_server()
            raise StoreUnavailable(
                "the database takes no writes (a standby, or an old primary "
                "fenced after a failover)"
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
        check_append(events, expected_version)
        _check_size(len(events))
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

    def commit_queue(self) -> int | None:
        """Appends waiting for the group commit now."""
        committer = self._committer
        return None if committer is None else committer.queued()

    def connection_pools(self) -> list[PoolUsage]:
        """The primary's pool, each standby's (made on first use), and the
        connections held apart: the standbys' own for the log's reads, the
        listener of commits and the group committer's."""
        pools = super().connection_pools()
        for index, engine in sorted(self._standby_engines.items()):
            usage = pool_usage(f"standby-{index}", engine)
            if usage is not None:
                pools.append(usage)
        readers = [("reader", self._reader)] + [
            (f"standby-{index}-reader", standby)
            for index, standby in enumerate(self._standbys)
        ]
        for name, reader in readers:
            used, idle, most = reader.usage()
            pools.append(PoolUsage(name, used, idle, most))
        # The group committer's writer and announcer, and the listener of
        # commits: in use for as long as they run.
        committer = self._committer
        writer = 0 if committer is None else committer.connections()
        listener = 1 if self._watcher_ready.is_set() else 0
        pools.append(PoolUsage("writer", writer, 0, 2))
        pools.append(PoolUsage("listener", listener, 0, 1))
        return pools

    def _group_committer(self) -> GroupCommitter:
        with self._committer_lock:
            if self._committer is None:
                self._committer = GroupCommitter(
                    self._connect_writer,
                    CHANNEL,
                    self._noticed,
                    on_reconnect=self._forget_server,
                )
            return self._committer

    def _noticed(self, position: int) -> None:
        """A commit of ours or of another connection's, last at ``position``."""
        self._notifier.advance(position, commit=True)

    def _forget_server(self) -> None:
        """The idle connections of the reads and of the pool go: the
        writer lost their server (it died, or turned read-only: a
        failover), so the next reads connect afresh and find the server the
        writes go to."""
        self._reader.discard_idle()
        self._engine.dispose()

    def _connect_writer(self) -> psycopg.Connection[Any]:
        connection = psycopg.connect(
            *self._listener_args,
            **{**self._listener_params, "application_name": "strata-writer"},
        )
        try:
            row = connection.execute(pgsql.IDS_AHEAD_OF_THE_LOG).fetchone()
            connection.rollback()
        except BaseException:
            connection.close()
            raise
        if row is not None and not row[0]:
            connection.close()
            raise StoreUnavailable(
                "the database's transaction ids are behind the positions of its "
                "events (a dump restored into another cluster?): appending now "
                "would put events behind positions already read; see "
                "docs/SCALING.md, 'Restoring a dump'"
            )
        return connection

    def _claim_positions(self, connection: Connection, count: int) -> int:
        _check_size(count)
        claimed = connection.execute(
            text(pgsql.CLAIM_AND_NOTIFY), {"count": count, "channel": CHANNEL}
        ).one()
        return int(claimed.value)

    # -- following the log --------------------------------------------------

    def wait_for_append(self, after_position: int, timeout: float) -> bool:
        """Block until an event past ``after_position`` may be readable, or
        ``timeout``. A commit past it already known but held back by an older
        transaction still running wakes the caller at the next commit
        noticed, or after :data:`_HELD_BACK_POLL`."""
        deadline = time.monotonic() + timeout
        self._start_watcher()
        self._watcher_ready.wait(max(deadline - time.monotonic(), 0.0))
        ticks = self._notifier.ticks
        if self._notifier.position <= after_position:
            return self._notifier.wait_past(after_position, deadline - time.monotonic())
        self._notifier.wait_tick(
            ticks, min(deadline - time.monotonic(), _HELD_BACK_POLL)
        )
        return True

    async def wait_for_append_async(self, after_position: int, timeout: float) -> bool:
        """:meth:`wait_for_append` without holding a thread."""
        deadline = time.monotonic() + timeout
        self._start_watcher()
        if not self._watcher_ready.is_set():
            await asyncio.to_thread(
                self._watcher_ready.wait, max(deadline - time.monotonic(), 0.0)
            )
        ticks = self._notifier.ticks
        if self._notifier.position <= after_position:
            return await self._notifier.wait_past_async(
                after_position, deadline - time.monotonic()
            )
        await self._notifier.wait_tick_async(
            ticks, min(deadline - time.monotonic(), _HELD_BACK_POLL)
        )
        return True

    def events_after(self, position: int, limit: int = 100_000) -> int:
        """How many events the log holds after ``position`` (up to ``limit``)."""
        rows = self._reader.execute(pgsql.EVENTS_AFTER, (position, limit))
        return int(rows[0][0])

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
                    self._noticed(int(notification.payload))

    def _wake_watcher(self) -> None:
        self._wake_writer.send(b"\0")

    def close(self) -> None:
        """Stop the listener and the group committer, close the connections."""
        with self._committer_lock:
            committer, self._committer = self._committer, None
        if committer is not None:
            committer.close()
        self._reader.close()
        for standby in self._standbys:
            standby.close()
        for engine in self._standby_engines.values():
            engine.dispose()
        super().close()
        self._wake_reader.close()
        self._wake_writer.close()


def _standby_connector(
    url: URL, connect_timeout: int
) -> Callable[[], psycopg.Connection[Any]]:
    """What opens an autocommit connection to a hot standby: the first of
    the URL's hosts that answers and has the ``target_session_attrs``
    asked for."""
    engine = create_engine(url, poolclass=NullPool)  # connects to nothing
    args, params = engine.dialect.create_connect_args(engine.url)
    engine.dispose()
    params = {
        "connect_timeout": connect_timeout,
        **params,
        "application_name": "strata-standby-reader",
    }
    return functools.partial(psycopg.connect, *args, **params, autocommit=True)


def _read_only_is_a_lost_connection(context: ExceptionContext) -> None:
    """SQLAlchemy's ``handle_error`` hook: a server that takes no writes
    (an old primary fenced read-only, a standby) is no server for the
    store's pool: the connection is dropped like a dead one (the whole pool
    with it), the error becomes :class:`StoreUnavailable`, and the next
    connection looks for the writable server."""
    if pgsql.takes_no_writes(context.original_exception):
        context.is_disconnect = True


def _check_size(count: int) -> None:
    """Refuse a transaction's worth of events too many for its positions."""
    if count > MAX_EVENTS_PER_TRANSACTION:
        raise ValueError(
            f"{count} events in one append: PostgreSQL takes at most "
            f"{MAX_EVENTS_PER_TRANSACTION} (a position is the transaction's id "
            "and the event's rank in it)"
        )


def _unavailable(error: BaseException) -> BaseException:
    """The store's error for a database error met by the group committer."""
    if isinstance(error, psycopg.errors.UndefinedTable):
        return StoreUnavailable(_NO_SCHEMA)
    if isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        return StoreUnavailable(f"database unavailable: {error}")
    if pgsql.takes_no_writes(error):
        return StoreUnavailable(f"the database takes no writes: {error}")
    return error
