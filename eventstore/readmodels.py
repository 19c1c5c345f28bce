"""Read models kept by projections, with their checkpoints, in the store's
database.

A projection follows the global log from its checkpoint. Each batch it
applies changes its read model rows **and** moves its checkpoint in one
transaction, after checking that the checkpoint is still where the batch
started (compare-and-set): so a batch is applied exactly once even when a
runner is killed mid-batch or several replicas run the same projection.

On PostgreSQL a batch is one prepared statement in raw psycopg (one round
trip, one transaction): it moves the checkpoint if it is still where the
batch started and upserts the rows only if it did. SQLite goes through
SQLAlchemy Core.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Connection,
    delete,
    func,
    insert,
    select,
    update,
)

from eventstore import tables
from eventstore.postgres import PostgresEventStore
from eventstore.sql import SQLAlchemyEventStore, dumps_json, translate_errors

game_list = tables.game_list

# One batch on PostgreSQL. The checkpoint moves if it is at %(from)s (the
# row is created when the projection starts from 0 and has none; a runner
# that loses a race finds it moved, or created, and changes nothing), and
# the rows are upserted only if it moved: ``applied`` feeds their INSERT.
# Rows come as one JSON array of arrays (one text parameter).
_APPLY_GAME_ROWS = """
WITH moved AS (
  UPDATE projection_checkpoints SET position = %(to)s::bigint, updated_at = now()
  WHERE name = %(name)s AND position = %(from)s::bigint
  RETURNING 1
), created AS (
  INSERT INTO projection_checkpoints (name, position, updated_at)
  SELECT %(name)s, %(to)s::bigint, now()
  WHERE %(from)s::bigint = 0
    AND NOT EXISTS (SELECT FROM projection_checkpoints WHERE name = %(name)s)
  ON CONFLICT (name) DO NOTHING
  RETURNING 1
), applied AS (
  SELECT FROM moved UNION ALL SELECT FROM created
), upserted AS (
  INSERT INTO game_list (game_id, game_type, status, players, seats_taken,
    version, winners, result, characters, created_at, finished_at)
  SELECT r ->> 0, r ->> 1, r ->> 2, (r ->> 3)::int, (r ->> 4)::int,
    (r ->> 5)::bigint, r ->> 6, r ->> 7, r ->> 8, (r ->> 9)::timestamptz,
    (r ->> 10)::timestamptz
  FROM json_array_elements(%(rows)s::json) AS r
  WHERE EXISTS (SELECT FROM applied)
  ON CONFLICT (game_id) DO UPDATE SET game_type = excluded.game_type,
    status = excluded.status, players = excluded.players,
    seats_taken = excluded.seats_taken, version = excluded.version,
    winners = excluded.winners, result = excluded.result,
    characters = excluded.characters, created_at = excluded.created_at,
    finished_at = excluded.finished_at
)
SELECT EXISTS (SELECT FROM applied)
"""
_CHECKPOINT = "SELECT position FROM projection_checkpoints WHERE name = %s"


@dataclass(frozen=True)
class GameRow:
    """One game in the game list."""

    game_id: str
    game_type: str
    status: str
    players: int
    seats_taken: int
    version: int
    winners: tuple[int, ...]
    result: str
    characters: dict[int, str]
    created_at: datetime
    finished_at: datetime | None

    def values(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "game_type": self.game_type,
            "status": self.status,
            "players": self.players,
            "seats_taken": self.seats_taken,
            "version": self.version,
            "winners": self._winners(),
            "result": self.result,
            "characters": self._characters(),
            "created_at": self.created_at,
            "finished_at": self.finished_at,
        }

    def array(self) -> list[Any]:
        """The row as :data:`_APPLY_GAME_ROWS` takes it."""
        return [
            self.game_id,
            self.game_type,
            self.status,
            self.players,
            self.seats_taken,
            self.version,
            self._winners(),
            self.result,
            self._characters(),
            _timestamp(self.created_at),
            None if self.finished_at is None else _timestamp(self.finished_at),
        ]

    def _winners(self) -> str:
        return json.dumps(list(self.winners))

    def _characters(self) -> str:
        return json.dumps({str(k): v for k, v in self.characters.items()})


def _timestamp(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: timestamps must be aware")
    return value.isoformat()


def _row(row: Any) -> GameRow:
    return GameRow(
        game_id=row.game_id,
        game_type=row.game_type,
        status=row.status,
        players=row.players,
        seats_taken=row.seats_taken,
        version=row.version,
        winners=tuple(json.loads(row.winners)),
        result=row.result,
        characters={int(k): v for k, v in json.loads(row.characters).items()},
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


class ReadModels:
    """The read models of a SQL event store."""

    def __init__(self, store: SQLAlchemyEventStore) -> None:
        self.store = store
        self._postgres = store if isinstance(store, PostgresEventStore) else None

    def checkpoint(self, name: str) -> int:
        """The position projection ``name`` has applied up to (0: none)."""
        if self._postgres is not None:
            rows = self._postgres.execute_raw(_CHECKPOINT, (name,))
            return int(rows[0][0]) if rows else 0
        with translate_errors(), self.store.read_connection() as connection:
            return _checkpoint(connection, name)

    def apply_game_rows(
        self, name: str, from_position: int, to_position: int, rows: Sequence[GameRow]
    ) -> bool:
        """Upsert ``rows`` and move the checkpoint from ``from_position`` to
        ``to_position`` in one transaction. False (nothing written) if the
        checkpoint was not at ``from_position`` (another runner got there)."""
        if self._postgres is not None:
            ((applied,),) = self._postgres.execute_raw(
                _APPLY_GAME_ROWS,
                {
                    "name": name,
                    "from": from_position,
                    "to": to_position,
                    "rows": dumps_json([row.array() for row in rows]),
                },
            )
            return bool(applied)
        with translate_errors(), self.store.write_transaction() as connection:
            current = connection.execute(
                select(tables.projection_checkpoints.c.position)
                .where(tables.projection_checkpoints.c.name == name)
                .with_for_update()
            ).scalar_one_or_none()
            if (current or 0) != from_position:
                return False
            ids = [r.game_id for r in rows]
            if ids:
                connection.execute(
                    delete(game_list).where(game_list.c.game_id.in_(ids))
                )
                connection.execute(insert(game_list), [r.values() for r in rows])
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

    def reset(self, name: str) -> None:
        """Empty the game list and put its checkpoint back to zero."""
        with translate_errors(), self.store.write_transaction() as connection:
            connection.execute(delete(game_list))
            connection.execute(
                delete(tables.projection_checkpoints).where(
                    tables.projection_checkpoints.c.name == name
                )
            )

    def game(self, game_id: str) -> GameRow | None:
        with translate_errors(), self.store.read_connection() as connection:
            row = connection.execute(
                select(game_list).where(game_list.c.game_id == game_id)
            ).one_or_none()
            return None if row is None else _row(row)

    def list_games(
        self, game_type: str = "", status: str = "", after: str = "", limit: int = 50
    ) -> list[GameRow]:
        """Games in id (creation) order after ``after``, filtered."""
        query = select(game_list).where(game_list.c.game_id > after)
        if game_type:
            query = query.where(game_list.c.game_type == game_type)
        if status:
            query = query.where(game_list.c.status == status)
        query = query.order_by(game_list.c.game_id).limit(limit)
        with translate_errors(), self.store.read_connection() as connection:
            return [_row(r) for r in connection.execute(query)]

    def all_games(self) -> list[GameRow]:
        """Every row, in id order (for comparing rebuilt and live models)."""
        with translate_errors(), self.store.read_connection() as connection:
            return [
                _row(r)
                for r in connection.execute(
                    select(game_list).order_by(game_list.c.game_id)
                )
            ]

    def statistics(self, game_type: str = "") -> list[dict[str, Any]]:
        """Per-game-type statistics over the game list."""
        query = select(
            game_list.c.game_type,
            game_list.c.status,
            game_list.c.version,
            game_list.c.winners,
            game_list.c.result,
            game_list.c.characters,
        )
        if game_type:
            query = query.where(game_list.c.game_type == game_type)
        by_type: dict[str, dict[str, Any]] = {}
        with translate_errors(), self.store.read_connection() as connection:
            for row in connection.execute(query):
                stats = by_type.setdefault(
                    row.game_type,
                    {
                        "game_type": row.game_type,
                        "games": 0,
                        "finished": 0,
                        "active": 0,
                        "open": 0,
                        "lengths": [],
                        "wins_by_seat": {},
                        "wins_by_character": {},
                        "results": {},
                    },
                )
                stats["games"] += 1
                stats[row.status] += 1
                if row.status == "finished":
                    stats["lengths"].append(row.version)
                    stats["results"][row.result] = (
                        stats["results"].get(row.result, 0) + 1
                    )
                    characters = json.loads(row.characters)
                    for seat in json.loads(row.winners):
                        stats["wins_by_seat"][seat] = (
                            stats["wins_by_seat"].get(seat, 0) + 1
                        )
                        name = characters.get(str(seat))
                        if name:
                            stats["wins_by_character"][name] = (
                                stats["wins_by_character"].get(name, 0) + 1
                            )
        return [by_type[k] for k in sorted(by_type)]

    def count(self) -> int:
        with translate_errors(), self.store.read_connection() as connection:
            return int(
                connection.execute(
                    select(func.count()).select_from(game_list)
                ).scalar_one()
            )


def _checkpoint(connection: Connection, name: str) -> int:
    position = connection.execute(
        select(tables.projection_checkpoints.c.position).where(
            tables.projection_checkpoints.c.name == name
        )
    ).scalar_one_or_none()
    return int(position or 0)
