"""Read models kept by projections, with their checkpoints, in the store's
database.

A projection follows the global log from its checkpoint. Each batch it
applies changes its read model rows **and** moves its checkpoint in one
transaction, after checking that the checkpoint is still where the batch
started (compare-and-set): so a batch is applied exactly once even when a
runner is killed mid-batch or several replicas run the same projection.
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
from eventstore.sql import SQLAlchemyEventStore, translate_errors

game_list = tables.game_list


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
            "winners": json.dumps(list(self.winners)),
            "result": self.result,
            "characters": json.dumps({str(k): v for k, v in self.characters.items()}),
            "created_at": self.created_at,
            "finished_at": self.finished_at,
        }


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

    def checkpoint(self, name: str) -> int:
        """The position projection ``name`` has applied up to (0: none)."""
        with translate_errors(), self.store.read_connection() as connection:
            return _checkpoint(connection, name)

    def apply_game_rows(
        self, name: str, from_position: int, to_position: int, rows: Sequence[GameRow]
    ) -> bool:
        """Upsert ``rows`` and move the checkpoint from ``from_position`` to
        ``to_position`` in one transaction. False (nothing written) if the
        checkpoint was not at ``from_position`` (another runner got there)."""
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
