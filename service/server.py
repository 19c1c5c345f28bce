"""Building and running the gRPC server: the composition root.

``create_server`` wires store, application, servicers, the door, health
checking and reflection, and binds a port (0 picks a free one, for tests).
``serve`` runs it until SIGTERM or SIGINT, then shuts down gracefully.
``serve_processes`` runs several such servers, each a process of its own
with its own store and group committer, on one port (``SO_REUSEPORT``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Sequence
from concurrent import futures
from dataclasses import dataclass
from types import FrameType
from typing import Any

import grpc
import structlog
from grpc_health.v1 import health, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry.metrics import Observation
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb
from strata.v1 import integration_service_pb2 as integration_pb

from domain import registry
from eventstore.base import EventStore
from service import connect_transport, grpc_transport, http, telemetry
from service.admin import AdminServicer, IntegrationServicer
from service.administration import Integration
from service.application import GameApp
from service.bots import BotRunner
from service.clocks import Timekeeper
from service.config import BACKGROUND_WORK, Config
from service.door import Door
from service.health import HealthWatch
from service.housekeeping import Housekeeper
from service.http import HttpListener
from service.limits import Limits, LimitSettings
from service.projections import GameList, GameListProjection, GameListReader
from service.servicer import GameServicer
from service.tls import TlsFiles

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["GameService"].full_name
ADMIN_SERVICE_NAME = admin_pb.DESCRIPTOR.services_by_name["AdminService"].full_name
INTEGRATION_SERVICE_NAME = integration_pb.DESCRIPTOR.services_by_name[
    "IntegrationService"
].full_name
MAX_MESSAGE_BYTES = 1 << 20


def configure_logging(level: str = "info") -> None:
    """Every log line JSON on stderr (see :mod:`service.telemetry`)."""
    telemetry.configure_logging(level)


@dataclass
class Running:
    """A started server with the port it listens on.

    The server is a ``grpc.aio`` server on an event loop of its own thread;
    synchronous handlers run in ``pool`` (the loop's default executor too).
    """

    server: grpc.aio.Server
    port: int
    app: GameApp
    health: HealthWatch
    loop: asyncio.AbstractEventLoop
    loop_thread: threading.Thread
    pool: futures.ThreadPoolExecutor
    projection: GameList | None = None
    limits: Limits | None = None
    #: The HTTP listener (Connect, gRPC-Web, the web table), if any.
    http: HttpListener | None = None
    background: list[threading.Thread] = dataclasses.field(default_factory=list)
    gauges: list[tuple[str, Any]] = dataclasses.field(default_factory=list)
    stopping: threading.Event = dataclasses.field(default_factory=threading.Event)

    @property
    def http_port(self) -> int:
        """The HTTP listener's port (0 when there is none)."""
        return 0 if self.http is None else self.http.port

    def stop(self, grace: float = 5.0) -> None:
        """Refuse new calls, let running ones finish within ``grace``."""
        self.stopping.set()

        async def stop() -> None:
            # NOT_SERVING first: load balancers stop sending new calls while
            # the ones running finish (within ``grace``).
            await self.health.stop()
            if self.http is not None:
                self.http.server.config.timeout_graceful_shutdown = int(grace) or 1
                await self.http.stop()
            await self.server.stop(grace)
            # What is still running past the grace (a stream's reader, say)
            # ends here, not when the loop is torn down under it.
            left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in left:
                task.cancel()
            if left:
                await asyncio.wait(left, timeout=5)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(grace + 30)
        _end_loop(self.loop, self.loop_thread)
        self.pool.shutdown(wait=False, cancel_futures=True)
        for thread in self.background:
            thread.join(timeout=5)
        for name, source in self.gauges:
            telemetry.GAUGES.forget(name, source)


def create_server(
    store: EventStore,
    admin_token: str = "",
    port: int = 0,
    host: str = "127.0.0.1",
    workers: int = 32,
    integration_tokens: tuple[str, ...] = (),
    limits: LimitSettings | None = None,
    background: Collection[str] = BACKGROUND_WORK,
    http_port: int | None = None,
    cors_origins: Sequence[str] = (),
    access_log: str = "all",
    tls: TlsFiles | None = None,
    reuse_port: bool = False,
) -> Running:
    """A started server on ``host:port`` (port 0: a free one), running the
    ``background`` work too (see :data:`service.config.BACKGROUND_WORK`).
    ``reuse_port``: both listeners share their ports with other processes
    that bind them so (``SO_REUSEPORT``; otherwise a port in use is an
    error)."""
    registry.game_types()  # every game's rules imported now, not by a first call
    limits = limits or LimitSettings()
    app = GameApp(
        store,
        admin_token=admin_token,
        max_refusals=limits.max_refusals_per_game,
        max_open_seats=limits.max_open_seats,
        max_timed_games=limits.max_timed_games,
    )
    projection: GameList | None = None
    if store.read_models() is not None:
        projection = (
            GameListProjection(store)
            if "projections" in background
            else GameListReader(store)
        )
        app.queries.game_list = projection
    pool = futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rpc")
    loop = asyncio.new_event_loop()
    loop.set_default_executor(pool)
    loop_thread = threading.Thread(
        target=loop.run_forever, name="strata-grpc", daemon=True
    )
    loop_thread.start()

    telemetry.setup()
    door_limits = Limits(limits, is_admin=lambda token: app.caller(token).admin)
    door = Door(door_limits, pool, access_log, position=store.known_position)
    services = (
        (pb.DESCRIPTOR.services_by_name["GameService"], GameServicer(app)),
        (admin_pb.DESCRIPTOR.services_by_name["AdminService"], AdminServicer(app)),
        (
            integration_pb.DESCRIPTOR.services_by_name["IntegrationService"],
            IntegrationServicer(
                app, Integration(app.games, projection, integration_tokens)
            ),
        ),
    )

    stopping = threading.Event()
    watch: list[HealthWatch] = []
    http_app = http.application(
        connect_transport.applications(door, services, MAX_MESSAGE_BYTES),
        serving=lambda: bool(watch) and watch[0].serving,
        cors_origins=cors_origins,
    )
    listener: list[HttpListener] = []

    async def start() -> tuple[grpc.aio.Server, int, HealthWatch]:
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", 16 * MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", int(reuse_port)),
            ],
            # No server-wide bound here: it would count streams and health
            # checks with the unary calls. The door bounds each apart.
            maximum_concurrent_rpcs=None,
        )
        server.add_generic_rpc_handlers(grpc_transport.handlers(door, services))
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection(
            (
                SERVICE_NAME,
                ADMIN_SERVICE_NAME,
                INTEGRATION_SERVICE_NAME,
                health.SERVICE_NAME,
                reflection.SERVICE_NAME,
            ),
            server,
        )
        try:
            if tls is not None:
                bound = server.add_secure_port(f"{host}:{port}", tls.grpc_credentials())
            else:
                bound = server.add_insecure_port(f"{host}:{port}")
        except RuntimeError:
            bound = 0
        if bound == 0:
            # gRPC says no more; a port in use is by far the likeliest.
            raise OSError(errno.EADDRINUSE, "address in use", f"{host}:{port} (gRPC)")
        if http_port is not None:
            listener.append(
                HttpListener(
                    http_app,
                    http.bind(host, http_port, reuse_port),
                    tls.ssl_context() if tls is not None else None,
                )
            )
        await server.start()
        if listener:
            await listener[0].start()
        watch.append(
            HealthWatch(
                store,
                health_servicer,
                (SERVICE_NAME, ADMIN_SERVICE_NAME, INTEGRATION_SERVICE_NAME),
            )
        )
        await watch[0].start()
        return server, bound, watch[0]

    try:
        server, bound, health_servicer = asyncio.run_coroutine_threadsafe(
            start(), loop
        ).result()
    except BaseException:
        _end_loop(loop, loop_thread)
        pool.shutdown(wait=False)
        raise
    running = Running(
        server,
        bound,
        app,
        health_servicer,
        loop,
        loop_thread,
        pool,
        projection,
        door_limits,
        listener[0] if listener else None,
        stopping=stopping,
    )
    running.gauges.extend(_gauges(running))
    running.background.extend(
        _start_background(
            app,
            projection if isinstance(projection, GameListProjection) else None,
            "bots" in background,
            running.stopping,
            limits,
        )
    )
    return running


def _gauges(running: Running) -> list[tuple[str, Any]]:
    """The figures of ``running`` a scrape reads: open streams by method,
    the game list projection's lag, database connections in use."""
    store = running.app.store
    limits = running.limits
    projection = running.projection

    def streams() -> list[Observation]:
        counts = limits.streams.by_method() if limits is not None else {}
        return [Observation(n, {"rpc.method": m}) for m, n in counts.items()]

    def projection_lag() -> list[Observation]:
        if not isinstance(projection, GameListProjection):
            return []
        return [Observation(store.events_after(projection.position))]

    def connections() -> list[Observation]:
        used = store.connections_in_use()
        return [] if used is None else [Observation(used)]

    gauges: list[tuple[str, Any]] = [
        ("strata.streams.open", streams),
        ("strata.projection.lag", projection_lag),
        ("strata.store.connections.in_use", connections),
    ]
    descriptions = {
        "strata.streams.open": "Streams open now (WatchGame, ReplayGame, FollowLog)",
        "strata.projection.lag": "Events of the log the game list projection "
        "has not applied yet",
        "strata.store.connections.in_use": "Database connections checked out now",
    }
    for name, source in gauges:
        telemetry.GAUGES.watch(name, descriptions[name], source)
    return gauges


def _start_background(
    app: GameApp,
    projection: GameListProjection | None,
    bots: bool,
    stopping: threading.Event,
    limits: LimitSettings,
) -> list[threading.Thread]:
    """Threads that keep ``projection`` and make the service's own moves
    (``bots``: the bot seats' moves, the expiry of games never started)
    until ``stopping`` is set."""
    threads = []
    if projection is not None:
        threads.append(
            threading.Thread(
                target=projection.run_forever,
                args=(stopping,),
                name="projection-game-list",
                daemon=True,
            )
        )
    if bots:
        runner = BotRunner(app, moves_per_creator=limits.bot_moves_per_second)
        store = app.store

        def bots_lag() -> list[Observation]:
            return [Observation(store.events_after(runner.position))]

        telemetry.GAUGES.watch(
            "strata.bots.lag",
            "Events of the log the bot runner has not read yet",
            bots_lag,
        )
        housekeeper = Housekeeper(app, limits.open_game_hours)
        threads.append(
            threading.Thread(
                target=runner.run_forever,
                args=(stopping,),
                name="bot-runner",
                daemon=True,
            )
        )
        threads.append(
            threading.Thread(
                target=housekeeper.run_forever,
                args=(stopping,),
                name="housekeeping",
                daemon=True,
            )
        )
        # The service's own moves on a timeout (games with a time control).
        timekeeper = Timekeeper(app)
        threads.append(
            threading.Thread(
                target=timekeeper.run_forever,
                args=(stopping,),
                name="timekeeper",
                daemon=True,
            )
        )
    for thread in threads:
        thread.start()
    return threads


def _end_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    if not thread.is_alive():
        loop.close()


def serve(config: Config, reuse_port: bool = False) -> None:
    """Run the service until SIGTERM or SIGINT (``reuse_port``: as one of
    several processes on the same ports, see :func:`serve_processes`)."""
    configure_logging(config.log_level)
    log = structlog.get_logger("strata")
    store = open_prepared_store(config.database_url, config.read_database_urls)
    running = create_server(
        store,
        admin_token=config.admin_token,
        port=config.port,
        host=config.host,
        workers=config.workers,
        integration_tokens=config.integration_tokens,
        limits=config.limits,
        background=config.background,
        http_port=config.http_port or None,
        cors_origins=config.cors_origins,
        access_log=config.access_log,
        tls=config.tls,
        reuse_port=reuse_port,
    )
    log.info(
        "strata.serving",
        pid=os.getpid(),
        port=running.port,
        http_port=running.http_port or None,
        database=_safe_url(config.database_url),
        standbys=[_safe_url(url) for url in config.read_database_urls] or None,
        admin_token_set=bool(config.admin_token),
        background=",".join(config.background) or "none",
    )
    _until_signal(log)
    running.stop(config.shutdown_grace)
    store.close()
    log.info("strata.stopped")


def serve_processes(config: Config, processes: int) -> int:
    """Run ``processes`` serving processes on the same ports until SIGTERM
    or SIGINT; the exit status.

    Each is a whole ``strata serve`` (its own event loop, store, connections
    and group committer) binding the gRPC and HTTP ports with
    ``SO_REUSEPORT``, so the kernel spreads new connections over them. The
    first runs the background work of ``STRATA_BACKGROUND``, the others none
    (they answer ``ListGames`` from the first's checkpoint). This process
    only starts them, passes a signal on, and stops them all when one ends
    by itself (exit status 1): whatever restarts it restarts them all.
    """
    configure_logging(config.log_level)
    log = structlog.get_logger("strata")
    port = config.port or _free_port(config.host)
    http_port = config.http_port
    environ = {
        **os.environ,
        "STRATA_DATABASE_URL": config.database_url,
        "STRATA_PORT": str(port),
        "STRATA_HTTP_PORT": str(http_port),
    }
    command = [sys.executable, "-m", "service.cli", "serve", "--reuse-port"]
    children: list[subprocess.Popen[bytes]] = []
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for index in range(processes):
        background = {} if index == 0 else {"STRATA_BACKGROUND": "none"}
        children.append(subprocess.Popen(command, env={**environ, **background}))
    log.info(
        "strata.processes",
        processes=processes,
        pids=[child.pid for child in children],
        port=port,
        http_port=http_port or None,
    )
    status = 0
    while not stopping.is_set():
        ended = [child for child in children if child.poll() is not None]
        if ended:
            log.error(
                "strata.process_ended",
                pid=ended[0].pid,
                status=ended[0].returncode,
            )
            status = 1
            break
        stopping.wait(0.2)
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + config.shutdown_grace + 30
    for child in children:
        try:
            child.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            status = 1
    log.info("strata.stopped")
    return status


def _free_port(host: str) -> int:
    """A port free now on ``host``, for processes that must share one."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host.strip("[]"), 0))
        return int(probe.getsockname()[1])


def work(config: Config) -> None:
    """Run the background work (the game list projection, the bot seats)
    without serving requests, until SIGTERM or SIGINT: for deployments whose
    replicas serve with ``STRATA_BACKGROUND=none``."""
    configure_logging(config.log_level)
    log = structlog.get_logger("strata")
    store = open_prepared_store(config.database_url, config.read_database_urls)
    app = GameApp(
        store,
        admin_token=config.admin_token,
        max_refusals=config.limits.max_refusals_per_game,
        max_open_seats=config.limits.max_open_seats,
        max_timed_games=config.limits.max_timed_games,
    )
    projection = GameListProjection(store) if store.read_models() is not None else None
    app.queries.game_list = projection
    stopping = threading.Event()
    threads = _start_background(app, projection, True, stopping, config.limits)
    log.info("strata.working", database=_safe_url(config.database_url))
    _until_signal(log)
    stopping.set()
    for thread in threads:
        thread.join(timeout=10)
    store.close()
    log.info("strata.stopped")


def _until_signal(log: Any) -> None:
    """Block until SIGTERM or SIGINT."""
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("strata.stopping", signal=signum)
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    done.wait()


class StoreNotReady(SystemExit):
    """The database schema does not match this version of Strata."""


def open_prepared_store(url: str, read_urls: Sequence[str] = ()) -> EventStore:
    """Open the store (with ``read_urls``, its hot standbys), migrating
    SQLite automatically; PostgreSQL must have been migrated with `strata
    migrate` (a clear message otherwise)."""
    # Alembic's plugin chatter (logged on import) would bury the one line
    # that matters.
    logging.getLogger("alembic").setLevel(logging.WARNING)
    from eventstore import migrate
    from eventstore.base import StoreUnavailable
    from eventstore.factory import open_store

    try:
        if url.startswith("sqlite"):
            migrate.upgrade(url)
        else:
            status = migrate.check(url)
            if not status.ok:
                raise StoreNotReady(
                    f"strata: the database at {_safe_url(url)} is not ready: "
                    f"{status.message}"
                )
    except (StoreUnavailable, migrate.MigrationError) as error:
        detail = " ".join(str(error).split())  # one line, whatever the driver says
        raise StoreNotReady(
            f"strata: cannot use the database at {_safe_url(url)}: {detail}"
        ) from None
    return open_store(url, read_urls)


def _safe_url(url: str) -> str:
    """The URL without its password."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        credentials, _, host = rest.rpartition("@")
        user = credentials.split(":", 1)[0]
        return f"{scheme}{sep}{user}@{host}"
    return url
