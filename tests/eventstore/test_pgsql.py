"""The PostgreSQL fast paths' SQL (eventstore/pgsql.py) matches the schema
of eventstore/tables.py: PostgreSQL plans each statement (EXPLAIN) on a
schema made from the tables' metadata, so a statement that names a table or
a column the schema lacks, or gives a column the wrong type, fails here."""

from __future__ import annotations

import re
from typing import Any

import psycopg
import pytest
from sqlalchemy import create_engine, text

from eventstore import pgsql, tables
from eventstore.urls import database_url
from tests.conftest import PostgresServer

pytestmark = pytest.mark.postgres

#: Sample parameters of each statement (psycopg's style).
PARAMETERS: dict[str, Any] = {
    "APPEND_BATCH": {"batch": "[]", "offset": 0},
    "CHECKPOINT": ("game_list",),
    "EVENTS_AFTER": (0, 10),
    "EVENT_ROWS": ("g", 1),
    "FIND_COMMAND": ("g", "c"),
    "IDS_AHEAD_OF_THE_LOG": (),
    "NOTIFY": ("strata_events", "1"),
    "READ_ALL": (0, 10),
    "READ_ALL_MATCHING": (["DieRolled"], ["g"], 0, 10),
    "READ_ONLY_NOW": (),
    "READ_STREAM": ("g", 1),
    "READ_STREAM_RANGE": ("g", 1, 5),
    "READ_STREAM_SETTLED": ("g", 1, 5),
    "SETTLED": (0, 10),
    "STREAM_VERSION": ("g",),
}
#: Not statements to plan: an expression and a setting.
NOT_PLANNED = {"SETTLED_BOUND", "NOT_DURABLE", "CLAIM_AND_NOTIFY"}


def statements() -> dict[str, str]:
    return {
        name: value
        for name, value in vars(pgsql).items()
        if re.fullmatch(r"[A-Z][A-Z_]+", name) and isinstance(value, str)
    }


def test_every_statement_has_sample_parameters() -> None:
    assert set(statements()) - NOT_PLANNED == set(PARAMETERS)


@pytest.fixture
def schema_url(postgres_server: PostgresServer) -> str:
    """A schema made from eventstore/tables.py's metadata alone."""
    url = postgres_server.create_schema()
    engine = create_engine(url)
    tables.metadata.create_all(engine)
    engine.dispose()
    return url


def _conninfo(url: str) -> str:
    parsed = database_url(url)
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_the_statement_plans_on_the_tables_schema(schema_url: str, name: str) -> None:
    statement = statements()[name]
    with psycopg.connect(_conninfo(schema_url)) as connection:
        # The schema made from the tables, not another one of the database.
        (path,) = connection.execute("SHOW search_path").fetchone() or ("",)
        assert path.startswith("empty_"), path
        connection.execute(f"EXPLAIN {statement}", PARAMETERS[name])


def test_the_positions_claim_plans_on_the_tables_schema(schema_url: str) -> None:
    engine = create_engine(schema_url)
    with engine.connect() as connection:
        connection.execute(
            text(f"EXPLAIN {pgsql.CLAIM_AND_NOTIFY}"),
            {"count": 1, "channel": "strata_events"},
        )
        connection.execute(text(f"SELECT {pgsql.SETTLED_BOUND}"))
    engine.dispose()


def test_a_projection_batch_plans_for_every_read_model_table(schema_url: str) -> None:
    batch = {"name": "game_list", "from": 0, "to": 1, "rows": "[]"}
    with psycopg.connect(_conninfo(schema_url)) as connection:
        for table in (tables.game_list,):
            connection.execute(f"EXPLAIN {pgsql.apply_rows(table)}", batch)


def test_a_statement_naming_a_missing_column_fails_here(schema_url: str) -> None:
    wrong = pgsql.STREAM_VERSION.replace("version", "verzion")
    with (
        psycopg.connect(_conninfo(schema_url)) as connection,
        pytest.raises(psycopg.errors.UndefinedColumn),
    ):
        connection.execute(f"EXPLAIN {wrong}", ("g",))
