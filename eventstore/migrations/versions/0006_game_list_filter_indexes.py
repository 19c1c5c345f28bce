"""The game list gets an index for each of ListGames' filters.

ListGames lists in creation order (``created_position``, then
``game_id``) and filters by type, status, seat count and a free seat. With
only the creation order indexed, a filter that few games match walked the
whole list to fill a page (the open games among thousands finished, a seat
count nobody plays). Each filter now has an index in creation order: by
status, by type and status, by seat count, and a partial index of the
rows with a seat free. The index by type gains ``game_id``, the order's
second key, so that it serves the whole order.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ORDER = ["created_position", "game_id"]
FREE_SEAT = sa.text("seats_taken < players")


def upgrade() -> None:
    op.drop_index("ix_game_list_game_type_created_position", table_name="game_list")
    op.create_index(
        "ix_game_list_game_type_created_position_game_id",
        "game_list",
        ["game_type", *ORDER],
    )
    op.create_index(
        "ix_game_list_status_created_position_game_id",
        "game_list",
        ["status", *ORDER],
    )
    op.create_index(
        "ix_game_list_game_type_status_created_position_game_id",
        "game_list",
        ["game_type", "status", *ORDER],
    )
    op.create_index(
        "ix_game_list_players_created_position_game_id",
        "game_list",
        ["players", *ORDER],
    )
    op.create_index(
        "ix_game_list_open_seats",
        "game_list",
        ORDER,
        sqlite_where=FREE_SEAT,
        postgresql_where=FREE_SEAT,
    )


def downgrade() -> None:
    op.drop_index("ix_game_list_open_seats", table_name="game_list")
    op.drop_index(
        "ix_game_list_players_created_position_game_id", table_name="game_list"
    )
    op.drop_index(
        "ix_game_list_game_type_status_created_position_game_id", table_name="game_list"
    )
    op.drop_index(
        "ix_game_list_status_created_position_game_id", table_name="game_list"
    )
    op.drop_index(
        "ix_game_list_game_type_created_position_game_id", table_name="game_list"
    )
    op.create_index(
        "ix_game_list_game_type_created_position",
        "game_list",
        ["game_type", "created_position"],
    )
