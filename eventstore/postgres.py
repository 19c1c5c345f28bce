"""The event store on PostgreSQL, through psycopg 3 and SQLAlchemy Core.

Positions are claimed from a counter row locked until commit (see
``eventstore.sql``). The same statement that claims them sends
``NOTIFY strata_events, '<last position>'``, which PostgreSQL delivers at
commit, and only if the transaction commits.

Each store runs one listener thread on a dedicated connection (started on
the first :meth:`~PostgresEventStore.wait_for_append`). It LISTENs, reads
the last position (nothing committed before the LISTEN is missed), and wakes
waiters on every notification. When the connection drops (server restart,
failover) it reconnects with backoff and reads the last position again, so
appends made while it was away still wake the waiters.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
from collections.abc import Mapping
from typing import Any

import psycopg
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.engine import URL
from sqlalchemy.sql.dml import Insert

from eventstore import tables
from eventstore.sql import SQLAlchemyEventStore, dumps_json
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
                log.warning(
                    "event store listener: %s; reconnecting in %.1fs", error, backoff
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
        """Stop the listener and close the pooled connections."""
        super().close()
        self._wake_reader.close()
        self._wake_writer.close()
