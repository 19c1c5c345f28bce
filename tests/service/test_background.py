"""Background work in its own process: a replica that serves with
STRATA_BACKGROUND=none, and `strata worker` keeping the game list and
playing the bot seats for it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient
from eventstore import migrate
from eventstore.factory import open_store
from service.config import BACKGROUND_WORK, Config, parse_background
from service.server import create_server
from tests.extra_games import python_path

ROOT = Path(__file__).resolve().parents[2]


def test_strata_background_names_the_work_a_replica_runs():
    assert parse_background(None) == parse_background("") == BACKGROUND_WORK
    assert parse_background("none") == ()
    assert parse_background(" Bots ") == ("bots",)
    assert parse_background("bots,projections") == ("projections", "bots")
    with pytest.raises(ValueError, match="unknown projector"):
        parse_background("projector")
    assert Config.from_env({"STRATA_BACKGROUND": "none"}).background == ()


def test_a_replica_without_background_work_relies_on_a_worker(tmp_path):
    url = f"sqlite:///{tmp_path / 'roles.sqlite3'}"
    migrate.upgrade(url)
    store = open_store(url)
    running = create_server(store, admin_token="admin", background=())
    env = {
        **os.environ,
        "PYTHONPATH": python_path(ROOT, ROOT / "protos"),
        "STRATA_DATABASE_URL": url,
        "STRATA_LOG_LEVEL": "warning",
    }
    worker = None
    try:
        with StrataClient(f"127.0.0.1:{running.port}", timeout=10) as client:
            bots_only = (
                client.with_token("admin")
                .create_game(
                    "dinosaurs_extinct",
                    2,
                    seed="roles",
                    bots={0: "random", 1: "random"},
                )
                .game_id
            )
            time.sleep(0.5)
            # Nobody plays the bot seats, nobody keeps the game list.
            assert client.get_game(bots_only).status == pb.GAME_STATUS_ACTIVE
            assert not client.list_games().games

            worker = subprocess.Popen(
                [sys.executable, "-m", "clients.cli", "worker"], env=env, cwd=ROOT
            )
            deadline = time.monotonic() + 60
            while client.get_game(bots_only).status != pb.GAME_STATUS_FINISHED:
                assert time.monotonic() < deadline, "the worker did not play"
                time.sleep(0.1)
            other = (
                client.with_token("admin")
                .create_game("dinosaurs_extinct", 3, seed="listed")
                .game_id
            )

            # ListGames waits for the worker's projection to reach its writes.
            listed = {g.game_id: g for g in client.list_games().games}
            assert set(listed) == {bots_only, other}
            assert listed[bots_only].status == pb.GAME_STATUS_FINISHED
            assert listed[other].status == pb.GAME_STATUS_OPEN

        worker.send_signal(signal.SIGTERM)
        assert worker.wait(20) == 0
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
        running.stop(grace=0.2)
        store.close()


def test_a_stopping_server_wakes_what_waits_for_an_append(tmp_path):
    # The background threads (projection, bots, timekeeper) wait on the
    # store for the next append; a stop wakes their waits, so they see the
    # stop at once, not at the end of their wait. A wait of a minute here
    # stands for theirs: the stop ends it.
    url = f"sqlite:///{tmp_path / 'stopping.sqlite3'}"
    migrate.upgrade(url)
    store = open_store(url)
    running = create_server(store, admin_token="admin")
    woken: list[bool] = []
    waiting = threading.Event()

    def wait() -> None:
        waiting.set()
        woken.append(store.wait_for_append(store.last_position(), 60))

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    waiting.wait(10)
    time.sleep(0.2)  # the waiter is inside its wait
    try:
        running.stop(grace=5)
        waiter.join(10)
        assert woken == [False]  # woken with nothing appended, long before 60 s
        assert not [t.name for t in running.background if t.is_alive()]
    finally:
        store.close()
