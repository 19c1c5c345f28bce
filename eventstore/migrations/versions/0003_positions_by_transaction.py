"""PostgreSQL: global positions from transaction ids, not a counter row.

From this revision the PostgreSQL store gives the events a transaction
appends ``pg_current_xact_id() << 16`` plus their rank in it, and reads the
global log only below the oldest transaction still running (see
``eventstore.sql``). The positions already handed out (1, 2, 3, ... from the
counter row) stay as they are: every new position is above them, so each
stays a valid resume point. The counter row goes, so that a process of the
old code still running cannot append behind the new positions (its appends
now write nothing). SQLite keeps its single writer and its counter.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_context().dialect.name != "postgresql":
        return
    bind = op.get_bind()
    # The migration's own transaction id: every later appending transaction
    # has a higher one, so its positions are above ``first``.
    last, first = bind.execute(
        sa.text(
            "SELECT coalesce(max(position), 0),"
            " (pg_current_xact_id()::text::bigint << 16) FROM events"
        )
    ).one()
    if last >= first:
        raise RuntimeError(
            f"the events' positions reach {last}, past the first position a new "
            f"transaction would get ({first}): the cluster's transaction ids are "
            "behind the log (see docs/SCALING.md, 'Restoring a dump')"
        )
    op.execute("DELETE FROM counters WHERE name = 'position'")


def downgrade() -> None:
    if op.get_context().dialect.name != "postgresql":
        return
    # The old code claims positions from the counter, after every position
    # given so far: they stay in order.
    op.execute(
        "INSERT INTO counters (name, value)"
        " SELECT 'position', coalesce(max(position), 0) FROM events"
    )
