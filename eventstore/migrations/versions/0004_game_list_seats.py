"""The game list keeps each game's seats, so ListGames needs no game loaded.

A JSON list, one entry a seat: ``null`` for a free seat, else
``[player_name, bot, left]``. Rows written before this revision have no
seats (NULL) until the projection next writes them; ListGames loads such a
game for its seats, as it did before.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("game_list", sa.Column("seats", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("game_list", "seats")
