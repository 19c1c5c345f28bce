"""Open the event store a database URL names: the composition root's one call."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import URL

from eventstore.base import EventStore
from eventstore.postgres import PostgresEventStore
from eventstore.sqlite import SQLiteEventStore
from eventstore.urls import database_url


def open_store(url: str | URL, read_urls: Sequence[str] = ()) -> EventStore:
    """The store for ``url``, chosen by its scheme.

    ``sqlite:///path/to/strata.db`` (``sqlite://`` for a private in-memory
    store), or ``postgresql://``, ``postgres://``, ``postgresql+psycopg://``,
    with ``read_urls`` its hot standbys (PostgreSQL only). A PostgreSQL URL
    may name several hosts, libpq's way (``postgresql://h1:5432,h2:5432/db
    ?target_session_attrs=read-write``): see :mod:`eventstore.urls`.
    The schema must exist: see :mod:`eventstore.migrate`.
    """
    parsed = database_url(url)
    if parsed.get_backend_name() == "sqlite":
        if read_urls:
            raise ValueError("standbys are PostgreSQL's: SQLite has none")
        return SQLiteEventStore(parsed)
    return PostgresEventStore(parsed, read_urls=read_urls)
