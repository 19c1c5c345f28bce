"""open_store picks the backend a URL names."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventstore.factory import open_store
from eventstore.postgres import PostgresEventStore
from eventstore.sqlite import SQLiteEventStore


@pytest.mark.parametrize(
    "url",
    [
        "postgres://postgres@127.0.0.1:5432/strata",
        "postgresql://postgres@127.0.0.1:5432/strata",
        "postgresql+psycopg://postgres@127.0.0.1:5432/strata",
    ],
)
def test_postgres_urls_open_the_postgres_store(url: str) -> None:
    store = open_store(url)  # opening does not connect yet
    try:
        assert isinstance(store, PostgresEventStore)
    finally:
        store.close()


@pytest.mark.parametrize("name", ["", "/:memory:", "/{tmp}/strata.db"])
def test_sqlite_urls_open_the_sqlite_store(name: str, tmp_path: Path) -> None:
    store = open_store("sqlite://" + name.format(tmp=tmp_path))
    try:
        assert isinstance(store, SQLiteEventStore)
    finally:
        store.close()


@pytest.mark.parametrize(
    "url", ["mysql://localhost/strata", "postgresql+psycopg2://x/y"]
)
def test_other_databases_are_refused_by_name(url: str) -> None:
    with pytest.raises(ValueError, match="unsupported database URL"):
        open_store(url)
