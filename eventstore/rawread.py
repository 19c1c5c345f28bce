"""The hot reads of the PostgreSQL store in raw psycopg.

A command or a legal-action listing reads one game's new events, and a
retried command its log entry. Through SQLAlchemy each such read costs a
pool ping, the query and a rollback (three round trips) plus the Core
compilation; here it is one prepared statement on an autocommit connection
(one round trip). A connection found dead is replaced and the read, which
changes nothing, retried once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg

from eventstore import pgsql
from eventstore.base import (
    CommandOutcome,
    CommandRecord,
    MatchingEvents,
    RecordedEvent,
    StoreError,
    StoreUnavailable,
)


class RawReader:
    """A small pool of autocommit psycopg connections for the hot reads."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        unavailable: Callable[[BaseException], BaseException],
        idle: int = 16,
    ) -> None:
        self._connect = connect
        self._unavailable = unavailable
        self._idle_max = idle
        self._idle: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()
        self._closed = False
        #: Connections handed out and not yet back (or closed).
        self._in_use = 0

    def usage(self) -> tuple[int, int, int]:
        """Connections in use, idle, and the most kept idle."""
        with self._lock:
            return self._in_use, len(self._idle), self._idle_max

    def read_stream(
        self, game_id: str, from_version: int, to_version: int | None
    ) -> list[RecordedEvent]:
        if to_version is None:
            rows = self._query(pgsql.READ_STREAM, (game_id, from_version))
        else:
            rows = self._query(
                pgsql.READ_STREAM_RANGE, (game_id, from_version, to_version)
            )
        return _stream_events(game_id, rows[0][0])

    def read_stream_settled(
        self, game_id: str, from_version: int, to_version: int | None
    ) -> tuple[list[RecordedEvent], int]:
        """The stream's events of transactions that ended (a prefix of the
        stream) and the bound they were read below."""
        last = 2**31 - 1 if to_version is None else to_version
        ((events, bound),) = self._query(
            pgsql.READ_STREAM_SETTLED, (game_id, from_version, last)
        )
        return _stream_events(game_id, events), int(bound)

    def read_all(
        self, after_position: int, limit: int
    ) -> tuple[list[RecordedEvent], int]:
        """The settled events after ``after_position`` and the bound they
        were read below."""
        ((events, bound),) = self._query(pgsql.READ_ALL, (after_position, limit))
        return _log_events(events), int(bound)

    def read_all_matching(
        self,
        after_position: int,
        limit: int,
        event_types: Collection[str],
        game_ids: Collection[str],
    ) -> tuple[MatchingEvents, int]:
        """:meth:`read_all`'s stretch, filtered, and its bound."""
        ((scanned, through, matching, bound),) = self._query(
            pgsql.READ_ALL_MATCHING,
            (list(event_types), list(game_ids), after_position, limit),
        )
        return MatchingEvents(
            _log_events(matching),
            after_position if through is None else int(through),
            int(scanned),
        ), int(bound)

    def settled_bound(self) -> int:
        """The position below which the log is settled now."""
        return int(self._query(f"SELECT {pgsql.SETTLED_BOUND}", ())[0][0])

    def execute(
        self, sql: str, parameters: Sequence[Any] | Mapping[str, Any]
    ) -> list[tuple[Any, ...]]:
        """The rows of one statement of the caller's, run like the reads
        (prepared, in a transaction of its own). A connection found dead is
        replaced and the statement run again, so it must be safe to run
        twice: a read, or a write that checks what it changes."""
        return self._query(sql, parameters)

    def find_command(self, game_id: str, command_id: str) -> CommandRecord | None:
        rows = self._query(pgsql.FIND_COMMAND, (game_id, command_id))
        if not rows:
            return None
        row = rows[0]
        return CommandRecord(
            game_id=row[0],
            command_id=row[1],
            actor=row[2],
            payload=row[3],
            outcome=CommandOutcome(row[4], row[5], row[6], row[7], row[8]),
            decided_at_version=row[9],
            recorded_at=row[10].astimezone(UTC),
            sequence=row[11],
        )

    def stream_version(self, game_id: str) -> int:
        return int(self._query(pgsql.STREAM_VERSION, (game_id,))[0][0])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _query(
        self, sql: str, parameters: Sequence[Any] | Mapping[str, Any]
    ) -> list[tuple[Any, ...]]:
        for attempt in (1, 2):
            try:
                connection = self._take()
            except psycopg.Error as error:
                raise self._unavailable(error) from error
            try:
                rows = connection.execute(sql, parameters, prepare=True).fetchall()
            except psycopg.Error as error:
                if connection.broken:
                    self._discard(connection)
                    if attempt == 1:
                        continue  # a connection the server dropped: once more
                else:
                    self._give_back(connection)
                raise self._unavailable(error) from error
            self._give_back(connection)
            return rows
        raise StoreError("unreachable")  # pragma: no cover

    def _take(self) -> psycopg.Connection[Any]:
        with self._lock:
            if self._closed:
                raise StoreUnavailable("the store is closed")
            self._in_use += 1
            if self._idle:
                return self._idle.pop()
        try:
            return self._connect()
        except BaseException:
            with self._lock:
                self._in_use -= 1
            raise

    def _give_back(self, connection: psycopg.Connection[Any]) -> None:
        with self._lock:
            self._in_use -= 1
            if not self._closed and len(self._idle) < self._idle_max:
                self._idle.append(connection)
                return
        connection.close()

    def _discard(self, connection: psycopg.Connection[Any]) -> None:
        with self._lock:
            self._in_use -= 1
        connection.close()


def _stream_events(game_id: str, text: str) -> list[RecordedEvent]:
    parse = _time_parser()
    return [
        RecordedEvent(
            game_id, version, position, type_, schema_version, data, parse(at)
        )
        for version, position, type_, schema_version, data, at in json.loads(text)
    ]


def _log_events(text: str) -> list[RecordedEvent]:
    """The events of the global log from the text of their JSON array."""
    parse = _time_parser()
    return [
        RecordedEvent(
            game_id, version, position, type_, schema_version, data, parse(at)
        )
        for game_id, version, position, type_, schema_version, data, at in (
            json.loads(text)
        )
    ]


def _time_parser() -> Callable[[str], datetime]:
    """Parse PostgreSQL's JSON timestamps, once per distinct text (the
    events of an append share one)."""
    times: dict[str, datetime] = {}

    def parse(text: str) -> datetime:
        parsed = times.get(text)
        if parsed is None:
            parsed = times[text] = datetime.fromisoformat(text).astimezone(UTC)
        return parsed

    return parse
