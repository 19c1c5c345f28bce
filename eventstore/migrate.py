"""Schema migrations run from code: upgrade a database, or say where it stands.

The Alembic scripts live inside the package (``eventstore/migrations``), so
no ``alembic.ini`` is needed: :func:`alembic_config` builds the configuration
in code. The service calls :func:`check` at startup and prints
:attr:`SchemaStatus.message` instead of crash-looping on a schema it cannot
use; operators run ``python -m eventstore.migrate {check,upgrade} URL``.
"""

from __future__ import annotations

import argparse
import enum
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, inspect, pool, text
from sqlalchemy.engine import URL

from eventstore.base import StoreError, StoreUnavailable
from eventstore.sql import translate_errors
from eventstore.urls import database_url, is_sqlite_memory

#: Where the migration scripts are, as ``package:directory``.
SCRIPT_LOCATION = "eventstore:migrations"
#: How an operator runs the migrations (see :func:`main`).
UPGRADE_COMMAND = "python -m eventstore.migrate upgrade <database URL>"
#: Key of the PostgreSQL advisory lock that serializes concurrent upgrades.
_UPGRADE_LOCK_KEY = 0x5354_5241_5441  # "STRATA"


class MigrationError(StoreError):
    """The schema cannot be migrated by this code (for example, it is newer)."""


class SchemaState(enum.Enum):
    """Where a database's schema stands relative to this code."""

    EMPTY = "empty"
    BEHIND = "behind"
    UP_TO_DATE = "up to date"
    AHEAD = "ahead of code"


@dataclass(frozen=True)
class SchemaStatus:
    """The outcome of :func:`check`: the state, the revisions and a sentence."""

    state: SchemaState
    current: tuple[str, ...]
    head: str

    @property
    def ok(self) -> bool:
        """True when the store can be used as it is."""
        return self.state is SchemaState.UP_TO_DATE

    @property
    def message(self) -> str:
        """A sentence for an operator: what is wrong and what to do."""
        current = ", ".join(self.current) or "base (no migration applied)"
        match self.state:
            case SchemaState.UP_TO_DATE:
                return f"database schema is up to date (revision {self.head})"
            case SchemaState.EMPTY:
                return (
                    "database has no Strata schema yet: run the migrations "
                    f"({UPGRADE_COMMAND}) to create revision {self.head}"
                )
            case SchemaState.BEHIND:
                return (
                    f"database schema is behind the code: it is at revision "
                    f"{current}, the code needs {self.head}; run the migrations "
                    f"({UPGRADE_COMMAND})"
                )
            case SchemaState.AHEAD:
                return (
                    f"database schema is ahead of the code: it is at revision "
                    f"{current}, which this version of Strata does not know (it "
                    f"knows up to {self.head}); run the newer version of Strata"
                )


def alembic_config(url: str | URL | None = None) -> Config:
    """An Alembic configuration for the event store, built in code."""
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    if url is not None:
        # An attribute, not a main option: ConfigParser would interpolate "%".
        config.attributes["url"] = database_url(url).render_as_string(
            hide_password=False
        )
    return config


def upgrade(url: str | URL, revision: str = "head") -> None:
    """Run the migrations up to ``revision`` (default: the latest).

    Creates the SQLite file (and its directory) if needed. Concurrent upgrades
    of one PostgreSQL database wait for each other. Raises
    :class:`MigrationError` if the database is ahead of this code and
    :class:`~eventstore.base.StoreUnavailable` if it cannot be reached.
    """
    parsed = database_url(url)
    if _sqlite_file(parsed):
        Path(_sqlite_file(parsed)).parent.mkdir(parents=True, exist_ok=True)
    with _connection(parsed, transaction=True) as connection:
        upgrade_connection(connection, revision)


def upgrade_connection(connection: Connection, revision: str = "head") -> None:
    """Run the migrations on an open connection, in its transaction."""
    if connection.dialect.name == "postgresql":
        connection.execute(
            text("SELECT pg_advisory_xact_lock(:key)"), {"key": _UPGRADE_LOCK_KEY}
        )
    status = _status(connection)
    if status.state is SchemaState.AHEAD:
        raise MigrationError(status.message)
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def downgrade(url: str | URL, revision: str) -> None:
    """Run the migrations down to ``revision`` (``"base"`` removes everything)."""
    with _connection(database_url(url), transaction=True) as connection:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def check(url: str | URL) -> SchemaStatus:
    """Where the database's schema stands: empty, behind, up to date or ahead.

    Raises :class:`~eventstore.base.StoreUnavailable` if it cannot be reached.
    """
    parsed = database_url(url)
    if _sqlite_file(parsed) and not Path(_sqlite_file(parsed)).exists():
        # Connecting would create the file; an absent file is simply empty.
        return SchemaStatus(SchemaState.EMPTY, (), _head())
    with _connection(parsed, transaction=False) as connection:
        return _status(connection)


def _sqlite_file(url: URL) -> str:
    """The file a SQLite URL names ("" for other databases and memory)."""
    if url.get_backend_name() != "sqlite" or is_sqlite_memory(url):
        return ""
    return url.database or ""


def _head() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "the event store has at least one migration"
    return head


def _status(connection: Connection) -> SchemaStatus:
    script = ScriptDirectory.from_config(alembic_config())
    head = _head()
    if not inspect(connection).has_table("alembic_version"):
        return SchemaStatus(SchemaState.EMPTY, (), head)
    current = tuple(MigrationContext.configure(connection).get_current_heads())
    known = {revision.revision for revision in script.walk_revisions()}
    if current == (head,):
        state = SchemaState.UP_TO_DATE
    elif any(revision not in known for revision in current):
        state = SchemaState.AHEAD
    else:
        state = SchemaState.BEHIND
    return SchemaStatus(state, current, head)


@contextmanager
def _connection(url: URL, *, transaction: bool) -> Iterator[Connection]:
    engine: Engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with translate_errors(), engine.connect() as connection:
            if transaction:
                with connection.begin():
                    yield connection
            else:
                yield connection
    finally:
        engine.dispose()


def main(argv: list[str] | None = None) -> int:
    """``python -m eventstore.migrate {check,upgrade} URL``: exit 0 when the
    schema is (now) up to date, 1 otherwise, with a sentence either way."""
    parser = argparse.ArgumentParser(
        prog="python -m eventstore.migrate", description=main.__doc__
    )
    parser.add_argument("action", choices=["check", "upgrade"])
    parser.add_argument("url", help="sqlite:///path/to/strata.db or postgresql://…")
    arguments = parser.parse_args(argv)
    try:
        if arguments.action == "upgrade":
            upgrade(arguments.url)
        status = check(arguments.url)
    except (StoreUnavailable, MigrationError) as error:
        print(error, file=sys.stderr)
        return 1
    print(status.message, file=sys.stdout if status.ok else sys.stderr)
    return 0 if status.ok else 1


if __name__ == "__main__":
    sys.exit(main())
