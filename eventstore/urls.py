"""Database URLs: which backend a URL names and which driver serves it.

Users write the URLs they know (``postgres://``, ``postgresql://``,
``sqlite:///strata.db``); the store always talks to PostgreSQL through
psycopg 3 and to SQLite through the standard library's ``sqlite3``.
"""

from __future__ import annotations

from sqlalchemy.engine import URL, make_url

POSTGRES_DRIVER = "postgresql+psycopg"


def database_url(url: str | URL) -> URL:
    """Parse ``url`` and pin its driver.

    ``postgres://`` and ``postgresql://`` become ``postgresql+psycopg://``;
    ``sqlite://`` URLs are kept. Any other scheme raises :class:`ValueError`.
    """
    parsed = make_url(url) if isinstance(url, str) else url
    if parsed.drivername in ("postgres", "postgresql", POSTGRES_DRIVER):
        return parsed.set(drivername=POSTGRES_DRIVER)
    if parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        return parsed
    raise ValueError(
        f"unsupported database URL scheme {parsed.drivername!r}: use "
        "sqlite:///path/to/file.db or postgresql://user@host:port/database"
    )


def is_sqlite_memory(url: URL) -> bool:
    """Whether a SQLite URL names a private in-memory database."""
    return url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"
