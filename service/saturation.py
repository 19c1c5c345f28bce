"""What a scrape tells of how full the service is, and of its games.

Saturation: the worker pool (threads, busy, queued), the event loop's lag,
calls in flight (in :mod:`service.door`), the group commit's queue, every
connection pool of the store (``strata.store.connections`` by pool and
state, with OpenTelemetry's database attributes), open streams, and how far the
projection and the bot runner are behind the log. The process's CPU,
memory and descriptors come from Prometheus' own process collector
(:mod:`service.telemetry`).

Business: games by type and status and the open seats of unstarted games
(from the game list read model, counted at most every
:data:`CENSUS_SECONDS`), and the build and rules versions this process
runs (``strata_build_info``, ``strata_rules_info``: each 1, the versions in
their labels).
"""

from __future__ import annotations

import asyncio
import platform
import threading
import time
from collections.abc import Callable, Iterable
from concurrent import futures
from importlib import metadata
from typing import Any

from opentelemetry.metrics import Observation
from sqlalchemy import func, select

from domain import registry
from eventstore.base import EventStore
from eventstore.tables import game_list
from service import telemetry
from service.limits import Limits

#: How often the event loop's lag is measured (seconds).
LAG_INTERVAL = 0.25
#: How long a count of the games by type and status is shown again.
CENSUS_SECONDS = 15.0

Source = Callable[[], Iterable[Observation]]


class CountingPool(futures.ThreadPoolExecutor):
    """The worker pool, counting the tasks it runs now (``busy``) and those
    waiting for a thread (``queued``)."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "") -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self.size = max_workers
        self._busy = 0
        self._count = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        def counted() -> Any:
            with self._count:
                self._busy += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self._count:
                    self._busy -= 1

        return super().submit(counted)

    @property
    def busy(self) -> int:
        return self._busy

    @property
    def queued(self) -> int:
        return self._work_queue.qsize()


#: The lag watchers running (a task is kept only as long as it is referenced).
_WATCHERS: set[asyncio.Task[None]] = set()


def start_lag_watch() -> None:
    """Measure the running loop's lag until the loop ends (its tasks are
    cancelled when the server stops)."""
    task = asyncio.get_running_loop().create_task(watch_loop_lag(asyncio.Event()))
    _WATCHERS.add(task)
    task.add_done_callback(_WATCHERS.discard)


async def watch_loop_lag(stop: asyncio.Event) -> None:
    """Record how late the event loop wakes a task that sleeps
    :data:`LAG_INTERVAL` (``strata.event_loop.lag``, seconds): how long
    every callback on the loop waits behind the others."""
    lag = telemetry.meter().create_histogram(
        "strata.event_loop.lag",
        unit="s",
        description="How late the event loop woke a task due now (every 0.25 s)",
    )
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        due = loop.time() + LAG_INTERVAL
        await asyncio.sleep(LAG_INTERVAL)
        lag.record(max(loop.time() - due, 0.0))


class Census:
    """Games by type and status, and the open seats of unstarted games, from
    the game list read model (None: a store without read models)."""

    def __init__(self, store: EventStore) -> None:
        self.models = store.read_models()
        self._counted: tuple[float, list[Any]] | None = None
        self._lock = threading.Lock()

    def rows(self) -> list[Any]:
        if self.models is None:
            return []
        with self._lock:
            now = time.monotonic()
            if self._counted is None or now - self._counted[0] >= CENSUS_SECONDS:
                query = select(
                    game_list.c.game_type,
                    game_list.c.status,
                    func.count(),
                    func.sum(game_list.c.players - game_list.c.seats_taken),
                ).group_by(game_list.c.game_type, game_list.c.status)
                self._counted = (now, list(self.models.query(query)))
            return self._counted[1]

    def games(self) -> list[Observation]:
        return [
            Observation(int(count), {"game_type": kind, "status": status})
            for kind, status, count, _ in self.rows()
        ]

    def open_seats(self) -> list[Observation]:
        return [
            Observation(int(free or 0), {"game_type": kind})
            for kind, status, _, free in self.rows()
            if status == "open"
        ]


def _version() -> str:
    try:
        return metadata.version("strata")
    except metadata.PackageNotFoundError:  # pragma: no cover - a bare checkout
        return "unknown"


def build_info() -> list[Observation]:
    return [
        Observation(
            1,
            {
                "version": _version(),
                "python": platform.python_version(),
                "grpc": metadata.version("grpcio"),
            },
        )
    ]


def rules_info() -> list[Observation]:
    return [
        Observation(1, {"game_type": kind, "rules_version": version})
        for kind in registry.game_types()
        for version in registry.rules_versions(kind)
    ]


def gauges(
    store: EventStore,
    pool: CountingPool | None,
    limits: Limits | None,
    lags: dict[str, Callable[[], int]],
) -> list[tuple[str, Source]]:
    """Register the gauges of one server (or worker) and return them, by
    name (:meth:`telemetry.Gauges.forget` them when it stops). ``lags``:
    what follows the log (``projection``, ``bots``) and how many events it
    has left to read."""
    census = Census(store)

    def streams() -> list[Observation]:
        counts = limits.streams.by_method() if limits is not None else {}
        return [Observation(n, {"rpc.method": m.strip("/")}) for m, n in counts.items()]

    def lag(follower: str) -> Source:
        return lambda: [Observation(lags[follower]())]

    def connections() -> list[Observation]:
        out = []
        for usage in store.connection_pools():
            for state, count in (("used", usage.used), ("idle", usage.idle)):
                out.append(
                    Observation(
                        count,
                        {
                            "db.client.connection.pool.name": usage.name,
                            "db.client.connection.state": state,
                        },
                    )
                )
        return out

    def connections_max() -> list[Observation]:
        return [
            Observation(u.max, {"db.client.connection.pool.name": u.name})
            for u in store.connection_pools()
        ]

    def commit_queue() -> list[Observation]:
        queued = store.commit_queue()
        return [] if queued is None else [Observation(queued)]

    def workers(what: str) -> Source:
        def read() -> list[Observation]:
            if pool is None:
                return []
            return [Observation(getattr(pool, what))]

        return read

    sources: list[tuple[str, str, str, Source]] = [
        ("strata.streams.open", "Streams open now, by method", "1", streams),
        (
            "strata.store.connections",
            "Database connections the store holds, by pool and state (used, idle)",
            "1",
            connections,
        ),
        (
            "strata.store.connections.max",
            "The most connections each pool may hold",
            "1",
            connections_max,
        ),
        (
            "strata.store.commit.queue",
            "Appends waiting for the group commit now",
            "1",
            commit_queue,
        ),
        ("strata.worker_pool.size", "Threads of the worker pool", "1", workers("size")),
        (
            "strata.worker_pool.busy",
            "Worker threads running a call or a stream's step now",
            "1",
            workers("busy"),
        ),
        (
            "strata.worker_pool.queued",
            "Work waiting for a worker thread now",
            "1",
            workers("queued"),
        ),
        (
            "strata.games",
            "Games by type and status (open, active, finished), from the game list",
            "1",
            census.games,
        ),
        (
            "strata.seats.open",
            "Free seats of games not yet started, by game type",
            "1",
            census.open_seats,
        ),
        (
            "strata.build.info",
            "This process's build: its version, Python's and gRPC's (value 1)",
            "1",
            build_info,
        ),
        (
            "strata.rules.info",
            "Every game type and rules version this process runs (value 1)",
            "1",
            rules_info,
        ),
    ]
    descriptions = {
        "projection": "Events of the log the game list projection has not applied",
        "bots": "Events of the log the bot runner has not read yet",
    }
    for follower in lags:
        sources.append(
            (f"strata.{follower}.lag", descriptions[follower], "1", lag(follower))
        )
    for name, description, unit, source in sources:
        telemetry.GAUGES.watch(name, description, source, unit)
    return [(name, source) for name, _, _, source in sources]
