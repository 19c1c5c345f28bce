"""The timekeeper's lateness with thousands of timed games in play.

``games`` two-seat games with a time control are in play in the bench's
PostgreSQL database, each seat's decision an hour from its deadline: idle
games, which cost the sweep that came before a read each, twice a second.
``expiring`` more are in play with a deadline of ``DECISION_SECONDS`` a
decision, their current decisions an hour away too. The timekeeper
(:class:`service.clocks.Timekeeper`, on its own thread as ``strata serve``
runs it) follows them all; once it has, a player moves in each expiring
game in turn, spread over ``window`` seconds, and then goes silent: the
seat to act next has ``DECISION_SECONDS`` from that move, and the figure is
how late each of those timeouts was appended (the timeout command's
recorded time minus the deadline, the move's recorded time plus the
decision's seconds, both as the store recorded them): p50, p99, the worst.

The games are played up to their start in memory and imported with their
events' times set so that the first decision's deadline falls where it
should (the times events were recorded at are the clocks' input, as in the
service).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.db import Database
from bench.store import percentile
from eventstore.base import CommandRecord, RecordedEvent
from eventstore.memory import InMemoryEventStore
from eventstore.postgres import PostgresEventStore
from service.application import GameApp
from service.callers import Caller
from service.clocks import TimeControl, Timekeeper

GAME = "dinosaurs_extinct"
ADMIN = "bench-admin"
#: The decision of an idle game, and how far away every first deadline is.
IDLE = timedelta(hours=1)
#: The decision of an expiring game, after the move that starts it.
DECISION_SECONDS = 2
#: Connections the games are imported on at once (the setup, not measured).
IMPORTERS = 8


def lateness(
    database: Database, games: int, expiring: int, window: float
) -> dict[str, Any]:
    """The figures of one run (see the module's docstring)."""
    store = PostgresEventStore(database.url)
    app = GameApp(store, admin_token=ADMIN)
    maker = _Maker()
    keeper = Timekeeper(app)
    stop = threading.Event()
    thread = threading.Thread(
        target=keeper.run_forever, args=(stop,), name="timekeeper", daemon=True
    )
    try:
        thread.start()
        started = time.monotonic()
        maker.import_all(store, games, int(IDLE.total_seconds()))
        moving = maker.import_all(store, expiring, DECISION_SECONDS)
        _wait_until(lambda: keeper.tracked >= games + expiring)
        caught_up = time.monotonic() - started
        moved = _move_each(app, moving, window)
        late_ms = _timeouts(store, moved, time.monotonic() + window + 60)
    finally:
        stop.set()
        thread.join(timeout=10)
        store.close()
    measured = sorted(late_ms)
    return {
        "timed_games_in_play": games + expiring,
        "expiring": expiring,
        "window_seconds": window,
        "timeouts_per_second": round(expiring / window, 1),
        "decision_seconds": DECISION_SECONDS,
        "setup_and_catch_up_seconds": round(caught_up, 1),
        "acted": len(measured),
        "missed": expiring - len(measured),
        "lateness_p50_ms": round(percentile(measured, 0.5), 1) if measured else None,
        "lateness_p99_ms": round(percentile(measured, 0.99), 1) if measured else None,
        "lateness_max_ms": round(measured[-1], 1) if measured else None,
        "later_than_250_ms": sum(1 for m in measured if m > 250),
    }


def _move_each(app: GameApp, game_ids: list[str], window: float) -> dict[str, int]:
    """One move in each game, spread over ``window`` seconds (the first
    seat to act plays its first legal command); the version each move
    ended at, by game."""
    admin = app.caller(ADMIN)
    step = window / max(len(game_ids), 1)
    start = time.monotonic()
    moved: dict[str, int] = {}
    for n, game_id in enumerate(game_ids):
        time.sleep(max(start + n * step - time.monotonic(), 0.0))
        loaded = app.load(game_id)
        seat = min(loaded.session.active_seats(loaded.state))
        _, actions = app.legal_actions(admin, game_id, seat)
        moved[game_id] = app.submit(
            admin, game_id, seat, f"bench-move-{n}", actions[0][1]
        ).version
    return moved


def _timeouts(
    store: PostgresEventStore, moved: dict[str, int], until: float
) -> list[float]:
    """How late (ms) the timeout after each game's move was appended,
    waiting for them until ``until`` (monotonic)."""
    late: dict[str, float] = {}
    decision = timedelta(seconds=DECISION_SECONDS)
    while len(late) < len(moved) and time.monotonic() < until:
        for game_id, version in moved.items():
            if game_id in late:
                continue
            timeouts = [
                c
                for c in store.read_commands(game_id)
                if c.command_id.startswith("timeout-seat-")
                and c.decided_at_version >= version
            ]
            if timeouts:
                began = store.read_stream(game_id, version, version)[0].recorded_at
                late[game_id] = (
                    _aware(timeouts[0].recorded_at) - (_aware(began) + decision)
                ).total_seconds() * 1000
        time.sleep(0.2)
    return list(late.values())


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _wait_until(done: Callable[[], bool], limit: float = 900.0) -> None:
    until = time.monotonic() + limit
    while not done() and time.monotonic() < until:
        time.sleep(0.05)


class _Maker:
    """Plays timed games up to their start in memory, then imports them
    into a store with their events' times moved so that the first decision
    ends an hour from now."""

    def __init__(self) -> None:
        self.app = GameApp(InMemoryEventStore())
        self.admin = Caller(admin=True, token=ADMIN)
        self.made = 0

    def import_all(
        self, store: PostgresEventStore, count: int, decision_seconds: int
    ) -> list[str]:
        """``count`` games of ``decision_seconds`` a decision, imported on a
        few connections at once; their ids."""
        made = [self._make(decision_seconds) for _ in range(count)]
        with ThreadPoolExecutor(IMPORTERS) as pool:
            list(pool.map(lambda game: store.import_game(*game), made))
        return [game_id for game_id, _, _ in made]

    def _make(
        self, decision_seconds: int
    ) -> tuple[str, list[RecordedEvent], list[CommandRecord]]:
        self.made += 1
        game_id, _, _ = self.app.create_game(
            self.admin,
            GAME,
            2,
            seed=f"clocks-{self.made}",
            time_control=TimeControl(decision_seconds=decision_seconds),
        )
        for seat in range(2):
            self.app.join_game(self.admin, game_id, seat, f"p{seat}")
        self.app.start_game(self.admin, game_id)
        # Every event at once: the first decision began with the last one,
        # and ends an hour from now.
        began = datetime.now(UTC) + IDLE - timedelta(seconds=decision_seconds)
        events = [
            dataclasses.replace(e, recorded_at=began)
            for e in self.app.store.read_stream(game_id)
        ]
        return game_id, events, self.app.store.read_commands(game_id)
