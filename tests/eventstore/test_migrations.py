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
from tests.conftest import PostgresServer
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
        appended = store.append("game", 0, [NewEvent("Created", {})])
        assert [e.position for e in store.read_all()] == [appended.last_position]
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


def test_revision_0005_gives_the_listed_games_their_creation_positions(
    empty_database_url: str,
) -> None:
    """A game list written at revision 0004 gets each game's first event's
    position; a row whose game has no first event in the log (none should)
    gets 0, so it is still listed. Going back to 0004 and up again works."""
    url = empty_database_url
    migrate.upgrade(url, "0004")
    log = [("b-game", 1, 10), ("a-game", 1, 11), ("b-game", 2, 12), ("a-game", 2, 13)]
    for game_id, version, position in log:
        raw_sql.execute(
            url,
            "INSERT INTO events (game_id, version, position, type, schema_version,"
            " data, recorded_at)"
            " VALUES (:g, :v, :p, 'Old', 1, '{}', CURRENT_TIMESTAMP)",
            g=game_id,
            v=version,
            p=position,
        )
    for game_id in ("a-game", "b-game", "lost-game"):
        raw_sql.execute(
            url,
            "INSERT INTO game_list (game_id, game_type, status, players,"
            " seats_taken, version, winners, result, characters, created_at)"
            " VALUES (:g, 'cubosaurs', 'open', 2, 0, 2, '[]', '', '{}',"
            " CURRENT_TIMESTAMP)",
            g=game_id,
        )

    migrate.upgrade(url)

    def created(game_id: str) -> object:
        return raw_sql.execute(
            url, "SELECT created_position FROM game_list WHERE game_id = :g", g=game_id
        )

    assert [created(g) for g in ("a-game", "b-game", "lost-game")] == [11, 10, 0]
    migrate.downgrade(url, "0004")
    migrate.upgrade(url)
    assert created("a-game") == 11


@pytest.mark.postgres
def test_positions_handed_out_before_revision_0003_stay_resume_points(
    postgres_server: PostgresServer,
) -> None:
    """A database written by the counter (revision 0002) keeps its
    positions; every position after the upgrade is above them, so a
    follower resuming from any old position gets the rest of the old log,
    then the new events, and nothing twice."""
    url = postgres_server.create_schema()
    migrate.upgrade(url, "0002")
    for position, game in enumerate(["old-a", "old-a", "old-b"], 1):
        version = 1 if position != 2 else 2
        raw_sql.execute(
            url,
            "INSERT INTO events (game_id, version, position, type, schema_version,"
            " data, recorded_at) VALUES (:g, :v, :p, 'Old', 1, '{}', now())",
            g=game,
            v=version,
            p=position,
        )
    raw_sql.execute(url, "UPDATE counters SET value = 3 WHERE name = 'position'")

    migrate.upgrade(url)

    assert (
        raw_sql.execute(url, "SELECT count(*) FROM counters WHERE name = 'position'")
        == 0
    )
    store = open_store(url)
    try:
        new = store.append("new-c", 0, [NewEvent("New", {})] * 2)
        store.append("old-b", 1, [NewEvent("New", {})])
        log = store.read_all()
        assert [e.position for e in log[:3]] == [1, 2, 3]
        assert log[4].position == new.last_position > 3
        assert store.read_all(2) == log[2:]
        assert store.read_all(3) == log[3:]
        assert [(e.game_id, e.version) for e in store.read_all(1)] == [
            ("old-a", 2),
            ("old-b", 1),
            ("new-c", 1),
            ("new-c", 2),
            ("old-b", 2),
        ]
    finally:
        store.close()
    migrate.downgrade(url, "0002")
    counter = raw_sql.execute(url, "SELECT value FROM counters WHERE name = 'position'")
    assert counter == log[-1].position, "the old code would go on after every position"
