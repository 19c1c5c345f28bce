"""The game list keeps each game's creation position: ListGames' order.

``created_position`` is the log position of the game's first event
(GameCreated, version 1). ListGames lists by it (then by id), so the games
come in the order they were created, or imported, whatever their ids: an id
derived from a ``request_id``, or kept by an import, sorts anywhere.

The existing rows are filled from the events table; a row whose game has
no first event there (none should) gets 0, so it is still listed, first.
The column is then NOT NULL: the projection writes it with every row. The
index on (game_type, game_id), which served the id order, becomes one on
(game_type, created_position).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "game_list", sa.Column("created_position", sa.BigInteger(), nullable=True)
    )
    op.execute(
        "UPDATE game_list SET created_position = coalesce("
        "(SELECT position FROM events"
        " WHERE events.game_id = game_list.game_id AND events.version = 1), 0)"
    )
    # SQLite cannot make a column NOT NULL in place: batch mode copies the
    # table (PostgreSQL alters it).
    with op.batch_alter_table("game_list") as batch:
        batch.alter_column(
            "created_position", existing_type=sa.BigInteger(), nullable=False
        )
    op.drop_index("ix_game_list_game_type_game_id", table_name="game_list")
    op.create_index(
        "ix_game_list_created_position_game_id",
        "game_list",
        ["created_position", "game_id"],
    )
    op.create_index(
        "ix_game_list_game_type_created_position",
        "game_list",
        ["game_type", "created_position"],
    )


def downgrade() -> None:
    op.drop_index("ix_game_list_game_type_created_position", table_name="game_list")
    op.drop_index("ix_game_list_created_position_game_id", table_name="game_list")
    op.create_index(
        "ix_game_list_game_type_game_id", "game_list", ["game_type", "game_id"]
    )
    op.drop_column("game_list", "created_position")
