"""Plain SQL on a store's database, for tests that inspect or sabotage it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import create_engine, pool, text

from eventstore.urls import database_url


def execute(url: str, sql: str, **parameters: Any) -> Any:
    """Run one statement in its own committed transaction; its first value
    (None when it returns no rows)."""
    engine = create_engine(database_url(url), poolclass=pool.NullPool)
    try:
        with engine.begin() as connection:
            result = connection.execute(text(sql), parameters)
            return result.scalar() if result.returns_rows else None
    finally:
        engine.dispose()
