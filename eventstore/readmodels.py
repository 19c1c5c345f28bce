"""Read models kept by projections, with their checkpoints, in the store's
database.

A projection follows the global log from its checkpoint. Each batch it
applies upserts its read model's rows **and** moves its checkpoint in one
transaction, after checking that the checkpoint is still where the batch
started (compare-and-set): so a batch is applied exactly once even when a
runner is killed mid-batch or several replicas run the same projection.

The store knows tables and checkpoints, not what a row means: the
projections (``service/projections.py``) own their rows and their queries.
On PostgreSQL a batch is one prepared statement in raw psycopg (one round
trip, one transaction; :func:`eventstore.pgsql.apply_rows`): it moves the
checkpoint if it is still where the batch started and upserts the rows only
if it did. SQLite goes through SQLAlchemy Core.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import (
    Connection,
    Engine,
    Executable,
    Table,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.exc import SQLAlchemyError

from eventstore import pgsql, tables
from eventstore.base import utc
from eventstore.sql import SQLAlchemyEventStore, dumps_json, translate_errors


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _check_times(rows: Sequence[Mapping[str, Any]]) -> None:
    for row in rows:
        for value in row.values():
            if isinstance(value, datetime):
                utc(value)


class PostgresStore(Protocol):
    """What the read models use of PostgreSQL's store, beside SQL: raw
    statements (a batch in one round trip) and the hot standby."""

    standby_wait: float
    standby_reads: int
    primary_reads: int

    def execute_raw(
        self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[tuple[Any, ...]]: ...

    def standby_engine(self) -> Engine | None: ...


class SQLReadModels:
    """The read models of a SQL event store: checkpoints, and rows upserted
    with them."""

    def __init__(
        self, store: SQLAlchemyEventStore, postgres: PostgresStore | None = None
    ) -> None:
        """``postgres``: the same store, when it is PostgreSQL's (its fast
        paths)."""
        self.store = store
        self._postgres = postgres

    def checkpoint(self, name: str) -> int:
        """The position projection ``name`` has applied up to (0: none)."""
        if self._postgres is not None:
            rows = self._postgres.execute_raw(pgsql.CHECKPOINT, (name,))
            return int(rows[0][0]) if rows else 0
        with translate_errors(), self.store.read_connection() as connection:
            return _checkpoint(connection, name)

    def apply(
        self,
        name: str,
        from_position: int,
        to_position: int,
        table: Table,
        rows: Sequence[Mapping[str, Any]],
    ) -> bool:
        """Upsert ``rows`` (each a value for every column of ``table``) and
        move checkpoint ``name`` from ``from_position`` to ``to_position`` in
        one transaction. False (nothing written) if the checkpoint was not
        at ``from_position`` (another runner got there). A time without a
        zone is refused with ``ValueError``, before anything is written."""
        _check_times(rows)
        if self._postgres is not None:
            ((applied,),) = self._postgres.execute_raw(
                pgsql.apply_rows(table),
                {
                    "name": name,
                    "from": from_position,
                    "to": to_position,
                    "rows": dumps_json(
                        [{k: _json_value(v) for k, v in r.items()} for r in rows]
                    ),
                },
            )
            return bool(applied)
        (key,) = table.primary_key.columns
        with translate_errors(), self.store.write_transaction() as connection:
            current = connection.execute(
                select(tables.projection_checkpoints.c.position)
                .where(tables.projection_checkpoints.c.name == name)
                .with_for_update()
            ).scalar_one_or_none()
            if (current or 0) != from_position:
                return False
            keys = [r[key.name] for r in rows]
            if keys:
                connection.execute(delete(table).where(key.in_(keys)))
                connection.execute(insert(table), [dict(r) for r in rows])
            now = datetime.now(UTC)
            if current is None:
                connection.execute(
                    insert(tables.projection_checkpoints).values(
                        name=name, position=to_position, updated_at=now
                    )
                )
            else:
                connection.execute(
                    update(tables.projection_checkpoints)
                    .where(tables.projection_checkpoints.c.name == name)
                    .values(position=to_position, updated_at=now)
                )
            return True

    def reset(self, name: str, table: Table) -> None:
        """Empty ``table`` and put checkpoint ``name`` back to zero."""
        with translate_errors(), self.store.write_transaction() as connection:
            connection.execute(delete(table))
            connection.execute(
                delete(tables.projection_checkpoints).where(
                    tables.projection_checkpoints.c.name == name
                )
            )

    def query(self, statement: Executable) -> list[Any]:
        """The rows of a read of the read models."""
        with translate_errors(), self.store.read_connection() as connection:
            return list(connection.execute(statement))

    def query_nearby(
        self, statement: Executable, name: str, at_least: int
    ) -> list[Any]:
        """:meth:`query` from a hot standby (PostgreSQL with
        ``STRATA_READ_DATABASE_URL``) whose copy of projection ``name`` has
        applied the log up to ``at_least`` (read your writes: the caller
        passes what the primary's has applied for it), read in one
        snapshot with the checkpoint; from the primary when there is no
        standby, or it is unreachable or still behind after a short wait."""
        postgres = self._postgres
        engine = None if postgres is None else postgres.standby_engine()
        if postgres is None or engine is None:
            return self.query(statement)
        deadline = time.monotonic() + postgres.standby_wait
        pause = 0.001
        try:
            while True:
                with (
                    engine.connect().execution_options(
                        isolation_level="REPEATABLE READ"
                    ) as connection,
                    connection.begin(),
                ):
                    if _checkpoint(connection, name) >= at_least:
                        rows = list(connection.execute(statement))
                        postgres.standby_reads += 1
                        return rows
                if time.monotonic() >= deadline:
                    break
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
        except SQLAlchemyError:
            pass  # unreachable: the primary answers
        postgres.primary_reads += 1
        return self.query(statement)


def _checkpoint(connection: Connection, name: str) -> int:
    position = connection.execute(
        select(tables.projection_checkpoints.c.position).where(
            tables.projection_checkpoints.c.name == name
        )
    ).scalar_one_or_none()
    return int(position or 0)
