"""What only the SQLite store promises: WAL, several processes on one file,
an in-memory store."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from eventstore import migrate
from eventstore.base import NewEvent, StoreUnavailable
from eventstore.sqlite import SQLiteEventStore

REPOSITORY = Path(__file__).resolve().parents[2]

# A writer in another process: appends ``count`` single events to ``games``,
# retrying on conflicts like the service does.
WRITER = textwrap.dedent(
    """
    import sys
    from eventstore.base import ConcurrencyError, NewEvent
    from eventstore.sqlite import SQLiteEventStore

    url, count, games = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    store = SQLiteEventStore(url)
    for n in range(count):
        game = games[n % len(games)]
        while True:
            try:
                store.append(game, store.stream_version(game), [NewEvent("E", {})])
                break
            except ConcurrencyError:
                pass
    store.close()
    """
)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'strata.db'}"
    migrate.upgrade(url)
    return url


def _run_writers(url: str, processes: int, count: int, games: list[str]) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, str(count), *games], cwd=REPOSITORY
        )
        for _ in range(processes)
    ]
    assert [writer.wait(timeout=60) for writer in writers] == [0] * processes


def test_the_file_uses_write_ahead_logging(sqlite_url: str, tmp_path: Path) -> None:
    store = SQLiteEventStore(sqlite_url)
    store.append("game", 0, [NewEvent("Created", {})])
    store.close()

    connection = sqlite3.connect(tmp_path / "strata.db")
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        connection.close()


def test_writers_in_several_processes_share_one_file(sqlite_url: str) -> None:
    _run_writers(sqlite_url, processes=3, count=10, games=["a", "b"])

    store = SQLiteEventStore(sqlite_url)
    try:
        log = store.read_all()
        assert [e.position for e in log] == list(range(1, 31))
        assert [e.version for e in store.read_stream("a")] == list(range(1, 16))
        assert [e.version for e in store.read_stream("b")] == list(range(1, 16))
    finally:
        store.close()


def test_an_append_by_another_process_wakes_a_waiter(sqlite_url: str) -> None:
    store = SQLiteEventStore(sqlite_url, poll_interval=0.05)
    woken: list[bool] = []
    waiter = threading.Thread(target=lambda: woken.append(store.wait_for_append(0, 30)))
    waiter.start()
    try:
        _run_writers(sqlite_url, processes=1, count=1, games=["game"])
        waiter.join(timeout=5)
        assert woken == [True]
    finally:
        store.close()


def test_an_in_memory_store_needs_no_migration_and_serves_threads() -> None:
    store = SQLiteEventStore("sqlite://")
    try:
        threads = [
            threading.Thread(
                target=store.append, args=(f"game-{i}", 0, [NewEvent("Created", {})])
            )
            for i in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [e.position for e in store.read_all()] == list(range(1, 9))
        start = time.monotonic()
        assert store.wait_for_append(7, timeout=5)
        assert time.monotonic() - start < 1
    finally:
        store.close()


def test_a_file_that_cannot_be_opened_makes_the_store_unavailable(
    tmp_path: Path,
) -> None:
    store = SQLiteEventStore(f"sqlite:///{tmp_path / 'missing' / 'strata.db'}")
    try:
        with pytest.raises(StoreUnavailable):
            store.last_position()
    finally:
        store.close()


def test_upgrade_creates_the_directory_of_the_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'data' / 'strata.db'}"

    migrate.upgrade(url)

    assert migrate.check(url).ok


def test_check_does_not_create_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "strata.db"

    assert migrate.check(f"sqlite:///{path}").state is migrate.SchemaState.EMPTY
    assert not path.exists()
