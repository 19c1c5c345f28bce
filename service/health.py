"""Health that tells the truth: SERVING only while the store answers.

:class:`HealthWatch` probes the store (:meth:`EventStore.check_health`)
every ``interval`` seconds on the server's event loop (the probe itself in a
worker thread, bounded by ``timeout``), and sets the overall status and
every service's in ``grpc.health.v1`` (and ``GET /healthz``) to match:
NOT_SERVING within two seconds of losing the database, SERVING again within
two seconds of its return, and NOT_SERVING from the first moment of a
graceful shutdown. It logs one line per change of state, never one per
probe. The status is a gauge too, ``strata_health_serving`` (1 or 0), what
an alert on the store being down reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog
from grpc_health.v1 import health, health_pb2
from opentelemetry.metrics import Observation

from eventstore.base import EventStore
from service import telemetry

log = structlog.get_logger("strata.health")

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class HealthWatch:
    """The service's health, kept true by probing its store."""

    def __init__(
        self,
        store: EventStore,
        servicer: health.aio.HealthServicer,
        services: Sequence[str],
        interval: float = 0.5,
        timeout: float = 1.0,
    ) -> None:
        self.store = store
        self.servicer = servicer
        self.services = ("", *services)
        self.interval = interval
        self.timeout = timeout
        self.serving = False
        self.stopping = False
        self.problem = ""
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Probe once now (the first answer is the truth too), then keep
        probing."""
        await self._probe()
        self._task = asyncio.create_task(self._run())
        telemetry.GAUGES.watch(
            "strata.health.serving",
            "1 while the service says SERVING (its database answers), else 0",
            self._observe,
        )

    def _observe(self) -> list[Observation]:
        return [Observation(int(self.serving))]

    async def stop(self) -> None:
        """NOT_SERVING for good: the service is shutting down."""
        self.stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.servicer.enter_graceful_shutdown()
        self.serving = False
        telemetry.GAUGES.forget("strata.health.serving", self._observe)

    async def _run(self) -> None:
        while not self.stopping:
            await asyncio.sleep(self.interval)
            await self._probe()

    async def _probe(self) -> None:
        try:
            await asyncio.wait_for(
                asyncio.to_thread(self.store.check_health), self.timeout
            )
        except Exception as error:
            problem = " ".join(str(error).split())[:300] or type(error).__name__
            await self._set(False, problem)
        else:
            await self._set(True, "")

    async def _set(self, serving: bool, problem: str) -> None:
        if self.stopping or serving == self.serving:
            return
        self.serving = serving
        self.problem = problem
        status = SERVING if serving else NOT_SERVING
        for name in self.services:
            await self.servicer.set(name, status)
        if serving:
            log.info("health.serving")
        else:
            log.warning("health.not_serving", problem=problem)
