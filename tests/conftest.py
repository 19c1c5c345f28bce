"""Fixtures of the event store tests: every store test runs on both database
backends (the store contract also on the in-memory store: see
``tests/eventstore/conftest.py``).

SQLite runs on a fresh file per test (copied from a file migrated once per
session). PostgreSQL runs on a database created for the session (and
dropped at its end), emptied before each test; migration tests get a fresh
schema in it. The server is found at
``STRATA_TEST_DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``;
only its server and credentials are used). When it cannot be reached the
PostgreSQL tests fail if ``CI`` is set, and are skipped loudly otherwise.
"""

from __future__ import annotations

# The extra games of STRATA_EXTRA_GAMES (tests/extra_games.py) compile into
# the protos' code before anything below imports it.
from tests import extra_games

extra_games.install()

import asyncio
import os
import shutil
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, pool, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import OperationalError

from eventstore import migrate
from eventstore.base import EventStore
from eventstore.factory import open_store
from eventstore.urls import database_url
from service.server import configure_logging
from tests.eventstore import raw_sql

configure_logging("warning")


@pytest.fixture(autouse=True)
def _no_event_loop_left_running(request: pytest.FixtureRequest) -> Iterator[None]:
    """Playwright's sync API (the browser tests' session-wide ``browser``)
    leaves its event loop marked as running in the worker's thread for the
    rest of the session: a later test on that worker that runs a loop of its
    own (``asyncio.run``) was refused ("cannot be called from a running
    event loop"), depending only on which worker it landed on. The mark is
    cleared for each test that does not use the browser, and put back."""
    running = asyncio.events._get_running_loop()
    if running is None or "browser" in request.fixturenames:
        yield
        return
    asyncio.events._set_running_loop(None)
    try:
        yield
    finally:
        asyncio.events._set_running_loop(running)


DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"

_postgres_skipped: list[str] = []


class PostgresUnavailableWarning(UserWarning):
    """The PostgreSQL tests were skipped: no server to run them on."""


class PostgresServer:
    """The test server: one throwaway database for the session, and
    throwaway schemas in it for tests that need an empty database."""

    def __init__(self, admin: Engine, url: URL) -> None:
        self._admin = admin
        self.database = f"strata_test_{uuid.uuid4().hex[:12]}"
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{self.database}"'))
        self.url = url.set(database=self.database)

    def create_schema(self) -> str:
        """The URL of a new empty schema (its own ``search_path``): as good
        as an empty database to the store, and much cheaper to make."""
        name = f"empty_{uuid.uuid4().hex[:12]}"
        raw_sql.execute(
            self.url.render_as_string(hide_password=False), f'CREATE SCHEMA "{name}"'
        )
        url = self.url.update_query_dict({"options": f"-csearch_path={name}"})
        return url.render_as_string(hide_password=False)

    def drop(self) -> None:
        """Drop the session's database, schemas and all."""
        with self._admin.connect() as connection:
            connection.execute(
                text(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    url = database_url(os.environ.get("STRATA_TEST_DATABASE_URL", DEFAULT_POSTGRES_URL))
    admin = create_engine(
        url.set(database="postgres"),
        isolation_level="AUTOCOMMIT",
        poolclass=pool.NullPool,
        connect_args={"connect_timeout": 5},
    )
    try:
        with admin.connect():
            pass
    except OperationalError as error:
        reason = (
            f"PostgreSQL at {url.render_as_string(hide_password=True)} is "
            f"unreachable ({str(error.orig).strip().splitlines()[0]})"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so the PostgreSQL tests must run")
        _postgres_skipped.append(reason)
        warnings.warn(PostgresUnavailableWarning(reason), stacklevel=1)
        pytest.skip(reason)
    server = PostgresServer(admin, url)
    yield server
    server.drop()
    admin.dispose()


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """A migrated database shared by the session's PostgreSQL store tests."""
    url = postgres_server.url.render_as_string(hide_password=False)
    migrate.upgrade(url)
    return url


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file that each test copies (migrating takes longer)."""
    path = tmp_path_factory.mktemp("template") / "strata.db"
    migrate.upgrade(f"sqlite:///{path}")
    return path


def _empty_postgres(url: str) -> None:
    raw_sql.execute(
        url,
        "TRUNCATE events, commands, snapshots, projection_checkpoints, game_list "
        "RESTART IDENTITY",
    )
    raw_sql.execute(url, "UPDATE counters SET value = 0")


@pytest.fixture
def postgres_store_url(postgres_url: str) -> str:
    """The session's PostgreSQL database, emptied for this test."""
    _empty_postgres(postgres_url)
    return postgres_url


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def empty_store_url(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> str:
    """The URL of an empty, migrated store on ``backend`` (sqlite or postgres)."""
    if backend == "sqlite":
        path = tmp_path / "strata.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url: str = request.getfixturevalue("postgres_store_url")
    return url


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty, migrated store, for each backend."""
    return empty_store_url(request.param, request, tmp_path)


@pytest.fixture
def open_stores(store_url: str) -> Iterator[Callable[[], EventStore]]:
    """Opens more stores on the same database (other connections, other
    listeners); closes them after the test."""
    opened: list[EventStore] = []

    def open_another() -> EventStore:
        store = open_store(store_url)
        opened.append(store)
        return store

    yield open_another
    for store in opened:
        store.close()


@pytest.fixture
def store(open_stores: Callable[[], EventStore]) -> EventStore:
    """An empty store, for each backend."""
    return open_stores()


@pytest.fixture(params=BACKENDS)
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a database without any schema, for each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'empty.db'}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.create_schema()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say loudly that the PostgreSQL half of the suite did not run."""
    if _postgres_skipped:
        terminalreporter.section("PostgreSQL tests SKIPPED", sep="!", red=True)
        terminalreporter.write_line(
            f"{_postgres_skipped[0]}.\nThe event store was tested on SQLite only. "
            "Start PostgreSQL or set STRATA_TEST_DATABASE_URL; set CI=1 to make "
            "this a failure.",
            red=True,
        )
