"""The timekeeper's lateness with thousands of timed games in play.

``games`` two-seat games with a time control are in play in the bench's
PostgreSQL database, every seat's decision an hour from its deadline: idle
games, which cost a sweeping timekeeper a read each, twice a second. The
timekeeper (:class:`service.clocks.Timekeeper`, on its own thread as
``strata serve`` runs it) follows them; then ``expiring`` more games come
into play, their deadlines spread over ``window`` seconds once all are in
play, and the figure is how late each one's timeout was appended (the
timeout command's recorded time minus the deadline): p50, p99 and the
worst.

The games are played up to their start in memory and imported with their
events' times set so that the deadline falls where it should (the times an
event was recorded at are the clock's input, as in the service).
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
#: Connections the games are imported on at once (the setup, not measured).
IMPORTERS = 8
#: Each decision's time: an hour, so a game not given a near deadline idles.
DECISION = timedelta(hours=1)
#: How long after the last game came into play the first deadline falls,
#: at least.
LEAD = timedelta(seconds=1)


def lateness(
    database: Database, games: int, expiring: int, window: float
) -> dict[str, Any]:
    """The figures of one run (see the module's docstring)."""
    store = PostgresEventStore(database.url)
    app = GameApp(store)
    maker = _Maker()
    keeper = Timekeeper(app)
    stop = threading.Event()
    thread = threading.Thread(
        target=keeper.run_forever, args=(stop,), name="timekeeper", daemon=True
    )
    try:
        # The keeper follows the games as they come into play, idle ones
        # first (their deadlines an hour away).
        thread.start()
        started = time.monotonic()
        maker.import_all(store, [datetime.now(UTC) + DECISION] * games)
        _wait_until(lambda: keeper.tracked >= games)
        per_game = (time.monotonic() - started) / max(games, 1)
        # Then the expiring ones, all in play before the first deadline
        # (twice the time the idle ones took each, to be safe), which the
        # window spreads.
        first = datetime.now(UTC) + LEAD + 2 * expiring * timedelta(seconds=per_game)
        step = timedelta(seconds=window / max(expiring, 1))
        deadlines = [first + n * step for n in range(expiring)]
        due = dict(zip(maker.import_all(store, deadlines), deadlines, strict=True))
        _wait_until(lambda: keeper.tracked >= games + expiring)
        ready_before_first = (first - datetime.now(UTC)).total_seconds()
        late_ms = _timeouts(store, due, time.monotonic() + window + 30)
    finally:
        stop.set()
        thread.join(timeout=10)
        store.close()
    measured = sorted(late_ms.values())
    return {
        "timed_games_in_play": games + expiring,
        "expiring": expiring,
        "window_seconds": window,
        "timeouts_per_second": round(expiring / window, 1),
        "setup_seconds_per_game": round(per_game, 4),
        # Negative: the keeper knew of the last game only after the first
        # deadline (the figure then counts the setup's lateness too).
        "ready_seconds_before_first_deadline": round(ready_before_first, 3),
        "acted": len(measured),
        "missed": expiring - len(measured),
        "lateness_p50_ms": round(percentile(measured, 0.5), 1) if measured else None,
        "lateness_p99_ms": round(percentile(measured, 0.99), 1) if measured else None,
        "lateness_max_ms": round(measured[-1], 1) if measured else None,
    }


def _wait_until(done: Callable[[], bool], limit: float = 600.0) -> None:
    until = time.monotonic() + limit
    while not done() and time.monotonic() < until:
        time.sleep(0.05)


def _timeouts(
    store: PostgresEventStore, due: dict[str, datetime], until: float
) -> dict[str, float]:
    """How late (ms) each game's first timeout was appended, waiting for
    them until ``until`` (monotonic)."""
    late: dict[str, float] = {}
    while len(late) < len(due) and time.monotonic() < until:
        for game_id, deadline in due.items():
            if game_id in late:
                continue
            timeouts = [
                c
                for c in store.read_commands(game_id)
                if c.command_id.startswith("timeout-seat-")
            ]
            if timeouts:
                at = timeouts[0].recorded_at
                at = at if at.tzinfo else at.replace(tzinfo=UTC)
                late[game_id] = (at - deadline).total_seconds() * 1000
        time.sleep(0.2)
    return late


class _Maker:
    """Plays timed games up to their start in memory, then imports each
    into a store with its events' times moved so that the seat to act has
    its deadline at the instant asked for."""

    def __init__(self) -> None:
        self.app = GameApp(InMemoryEventStore())
        self.admin = Caller(admin=True, token="bench-admin")
        self.made = 0

    def import_all(
        self, store: PostgresEventStore, deadlines: list[datetime]
    ) -> list[str]:
        """Games whose seat to act has each of ``deadlines``, imported on a
        few connections at once; their ids."""
        made = [self._make(deadline) for deadline in deadlines]
        with ThreadPoolExecutor(IMPORTERS) as pool:
            list(pool.map(lambda game: store.import_game(*game), made))
        return [game_id for game_id, _, _ in made]

    def _make(
        self, deadline: datetime
    ) -> tuple[str, list[RecordedEvent], list[CommandRecord]]:
        self.made += 1
        game_id, _, _ = self.app.create_game(
            self.admin,
            GAME,
            2,
            seed=f"clocks-{self.made}",
            time_control=TimeControl(decision_seconds=int(DECISION.total_seconds())),
        )
        for seat in range(2):
            self.app.join_game(self.admin, game_id, seat, f"p{seat}")
        self.app.start_game(self.admin, game_id)
        # Every event at once: the first decision began with the last one.
        began = deadline - DECISION
        events = [
            dataclasses.replace(e, recorded_at=began)
            for e in self.app.store.read_stream(game_id)
        ]
        return game_id, events, self.app.store.read_commands(game_id)
