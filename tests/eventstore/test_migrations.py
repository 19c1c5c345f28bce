"""Schema migrations on both backends: upgrade, and the startup check's verdicts."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, pool

from eventstore import migrate
from eventstore.base import NewEvent, StoreUnavailable
from eventstore.factory import open_store
from eventstore.migrate import SchemaState
from eventstore.tables import metadata
from eventstore.urls import database_url
from tests.eventstore import raw_sql


def test_an_empty_database_is_reported_empty(empty_database_url: str) -> None:
    status = migrate.check(empty_database_url)

    assert status.state is SchemaState.EMPTY
    assert not status.ok
    assert status.current == ()
    assert "no Strata schema" in status.message
    assert "run the migrations" in status.message


def test_upgrade_creates_a_schema_the_store_can_use(empty_database_url: str) -> None:
    migrate.upgrade(empty_database_url)

    status = migrate.check(empty_database_url)
    assert status.state is SchemaState.UP_TO_DATE
    assert status.ok
    assert status.current == (status.head,)
    assert "up to date" in status.message
    store = open_store(empty_database_url)
    try:
        assert store.append("game", 0, [NewEvent("Created", {})]).last_position == 1
    finally:
        store.close()


def test_upgrading_an_up_to_date_database_changes_nothing(
    empty_database_url: str,
) -> None:
    migrate.upgrade(empty_database_url)
    store = open_store(empty_database_url)
    store.append("game", 0, [NewEvent("Created", {"kept": True})])

    migrate.upgrade(empty_database_url)

    assert store.read_stream("game")[0].data == {"kept": True}
    store.close()


def test_a_database_downgraded_to_base_is_reported_behind(
    empty_database_url: str,
) -> None:
    migrate.upgrade(empty_database_url)

    migrate.downgrade(empty_database_url, "base")

    status = migrate.check(empty_database_url)
    assert status.state is SchemaState.BEHIND
    assert "behind the code" in status.message
    assert status.head in status.message
    migrate.upgrade(empty_database_url)
    assert migrate.check(empty_database_url).ok


def test_a_database_at_an_unknown_revision_is_reported_ahead(
    empty_database_url: str,
) -> None:
    migrate.upgrade(empty_database_url)
    raw_sql.execute(
        empty_database_url, "UPDATE alembic_version SET version_num = '9999_future'"
    )

    status = migrate.check(empty_database_url)

    assert status.state is SchemaState.AHEAD
    assert status.current == ("9999_future",)
    assert "ahead of the code" in status.message
    assert "9999_future" in status.message
    with pytest.raises(migrate.MigrationError, match="ahead of the code"):
        migrate.upgrade(empty_database_url)


def test_the_tables_the_store_queries_are_the_tables_migrations_create(
    empty_database_url: str,
) -> None:
    migrate.upgrade(empty_database_url)
    engine = create_engine(database_url(empty_database_url), poolclass=pool.NullPool)

    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), metadata)
    engine.dispose()

    assert differences == []


def test_a_store_on_a_database_without_schema_says_to_migrate(
    empty_database_url: str,
) -> None:
    store = open_store(empty_database_url)
    try:
        with pytest.raises(StoreUnavailable, match="run the migrations"):
            store.append("game", 0, [NewEvent("Created", {})])
        with pytest.raises(StoreUnavailable, match="run the migrations"):
            store.read_all()
    finally:
        store.close()


def test_the_command_line_checks_then_upgrades(
    empty_database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert migrate.main(["check", empty_database_url]) == 1
    assert "no Strata schema" in capsys.readouterr().err

    assert migrate.main(["upgrade", empty_database_url]) == 0
    assert "up to date" in capsys.readouterr().out
    assert migrate.main(["check", empty_database_url]) == 0
