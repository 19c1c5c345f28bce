"""Alembic environment of the event store.

``eventstore.migrate`` builds the Alembic config in code and hands over either
an open connection (``config.attributes["connection"]``) or a URL
(``config.attributes["url"]``); no ``alembic.ini`` is needed.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from eventstore.tables import metadata
from eventstore.urls import database_url

config = context.config


def _url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL given to the event store migrations")
    return database_url(url).render_as_string(hide_password=False)


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Emit the migrations as SQL without a database."""
    context.configure(url=_url(), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on the given connection, or on a new one."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(_url(), poolclass=pool.NullPool)
    try:
        with engine.connect() as new_connection:
            _run(new_connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
