"""The game list read model (kept by the game list projection).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "game_list",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("game_type", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("seats_taken", sa.Integer(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("winners", sa.Text(), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("characters", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("game_id", name="pk_game_list"),
    )
    op.create_index(
        "ix_game_list_game_type_game_id", "game_list", ["game_type", "game_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_game_list_game_type_game_id", table_name="game_list")
    op.drop_table("game_list")
