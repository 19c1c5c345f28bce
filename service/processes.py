"""The processes an operator runs: ``strata serve`` (one process, or
several on the same ports), and ``strata worker``.

Every process names itself (``serve``, ``serve-0``, ``serve-1``, …,
``worker``; ``STRATA_PROCESS`` sets it): the name is on every metric series
(label ``process``) and every log line (``process``, with ``pid``), so an
operator can tell which process wrote what. Each can be scraped and probed
on an address of its own: under ``--processes N`` with
``STRATA_METRICS_ADDRESS=host:P``, process *i* serves its metrics and
probes on port ``P + i``; ``strata worker`` serves them on
``STRATA_METRICS_ADDRESS``, else on the HTTP port.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from types import FrameType
from typing import Any

import structlog
from grpc_health.v1 import health

from eventstore.base import EventStore
from service import http, saturation, telemetry, variables
from service.application import GameApp
from service.config import Config
from service.health import HealthWatch
from service.http import HttpListener, Metrics
from service.projections import GameListProjection
from service.server import _start_background, configure_logging, create_server


def serve(config: Config, reuse_port: bool = False) -> None:
    """Run the service until SIGTERM or SIGINT (``reuse_port``: as one of
    several processes on the same ports, see :func:`serve_processes`)."""
    telemetry.set_process(os.environ.get("STRATA_PROCESS") or "serve")
    configure_logging(config.log_level)
    log = structlog.get_logger("strata")
    if not reuse_port:  # else the supervisor of the processes warned
        warn_unknown_variables(log)
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
        trusted_proxies=config.trusted_proxies,
        metrics_address=config.metrics_address,
        metrics_token=config.metrics_token,
        event_loop=config.event_loop,
    )
    log.info(
        "strata.serving",
        pid=os.getpid(),
        port=running.port,
        http_port=running.http_port or None,
        metrics_port=running.metrics_port or None,
        database=_safe_url(config.database_url),
        standbys=[_safe_url(url) for url in config.read_database_urls] or None,
        admin_token_set=bool(config.admin_token),
        background=",".join(config.background) or "none",
        event_loop=config.event_loop,
        **running.tls_modes(),
    )
    _until_signal(log)
    running.stop(config.shutdown_grace)
    store.close()
    log.info("strata.stopped")
    exit_now(0)


def warn_unknown_variables(log: Any) -> None:
    """A warning for each ``STRATA_*`` variable of the environment that no
    part of Strata reads, naming the known one closest to it (its value
    is not logged: it may be a secret)."""
    for name, near in variables.unknown(os.environ):
        log.warning(
            "config.unknown_variable",
            variable=name,
            closest=near,
            hint=f"did you mean {near}?" if near else "no known variable is like it",
        )


def exit_now(status: int) -> None:
    """End the process now that the service has stopped: a worker thread
    still blocked in a bounded wait (a stream's reader of the store) would
    hold the interpreter's exit up to that wait's end, past the grace an
    orchestrator allows. Pending spans are exported and output flushed
    first."""
    telemetry.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


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
    telemetry.set_process("supervisor")
    configure_logging(config.log_level)
    log = structlog.get_logger("strata")
    warn_unknown_variables(log)
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
    metrics_addresses = _metrics_addresses(config.metrics_address, processes)
    if not config.metrics_address:
        log.warning(
            "strata.processes_unscrapable",
            hint="set STRATA_METRICS_ADDRESS=host:port: each process then serves "
            "its metrics and probes on a port of its own (port, port + 1, …); "
            "/metrics on the shared HTTP port answers from one process at random",
        )
    for index in range(processes):
        own = {
            "STRATA_PROCESS": f"serve-{index}",
            **({} if index == 0 else {"STRATA_BACKGROUND": "none"}),
            **(
                {"STRATA_METRICS_ADDRESS": metrics_addresses[index]}
                if metrics_addresses
                else {}
            ),
        }
        children.append(subprocess.Popen(command, env={**environ, **own}))
    log.info(
        "strata.processes",
        processes=processes,
        pids=[child.pid for child in children],
        port=port,
        http_port=http_port or None,
        metrics=metrics_addresses or None,
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


def _metrics_addresses(address: str, processes: int) -> list[str]:
    """Each process's metrics address: ``host:P``, ``host:P+1``, … (port 0:
    each a free port of its own); none when ``address`` is empty."""
    if not address:
        return []
    host, _, port = address.rpartition(":")
    first = int(port)
    return [f"{host}:{first + i if first else 0}" for i in range(processes)]


def _free_port(host: str) -> int:
    """A port free now on ``host``, for processes that must share one."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host.strip("[]"), 0))
        return int(probe.getsockname()[1])


def work(config: Config) -> None:
    """Run the background work (the game list projection, the bot seats)
    without serving requests, until SIGTERM or SIGINT: for deployments whose
    replicas serve with ``STRATA_BACKGROUND=none``. Its metrics and probes
    (``/metrics``, ``/healthz``, ``/livez``, ``/readyz``) are served on
    ``STRATA_METRICS_ADDRESS``, else on ``STRATA_HOST:STRATA_HTTP_PORT``."""
    telemetry.set_process(os.environ.get("STRATA_PROCESS") or "worker")
    configure_logging(config.log_level)
    log = structlog.get_logger("strata")
    warn_unknown_variables(log)
    store = open_prepared_store(config.database_url, config.read_database_urls)
    app = GameApp(
        store,
        admin_token=config.admin_token,
        max_refusals=config.limits.max_refusals_per_game,
        max_open_seats=config.limits.max_open_seats,
        max_timed_games=config.limits.max_timed_games,
        bot_move_ms=config.limits.bot_move_ms,
    )
    projection = GameListProjection(store) if store.read_models() is not None else None
    app.queries.game_list = projection
    stopping = threading.Event()
    threads = _start_background(app, projection, True, stopping, config.limits)
    lags = {}
    if projection is not None:
        lags["projection"] = lambda: store.events_after(projection.position)
    gauges = saturation.gauges(store, None, None, lags)
    address = config.metrics_address or (
        f"{config.host}:{config.http_port}" if config.http_port else ""
    )
    monitor = Monitor(store, address, config.metrics_token) if address else None
    log.info(
        "strata.working",
        pid=os.getpid(),
        database=_safe_url(config.database_url),
        metrics_port=monitor.port if monitor else None,
        # The probes' and scrapes' listener asks for no certificate.
        metrics_tls="off" if monitor else None,
    )
    _until_signal(log)
    stopping.set()
    deadline = time.monotonic() + config.shutdown_grace
    if monitor is not None:
        monitor.stop()
    for thread in threads:
        thread.join(timeout=max(deadline - time.monotonic(), 0.1))
    for name, source in gauges:
        telemetry.GAUGES.forget(name, source)
    store.close()
    log.info("strata.stopped")
    exit_now(0)


class Monitor:
    """Metrics and probes of a process that serves no calls (the worker):
    an HTTP listener on an event loop of its own, and the store's health."""

    def __init__(self, store: EventStore, address: str, token: str = "") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="strata-monitor", daemon=True
        )
        self.thread.start()
        host, _, port = address.rpartition(":")
        self.watch = HealthWatch(store, health.aio.HealthServicer(), ())
        app = http.metrics_application(Metrics(token), lambda: self.watch.serving)
        self.listener = HttpListener(app, http.bind(host, int(port)))
        self.port = self.listener.port

        async def start() -> None:
            await self.watch.start()
            await self.listener.start()

        asyncio.run_coroutine_threadsafe(start(), self.loop).result(30)

    def stop(self) -> None:
        async def stop() -> None:
            await self.watch.stop()
            await self.listener.stop()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def _until_signal(log: Any) -> None:
    """Block until SIGTERM or SIGINT."""
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("strata.stopping", signal=signum)
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # A wait with a timeout, again and again: a signal the kernel hands to
    # another thread only flags the main one, which runs the handler when
    # it next runs Python; an untimed wait might never return to do so.
    while not done.wait(0.5):
        pass


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
