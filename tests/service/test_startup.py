"""`strata serve` on a database it cannot use says so in one line and exits
non-zero — no traceback, no crash loop of half-started servers."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from eventstore import migrate
from tests.eventstore import raw_sql

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(database_url: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'protos'}",
        "STRATA_DATABASE_URL": database_url,
        "STRATA_PORT": str(free_port()),
        "STRATA_HTTP_PORT": "0",
        "STRATA_HOST": "127.0.0.1",
    }
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", "serve"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_refused_in_one_line(result: subprocess.CompletedProcess[str], *words: str):
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("strata: ")
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("state", "words"),
    [
        ("empty", ("no Strata schema", "migrate")),
        ("behind", ("behind", "0001", "migrate")),
        ("ahead", ("ahead", "9999_from_the_future")),
    ],
)
def test_serve_on_a_postgres_schema_it_cannot_use_explains_and_exits(
    postgres_server, state, words
):
    url = postgres_server.create_schema()
    if state == "behind":
        migrate.upgrade(url, "0001")
    if state == "ahead":
        migrate.upgrade(url)
        raw_sql.execute(
            url, "UPDATE alembic_version SET version_num = '9999_from_the_future'"
        )
    result = serve(url)
    assert_refused_in_one_line(result, *words)
    assert "password" not in result.stderr


def test_serve_on_an_unreachable_database_explains_and_exits():
    url = f"postgresql://strata:secret@127.0.0.1:{free_port()}/strata"
    result = serve(url)
    assert_refused_in_one_line(result, "cannot use the database", "127.0.0.1")
    assert "secret" not in result.stderr


def test_serve_on_a_sqlite_file_from_a_newer_strata_explains_and_exits(tmp_path):
    path = tmp_path / "strata.db"
    migrate.upgrade(f"sqlite:///{path}")
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999_new'")
    result = serve(f"sqlite:///{path}")
    assert_refused_in_one_line(result, "ahead", "9999_new")
