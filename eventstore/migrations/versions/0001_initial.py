"""The initial event store schema: events, commands, snapshots, checkpoints.

Revision ID: 0001
Revises:
Create Date: 2024-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "version", name="pk_events"),
        sa.UniqueConstraint("position", name="uq_events_position"),
    )
    op.create_table(
        "commands",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("command_id", sa.Text(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("decided_at_version", sa.BigInteger(), nullable=False),
        sa.Column("first_version", sa.BigInteger(), nullable=False),
        sa.Column("last_version", sa.BigInteger(), nullable=False),
        sa.Column("error_kind", sa.Text(), nullable=False),
        sa.Column("error_reason", sa.Text(), nullable=False),
        sa.Column("error_message", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "command_id", name="pk_commands"),
    )
    op.create_index("ix_commands_game_id_sequence", "commands", ["game_id", "sequence"])
    op.create_table(
        "snapshots",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("game_id", name="pk_snapshots"),
    )
    op.create_table(
        "projection_checkpoints",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_projection_checkpoints"),
    )
    counters = op.create_table(
        "counters",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_counters"),
    )
    rows = [{"name": "position", "value": 0}]
    if op.get_context().dialect.name == "sqlite":
        # SQLite has no identity columns: commands.sequence comes from here.
        rows.append({"name": "command_sequence", "value": 0})
    op.bulk_insert(counters, rows)


def downgrade() -> None:
    op.drop_table("counters")
    op.drop_table("projection_checkpoints")
    op.drop_table("snapshots")
    op.drop_index("ix_commands_game_id_sequence", table_name="commands")
    op.drop_table("commands")
    op.drop_table("events")
