"""The HTTP listener's edge: what a connection may cost before any of the
service's own code runs.

:func:`protocol_class` is uvicorn's HTTP/1.1 protocol (httptools) with
bounds of its own: a request's line and headers at most
``STRATA_MAX_HEADER_BYTES`` (431 past it, before the rest is buffered), the
headers within ``STRATA_HEADER_TIMEOUT`` seconds of the request's first
byte (or of the connection, for its first request: 408 otherwise), the body
within ``STRATA_BODY_TIMEOUT`` of the headers, at most
``STRATA_MAX_CONNECTIONS_PER_ADDRESS`` connections from one address and
``STRATA_MAX_CONNECTIONS`` in all (by default what the process's open-file
limit leaves after a reserve for the store, gRPC and health: 503 and closed
past it). Refusals are logged once per interval, with a count, not once per
connection. What a request may cost once it is read is the gate's
(:mod:`service.gate`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import resource
import time
from collections import Counter
from collections.abc import Callable

import structlog
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.addresses import canonical

log = structlog.get_logger("strata.http")


#: Descriptors kept for everything but HTTP connections (the store's
#: connections and files, gRPC, health, logs) when the HTTP connection bound
#: is derived from the open-file limit.
DESCRIPTOR_RESERVE = 256


@dataclasses.dataclass(frozen=True)
class EdgeSettings:
    """The bounds of the HTTP listener's connections (0: no bound)."""

    #: Bytes of a request's line and headers.
    max_header_bytes: int = 8192
    #: Seconds from a request's first byte to the end of its headers.
    header_timeout: float = 10.0
    #: Seconds from the end of the headers to the end of the body.
    body_timeout: float = 30.0
    #: HTTP connections open at once, in all (0: derived from the open-file
    #: limit, see :func:`connection_budget`).
    max_connections: int = 0
    #: HTTP connections open at once from one address.
    max_connections_per_address: int = 128


def connection_budget(reserve: int = DESCRIPTOR_RESERVE) -> int:
    """Connections one listener may hold: half of what the open-file limit
    leaves after ``reserve`` (the other half is the gRPC listener's). The
    soft limit is raised to the hard one first, as far as it may be."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return max((soft - reserve) // 2, 16)


class Throttled:
    """A warning logged at most once per ``interval`` seconds, with how many
    times it happened since the last line (an attack of a thousand
    connections is one line, not a thousand)."""

    def __init__(self, event: str, interval: float = 10.0) -> None:
        self.event = event
        self.interval = interval
        self._last = -interval
        self._counts: Counter[str] = Counter()

    def note(self, reason: str) -> None:
        self._counts[reason] += 1
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            counts = dict(self._counts)
            self._counts.clear()
            log.warning(self.event, counts=counts, interval_s=self.interval)


class Connections:
    """The HTTP connections open now, by address; a new one past either
    bound is refused."""

    def __init__(
        self,
        total: int,
        per_address: int,
        exempt: Callable[[str], bool] = lambda address: False,
    ) -> None:
        self.total = total
        self.per_address = per_address
        self.exempt = exempt
        self._open: Counter[str] = Counter()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def open(self, address: str) -> str:
        """Count a new connection from ``address``; the reason it is refused
        ('' when it is not)."""
        if 0 < self.total <= self._count:
            return "connections_full"
        held = self._open[address]
        if 0 < self.per_address <= held and not self.exempt(address):
            return "connections_per_address"
        self._open[address] = held + 1
        self._count += 1
        return ""

    def close(self, address: str) -> None:
        self._count -= 1
        self._open[address] -= 1
        if self._open[address] <= 0:
            del self._open[address]

    def of(self, address: str) -> int:
        return self._open.get(address, 0)


def _raw_response(status: int, phrase: str, text: str) -> bytes:
    body = text.encode()
    return (
        f"HTTP/1.1 {status} {phrase}\r\n"
        "content-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    ).encode() + body


class Edge:
    """What the HTTP listener's connections share: their bounds, their
    counts, and the throttled log of refusals."""

    def __init__(
        self,
        settings: EdgeSettings,
        exempt: Callable[[str], bool] = lambda address: False,
    ) -> None:
        self.settings = settings
        total = settings.max_connections or connection_budget()
        self.connections = Connections(
            total, settings.max_connections_per_address, exempt
        )
        self.refused = Throttled("http.connections_refused")


class EdgeProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, bounded by its :class:`Edge` (see the
    module); :func:`protocol_class` binds one to an edge."""

    edge: Edge
    _address = ""
    _counted = False
    _header_bytes = 0
    _too_large = False
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        self._address = canonical(str(peer[0])) if peer else ""
        refused = self.edge.connections.open(self._address)
        if refused:
            self.edge.refused.note(refused)
            self.transport = transport
            transport.write(
                _raw_response(
                    503, "Service Unavailable", "Too many connections; retry later."
                )
            )
            transport.close()
            return
        self._counted = True
        super().connection_made(transport)
        self._arm(self.edge.settings.header_timeout, "header_timeout")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted:
            self._counted = False
            self.edge.connections.close(self._address)
        if self.parser is None and self.flow is None:
            return  # refused in connection_made: nothing else was set up
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.parser is None:
            return
        super().data_received(data)
        if self._too_large and not self.transport.is_closing():
            self.edge.refused.note("headers_too_large")
            self._disarm()
            self.transport.write(
                _raw_response(
                    431,
                    "Request Header Fields Too Large",
                    f"A request's line and headers may have at most "
                    f"{self.edge.settings.max_header_bytes} bytes.",
                )
            )
            self.transport.close()

    # -- the parser's callbacks ----------------------------------------

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_bytes = 0
        if self._timer is None:
            self._arm(self.edge.settings.header_timeout, "header_timeout")

    def on_url(self, url: bytes) -> None:
        if self._count(len(url)):
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._count(len(name) + len(value) + 4):
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._disarm()
        if self._too_large:
            return
        super().on_headers_complete()
        self._arm(self.edge.settings.body_timeout, "body_timeout")

    def on_body(self, body: bytes) -> None:
        if not self._too_large:
            super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        if not self._too_large:
            super().on_message_complete()

    # -- bounds -------------------------------------------------------------

    def _count(self, size: int) -> bool:
        """Count ``size`` bytes of the request's head; False once past
        the bound (nothing more of it is kept)."""
        self._header_bytes += size
        limit = self.edge.settings.max_header_bytes
        if limit > 0 and self._header_bytes > limit:
            self._too_large = True
        return not self._too_large

    def _arm(self, seconds: float, reason: str) -> None:
        self._disarm()
        if seconds > 0:
            self._timer = self.loop.call_later(seconds, self._expire, reason)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self, reason: str) -> None:
        self._timer = None
        if self.transport is None or self.transport.is_closing():
            return
        self.edge.refused.note(reason)
        cycle = self.cycle
        if cycle is None or not cycle.response_started:
            self.transport.write(
                _raw_response(408, "Request Timeout", "The request came too slowly.")
            )
        self.transport.close()


def protocol_class(edge: Edge) -> type[HttpToolsProtocol]:
    """:class:`EdgeProtocol` bound to ``edge``."""
    return type("BoundEdgeProtocol", (EdgeProtocol,), {"edge": edge})
