"""open_store picks the backend a URL names."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine

from eventstore.factory import open_store
from eventstore.postgres import PostgresEventStore
from eventstore.sqlite import SQLiteEventStore
from eventstore.urls import database_url, split_urls


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


def test_a_url_naming_several_servers_keeps_them_all_in_order() -> None:
    """libpq's multi-host form (what ``pg_autoctl show uri`` prints), which
    SQLAlchemy's own parser refuses: every host, its port and the query's
    ``target_session_attrs`` reach psycopg."""
    url = database_url(
        "postgresql://strata:pa%40ss@db1:5432,db2,[::1]:6432/strata"
        "?target_session_attrs=read-write&connect_timeout=3"
    )
    engine = create_engine(url)
    _, params = engine.dialect.create_connect_args(engine.url)
    engine.dispose()
    assert params["host"] == "db1,db2,::1"
    assert params["port"] == "5432,,6432"
    assert params["target_session_attrs"] == "read-write"
    assert (params["dbname"], params["user"], params["password"]) == (
        "strata",
        "strata",
        "pa@ss",
    )
    assert database_url(url.render_as_string(hide_password=False)) == url
    store = open_store("postgresql://db1:5432,db2:5432/strata")
    try:
        assert isinstance(store, PostgresEventStore)
    finally:
        store.close()


def test_a_list_of_urls_splits_where_a_scheme_begins() -> None:
    assert split_urls(
        "postgresql://s1:5432,s2:5432/strata?target_session_attrs=standby, "
        "postgres://s3/strata,"
    ) == (
        "postgresql://s1:5432,s2:5432/strata?target_session_attrs=standby",
        "postgres://s3/strata",
    )
    assert split_urls("") == ()
