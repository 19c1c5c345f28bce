"""`strata serve` on a database it cannot use says so in one line and exits
non-zero — no traceback, no crash loop of half-started servers."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient
from eventstore import migrate
from eventstore.factory import open_store
from service.server import create_server
from tests.eventstore import raw_sql
from tests.extra_games import python_path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(database_url: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": python_path(ROOT, ROOT / "protos"),
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


def strata(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`strata …` as a process, with ``env`` over the environment."""
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", *args],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": python_path(ROOT, ROOT / "protos"),
            "STRATA_HTTP_PORT": "0",
            "STRATA_HOST": "127.0.0.1",
            **(env or {}),
        },
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_every_bad_variable_is_listed_in_one_line_with_exit_2(tmp_path: Path):
    result = strata(
        "serve",
        env={
            "STRATA_DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite3'}",
            "STRATA_PORT": "abc",
            "STRATA_HTTP_PORT": "99999",
            "STRATA_WORKERS": "0",
            "STRATA_RATE_PER_PEER": "-3",
            "STRATA_ACCESS_LOG": "loud",
            "STRATA_TLS_CERT": str(tmp_path / "missing.pem"),
        },
    )
    assert result.returncode == 2
    assert_refused_in_one_line(
        result,
        "STRATA_PORT='abc'",
        "STRATA_HTTP_PORT='99999'",
        "STRATA_WORKERS='0'",
        "STRATA_RATE_PER_PEER='-3'",
        "STRATA_ACCESS_LOG='loud'",
        "STRATA_TLS_CERT",
    )


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = strata(
            "serve",
            env={
                "STRATA_DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite3'}",
                "STRATA_PORT": str(port),
            },
        )
    assert result.returncode == 1
    assert_refused_in_one_line(result, "address in use", str(port))


@pytest.mark.postgres
def test_migrate_on_a_missing_database_says_how_to_create_it(postgres_server):
    url = postgres_server.url.set(database="strata_no_such_db").render_as_string(
        hide_password=False
    )
    result = strata("migrate", "--database-url", url)
    assert result.returncode == 1
    assert_refused_in_one_line(result, "does not exist", "CREATE DATABASE")


def test_a_closed_pipe_ends_the_output_quietly(tmp_path: Path) -> None:

    url = f"sqlite:///{tmp_path / 'pipe.sqlite3'}"
    migrate.upgrade(url)
    store = open_store(url)
    running = create_server(store, admin_token="a")
    try:
        target = f"127.0.0.1:{running.port}"
        with StrataClient(target, token="a") as admin:
            game_id = admin.create_game(
                "happy_little_dinosaurs", 4, bots={s: "random" for s in range(4)}
            ).game_id
            deadline = time.monotonic() + 60
            while admin.get_game(game_id).status != pb.GAME_STATUS_FINISHED:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        env = {**os.environ, "PYTHONPATH": python_path(ROOT, ROOT / "protos")}
        pipeline = subprocess.run(
            f"{sys.executable} -m clients.cli events {game_id} --target {target}"
            " | head -n 1",
            shell=True,
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert pipeline.stdout.count("\n") == 1
        assert pipeline.stderr == "", pipeline.stderr
    finally:
        running.stop(grace=0.5)
        store.close()
