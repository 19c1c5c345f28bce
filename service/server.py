"""Building and running the gRPC server: the composition root.

``create_server`` wires store, application, servicers, the door, health
checking and reflection, and binds a port (0 picks a free one, for tests).
``serve`` runs it until SIGTERM or SIGINT, then shuts down gracefully.
``serve_processes`` runs several such servers, each a process of its own
with its own store and group committer, on one port (``SO_REUSEPORT``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import threading
import time
from collections.abc import Collection, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry.metrics import Observation
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb
from strata.v1 import integration_service_pb2 as integration_pb

from domain import registry
from eventstore.base import EventStore
from service import connect_transport, grpc_transport, http, saturation, telemetry
from service.addresses import TrustedProxies, parse_networks
from service.admin import AdminServicer, IntegrationServicer
from service.administration import Integration
from service.application import GameApp
from service.bots import BotRunner
from service.callers import hash_token
from service.clocks import Timekeeper
from service.config import BACKGROUND_WORK, DEFAULT_EVENT_LOOP, new_event_loop
from service.door import Door
from service.health import HealthWatch
from service.housekeeping import Housekeeper
from service.http import HttpListener, Metrics
from service.http_edge import Edge, EdgeSettings
from service.limits import Limits, LimitSettings
from service.projections import GameList, GameListProjection, GameListReader
from service.saturation import CountingPool, start_lag_watch
from service.servicer import GameServicer
from service.tls import Certificates, TlsFiles

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["GameService"].full_name
ADMIN_SERVICE_NAME = admin_pb.DESCRIPTOR.services_by_name["AdminService"].full_name
INTEGRATION_SERVICE_NAME = integration_pb.DESCRIPTOR.services_by_name[
    "IntegrationService"
].full_name
MAX_MESSAGE_BYTES = 1 << 20
#: What a shutdown may take beyond its grace (ending streams, the loop, the
#: background threads): the process exits within grace + 1 s.
STOP_MARGIN = 0.5
#: A gRPC connection with no call for this long is closed (clients reconnect
#: by themselves when they call again).
IDLE_CONNECTION_MS = 5 * 60 * 1000


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
    #: The metrics listener (``STRATA_METRICS_ADDRESS``), if any.
    metrics_http: HttpListener | None = None
    #: The door every call comes through (it refuses new ones on stopping).
    door: Door | None = None
    #: The TLS files served (read again when they change), if any.
    certificates: Certificates | None = None
    background: list[threading.Thread] = dataclasses.field(default_factory=list)
    gauges: list[tuple[str, Any]] = dataclasses.field(default_factory=list)
    stopping: threading.Event = dataclasses.field(default_factory=threading.Event)

    @property
    def http_port(self) -> int:
        """The HTTP listener's port (0 when there is none)."""
        return 0 if self.http is None else self.http.port

    @property
    def metrics_port(self) -> int:
        """The metrics listener's port (0 when there is none)."""
        return 0 if self.metrics_http is None else self.metrics_http.port

    def tls_modes(self) -> dict[str, str | None]:
        """Whether each listener speaks TLS (``off``, ``on``, ``mutual``;
        None: no such listener), for the start line."""
        mode = "off" if self.certificates is None else self.certificates.files.mode
        return {
            "grpc_tls": mode,
            "http_tls": mode if self.http is not None else None,
            # The probes' and scrapes' listener asks for no certificate.
            "metrics_tls": "off" if self.metrics_http is not None else None,
        }

    def stop(self, grace: float = 5.0) -> None:
        """One drain for every listener, within ``grace`` seconds and a
        fraction of one more: health says NOT_SERVING and the door refuses
        new calls on both listeners at once (UNAVAILABLE ``SHUTTING_DOWN``),
        open streams end at once with that status (their clients reconnect
        elsewhere and resume), and running unary calls get ``grace`` to
        finish."""
        deadline = time.monotonic() + grace + STOP_MARGIN
        self.stopping.set()
        if self.door is not None:
            self.door.stop()

        async def stop() -> None:
            await self.health.stop()
            # The door refuses new calls while the running ones finish;
            # then the listeners close (gRPC's stop cancels a call that
            # reaches it as it closes: the door's refusal is the answer a
            # client retries elsewhere).
            if self.door is not None:
                await self.door.drained(grace)
            grace_left = max(deadline - STOP_MARGIN - time.monotonic(), 0.0)
            draining = [self.server.stop(grace_left)]
            for listener in (self.http, self.metrics_http):
                if listener is not None:
                    listener.server.config.timeout_graceful_shutdown = max(
                        int(grace_left), 1
                    )
                    draining.append(listener.stop())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*draining), grace_left + 0.2)
            # What is still running past the grace (a stream's reader, say)
            # ends here, not when the loop is torn down under it.
            left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in left:
                task.cancel()
            if left:
                await asyncio.wait(left, timeout=max(deadline - time.monotonic(), 0.05))

        future = asyncio.run_coroutine_threadsafe(stop(), self.loop)
        with contextlib.suppress(TimeoutError):
            future.result(max(deadline - time.monotonic(), 0.1) + 5)
        _end_loop(self.loop, self.loop_thread)
        self.pool.shutdown(wait=False, cancel_futures=True)
        # The background threads wait for appends or linger: wake them, so
        # each sees ``stopping`` now rather than at the end of its wait
        # (again while it lives: one may have begun a wait since).
        for thread in self.background:
            while thread.is_alive() and time.monotonic() < deadline:
                self.app.store.interrupt_waits()
                if isinstance(self.projection, GameListProjection):
                    self.projection.wake()
                thread.join(0.02)
        for name, source in self.gauges:
            telemetry.GAUGES.forget(name, source)


def _why_not_bound(host: str, port: int, reuse_port: bool) -> OSError:
    """Why gRPC could not bind ``host:port`` (it says no more): the error of
    binding it ourselves (an address not of this machine, a port in use),
    else a port in use, by far the likeliest."""
    try:
        http.bind(host, port, reuse_port).close()
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            return OSError(error.errno, error.strerror, f"{host}:{port} (gRPC)")
    return OSError(errno.EADDRINUSE, "address in use", f"{host}:{port} (gRPC)")


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
    trusted_proxies: Sequence[str] = (),
    metrics_address: str = "",
    metrics_token: str = "",
    event_loop: str = DEFAULT_EVENT_LOOP,
) -> Running:
    """A started server on ``host:port`` (port 0: a free one), running the
    ``background`` work too (see :data:`service.config.BACKGROUND_WORK`).
    ``reuse_port``: both listeners share their ports with other processes
    that bind them so (``SO_REUSEPORT``; otherwise a port in use is an
    error). ``trusted_proxies``: addresses and networks whose
    ``X-Forwarded-For`` names the client. ``metrics_address``: ``host:port``
    of a listener of its own for ``/metrics`` and ``/healthz`` (port 0: a
    free one); empty, ``/metrics`` is on the HTTP listener. ``metrics_token``:
    the bearer token ``/metrics`` asks for (empty: none). ``event_loop``:
    the listeners' loop, ``uvloop`` or ``asyncio``
    (:data:`service.config.EVENT_LOOPS`)."""
    registry.game_types()  # every game's rules imported now, not by a first call
    limits = limits or LimitSettings()
    certificates = Certificates(tls) if tls is not None else None
    app = GameApp(
        store,
        admin_token=admin_token,
        max_refusals=limits.max_refusals_per_game,
        max_open_seats=limits.max_open_seats,
        max_timed_games=limits.max_timed_games,
        bot_move_ms=limits.bot_move_ms,
    )
    projection: GameList | None = None
    if store.read_models() is not None:
        projection = (
            GameListProjection(store)
            if "projections" in background
            else GameListReader(store)
        )
        app.queries.game_list = projection
    pool = CountingPool(max_workers=workers, thread_name_prefix="rpc")
    loop = new_event_loop(event_loop)
    loop.set_default_executor(pool)
    loop_thread = threading.Thread(
        target=loop.run_forever, name="strata-grpc", daemon=True
    )
    loop_thread.start()

    telemetry.setup()
    integrations = frozenset(integration_tokens)
    door_limits = Limits(
        limits,
        is_admin=lambda token: app.caller(token).admin,
        is_integration=integrations.__contains__,
    )
    proxies = TrustedProxies(parse_networks(trusted_proxies))
    door = Door(
        door_limits,
        pool,
        access_log,
        position=store.known_position,
        reads_after=app.reads_after,
        proxies=proxies,
        store_timeout=limits.store_timeout,
        seated=lambda token, game_id: bool(
            app.load(game_id, refresh=False).state.seats_of(hash_token(token))
        ),
    )
    edge = Edge(
        EdgeSettings(
            max_header_bytes=limits.max_header_bytes,
            header_timeout=limits.header_timeout,
            body_timeout=limits.body_timeout,
            max_connections=limits.max_connections,
            max_connections_per_address=limits.max_connections_per_address,
        ),
        exempt=proxies.trusts,
    )
    metrics = Metrics(metrics_token)
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
    serving = lambda: bool(watch) and watch[0].serving  # noqa: E731
    http_app = http.application(
        connect_transport.applications(door, services, MAX_MESSAGE_BYTES),
        serving=serving,
        cors_origins=cors_origins,
        metrics=None if metrics_address else metrics,
    )
    listener: list[HttpListener] = []
    metrics_listener: list[HttpListener] = []

    async def start() -> tuple[grpc.aio.Server, int, HealthWatch]:
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", 16 * MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", int(reuse_port)),
                # The descriptors it may hold (the HTTP listener has as
                # many; the rest is the store's and the health checks').
                ("grpc.max_allowed_incoming_connections", edge.connections.total),
                # A connection that never completes its handshake, or
                # stays idle, does not hold a descriptor for ever.
                (
                    "grpc.server_handshake_timeout_ms",
                    int(max(limits.header_timeout, 1) * 1000),
                ),
                ("grpc.max_connection_idle_ms", IDLE_CONNECTION_MS),
                # Metadata (headers) bounded as the HTTP listener bounds them.
                *(
                    [
                        ("grpc.max_metadata_size", limits.max_header_bytes),
                        ("grpc.absolute_max_metadata_size", limits.max_header_bytes),
                    ]
                    if limits.max_header_bytes > 0
                    else []
                ),
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
        # Last: what none of the handlers above serves.
        server.add_generic_rpc_handlers(
            (grpc_transport.UnknownMethods(door, (s.full_name for s, _ in services)),)
        )
        try:
            if certificates is not None:
                bound = server.add_secure_port(
                    f"{host}:{port}", certificates.grpc_credentials()
                )
            else:
                bound = server.add_insecure_port(f"{host}:{port}")
        except RuntimeError:
            bound = 0
        if bound == 0:
            raise _why_not_bound(host, port, reuse_port)
        if http_port is not None:
            listener.append(
                HttpListener(
                    http_app,
                    http.bind(host, http_port, reuse_port),
                    certificates.ssl_context() if certificates is not None else None,
                    edge,
                )
            )
        if metrics_address:
            metrics_host, _, metrics_port = metrics_address.rpartition(":")
            metrics_listener.append(
                HttpListener(
                    http.metrics_application(metrics, serving),
                    http.bind(metrics_host, int(metrics_port), reuse_port),
                )
            )
        await server.start()
        for each in (*listener, *metrics_listener):
            await each.start()
        watch.append(
            HealthWatch(
                store,
                health_servicer,
                (SERVICE_NAME, ADMIN_SERVICE_NAME, INTEGRATION_SERVICE_NAME),
            )
        )
        await watch[0].start()
        start_lag_watch()
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
        metrics_http=metrics_listener[0] if metrics_listener else None,
        door=door,
        certificates=certificates,
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
    """The figures of ``running`` a scrape reads (:mod:`service.saturation`)."""
    store = running.app.store
    projection = running.projection
    lags = {}
    if isinstance(projection, GameListProjection):
        lags["projection"] = lambda: store.events_after(projection.position)
    pool = running.pool if isinstance(running.pool, CountingPool) else None
    return saturation.gauges(store, pool, running.limits, lags)


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
        runner = BotRunner(
            app,
            moves_per_creator=limits.bot_moves_per_second,
            move_ms=limits.bot_move_ms,
            think_share=limits.bot_think_share,
        )
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
