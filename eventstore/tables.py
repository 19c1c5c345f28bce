"""The event store's tables, as SQLAlchemy Core metadata.

Every per-game table is keyed by ``game_id`` first, so the schema can later be
distributed by that column (for example on Citus). The few global tables
(``counters``, ``projection_checkpoints``) are small bookkeeping tables that
would become reference tables there.

The migrations in ``eventstore/migrations`` create this schema; these objects
are what the stores query with. A test keeps the two in step.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Dialect,
    Identity,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    TypeDecorator,
    text,
)

from eventstore.base import utc

metadata = MetaData(
    naming_convention={
        "pk": "pk_%(table_name)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    }
)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back as a UTC-aware ``datetime``.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so the value
    is stored as naive UTC and made aware again when read.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(
        self, value: datetime | None, dialect: Dialect
    ) -> datetime | None:
        if value is None:
            return None
        value = utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(
        self, value: datetime | None, dialect: Dialect
    ) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


events = Table(
    "events",
    metadata,
    Column("game_id", Text, nullable=False),
    Column("version", BigInteger, nullable=False),
    # Global order of the log (see eventstore.sql): on SQLite dense, from the
    # counter; on PostgreSQL the appending transaction's id << 16 plus the
    # event's rank in it (since revision 0003; the positions before stay).
    Column("position", BigInteger, nullable=False, unique=True),
    Column("type", Text, nullable=False),
    Column("schema_version", Integer, nullable=False),
    # JSON, not JSONB, on PostgreSQL: the stored text is kept byte for byte
    # (key order included), which verified replays compare.
    Column("data", JSON, nullable=False),
    Column("recorded_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("game_id", "version"),
)

commands = Table(
    "commands",
    metadata,
    Column("game_id", Text, nullable=False),
    Column("command_id", Text, nullable=False),
    # Global and increasing in logging order. PostgreSQL fills it from an
    # identity column; SQLite, which has none, from the counters table.
    Column("sequence", BigInteger, Identity(), nullable=False),
    Column("actor", Text, nullable=False),
    Column("payload", JSON, nullable=False),
    Column("decided_at_version", BigInteger, nullable=False),
    Column("first_version", BigInteger, nullable=False),
    Column("last_version", BigInteger, nullable=False),
    Column("error_kind", Text, nullable=False),
    Column("error_reason", Text, nullable=False),
    Column("error_message", Text, nullable=False),
    Column("recorded_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("game_id", "command_id"),
    Index(None, "game_id", "sequence"),
)

snapshots = Table(
    "snapshots",
    metadata,
    Column("game_id", Text, primary_key=True),
    Column("version", BigInteger, nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("state", JSON, nullable=False),
    Column("saved_at", UTCDateTime, nullable=False),
)

projection_checkpoints = Table(
    "projection_checkpoints",
    metadata,
    Column("name", Text, primary_key=True),
    Column("position", BigInteger, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

counters = Table(
    "counters",
    metadata,
    Column("name", Text, primary_key=True),
    Column("value", BigInteger, nullable=False),
)

# The game list read model, kept by its projection (eventstore.readmodels).
game_list = Table(
    "game_list",
    metadata,
    Column("game_id", Text, primary_key=True),
    Column("game_type", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("players", Integer, nullable=False),
    Column("seats_taken", Integer, nullable=False),
    Column("version", BigInteger, nullable=False),
    # JSON text: list of winning seats, seat -> character name.
    Column("winners", Text, nullable=False),
    Column("result", Text, nullable=False),
    Column("characters", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
    # JSON text: per seat, null (free) or [player_name, bot, left]; NULL on
    # a row not written since revision 0004.
    Column("seats", Text, nullable=True),
    # The log position of the game's first event (GameCreated): ListGames'
    # order, the order the games were created in (or imported), whatever
    # their ids (revision 0005).
    Column("created_position", BigInteger, nullable=False),
    # ListGames' filters, each in creation order, so that a page reads
    # about a page however few games match (revision 0006).
    Index(None, "created_position", "game_id"),
    Index(None, "game_type", "created_position", "game_id"),
    Index(None, "status", "created_position", "game_id"),
    Index(None, "game_type", "status", "created_position", "game_id"),
    Index(None, "players", "created_position", "game_id"),
    Index(
        "ix_game_list_open_seats",
        "created_position",
        "game_id",
        sqlite_where=text("seats_taken < players"),
        postgresql_where=text("seats_taken < players"),
    ),
)


#: Row of ``counters`` holding the last global position handed out (SQLite
#: only since revision 0003: PostgreSQL positions follow transaction ids).
POSITION_COUNTER = "position"
#: Row of ``counters`` holding the last command sequence (SQLite only).
COMMAND_SEQUENCE_COUNTER = "command_sequence"
