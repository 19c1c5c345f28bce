"""The HTTP listener's edge: what a connection and a request may cost before
any of the service's own code runs.

Two layers, in front of everything the HTTP listener serves:

- :func:`protocol_class`, uvicorn's HTTP/1.1 protocol (httptools) with
  bounds of its own: a request's line and headers at most
  ``STRATA_MAX_HEADER_BYTES`` (431 past it, before the rest is buffered),
  the headers within ``STRATA_HEADER_TIMEOUT`` seconds of the request's
  first byte (or of the connection, for its first request: 408 otherwise),
  the body within ``STRATA_BODY_TIMEOUT`` of the headers, at most
  ``STRATA_MAX_CONNECTIONS_PER_ADDRESS`` connections from one address and
  ``STRATA_MAX_HTTP_CONNECTIONS`` in all (by default what the process's
  open-file limit leaves after a reserve for the store, gRPC and health:
  503 and closed past it). Refusals are logged once per interval, with a
  count, not once per connection.
- :class:`Gate`, in front of the Connect and gRPC-Web applications: it
  builds the call's :class:`~service.door.Call`, takes the caller's rates
  (connection, address, token) before reading a byte of the body, refuses a
  body longer than its method's bound from its ``Content-Length`` or as
  soon as it grows past it, refuses a compressed message that names no
  compression, headers that are not UTF-8, and gRPC (HTTP/2 only) on this
  HTTP/1.1 port, and decodes large JSON requests in a worker thread, a few
  at a time, so that no request's decoding holds the event loop gRPC and
  health share. A refusal it makes is still answered by the Connect
  runtime in the caller's protocol, through the door (an access line and
  the RPC metrics): the gate hands the runtime an empty request and the
  door refuses the call before its handler.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import json
import resource
import time
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import structlog
from google.protobuf import json_format
from google.protobuf.message import Message
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.addresses import canonical
from service.door import Call, Door
from service.errors import InvalidArgument, PermissionDenied, ResourceExhausted
from service.inputs import quote

log = structlog.get_logger("strata.http")

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]
M = TypeVar("M", bound=Message)

#: Descriptors kept for everything but HTTP connections (the store's
#: connections and files, gRPC, health, logs) when the HTTP connection bound
#: is derived from the open-file limit.
DESCRIPTOR_RESERVE = 256

#: JSON requests decoded at once off the event loop (more wait their turn).
DECODERS = 1
#: JSON payloads at most this long are decoded on the loop (a thread's
#: round trip costs more than they do).
DECODE_ON_LOOP_BYTES = 4096
#: The most values (objects, arrays, strings, numbers…) one JSON request may
#: hold, and how deep it may nest. No request a player or a frontend makes
#: comes near (a creation with five bot seats holds about thirty); the
#: admin's scenarios and positions may hold more.
MAX_JSON_VALUES = 1_000
MAX_ADMIN_JSON_VALUES = 100_000
MAX_JSON_DEPTH = 64


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


# -- the gate in front of Connect and gRPC-Web ----------------------------------------

#: The call the gate admitted, for the transport's handler (same task).
GATED: contextvars.ContextVar[Call | None] = contextvars.ContextVar(
    "strata_gated_call", default=None
)
#: A request the gate decoded already: (payload, message). The codecs
#: answer it for that payload instead of decoding again.
PREDECODED: contextvars.ContextVar[tuple[bytes, Message] | None] = (
    contextvars.ContextVar("strata_predecoded", default=None)
)

#: An empty message in an envelope (flags 0, length 0): what a refused
#: streaming-protocol call is handed on with.
_EMPTY_ENVELOPE = b"\x00\x00\x00\x00\x00"

_ENVELOPE_TYPES = ("application/connect+", "application/grpc-web")
_COMPRESSION_HEADERS = {
    "connect": "content-encoding",
    "connect-stream": "connect-content-encoding",
    "grpc-web": "grpc-encoding",
}


@dataclasses.dataclass(frozen=True)
class Method:
    """What the gate knows of a method: its request's class and bound."""

    path: str
    request: type[Message]
    #: The most bytes its request may have (0: none).
    limit: int
    #: Only the admin token may call it (checked before the body is read).
    admin_only: bool = False


class Gate:
    """The Connect and gRPC-Web applications behind the checks of the
    module's docstring."""

    def __init__(self, app: ASGIApp, door: Door, methods: Mapping[str, Method]) -> None:
        self.app = app
        self.door = door
        self.methods = dict(methods)
        self._decoders = asyncio.Semaphore(DECODERS)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = self.methods.get(scope["path"])
        headers, bad_header = _headers(scope)
        content_type = headers.get("content-type", "").lower()
        if content_type.startswith("application/grpc") and not content_type.startswith(
            "application/grpc-web"
        ):
            await self._grpc_here(scope, headers, send)
            return
        if method is None:
            # Connect answers 404 (not a method) or 405; the door records it.
            await self._unknown(scope, headers, receive, send)
            return
        call = self._call(scope, method, headers, content_type)
        if bad_header:
            scope = {**scope, "headers": _sanitized(scope["headers"])}
        body = b""
        try:
            if bad_header:
                raise InvalidArgument(
                    "HEADER_INVALID",
                    f"The header {quote(bad_header)} is not UTF-8 text.",
                    bad_header,
                )
            token = call.token
            self.door.limits.admit_caller(call)
            admin = bool(token) and self.door.limits.is_admin(token)
            if method.admin_only and not admin:
                raise PermissionDenied(
                    "ADMIN_ONLY", "Only the admin token may do this."
                )
            received = await self._body(method, headers, receive)
            if received is None:
                return  # the client went away
            body = received
            payload = _payload(call.transport, content_type, headers, body, method)
            if payload is not None and _is_json(content_type):
                values = MAX_ADMIN_JSON_VALUES if admin else MAX_JSON_VALUES
                await self._predecode(payload, method, values)
        except Exception as error:  # the door classifies it (a bug: INTERNAL)
            call.refused = error
        if call.refused is not None:
            body = _EMPTY_ENVELOPE if content_type.startswith(_ENVELOPE_TYPES) else b""
            PREDECODED.set((b"", method.request()))
        GATED.set(call)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _call(
        self, scope: Any, method: Method, headers: dict[str, str], content_type: str
    ) -> Call:
        host, port = scope.get("client") or ("", 0)
        transport = (
            "grpc-web" if content_type.startswith("application/grpc-web") else "connect"
        )
        return Call(
            method=method.path,
            headers=headers,
            peer=self.door.client_address(str(host), headers),
            connection=f"http:{host}:{port}",
            transport=transport,
        )

    async def _body(
        self, method: Method, headers: Mapping[str, str], receive: Any
    ) -> bytes | None:
        """The request's body, read up to its method's bound (None when the
        client went away)."""
        limit = method.limit
        declared = headers.get("content-length", "")
        if (
            limit > 0
            and declared.isascii()
            and declared.isdigit()
            and int(declared) > limit
        ):
            raise _too_large(int(declared), limit)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if limit > 0 and size > limit:
                raise _too_large(size, limit, more=True)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _predecode(self, payload: bytes, method: Method, values: int) -> None:
        """Decode a JSON request now, within ``values``: on the loop when it
        is small, else in a worker thread, one at a time (a thread decoding
        holds the interpreter's lock: two would keep the loop from it)."""
        if len(payload) <= DECODE_ON_LOOP_BYTES:
            message = decode_json(payload, method.request, values)
        else:
            async with self._decoders:
                loop = asyncio.get_running_loop()
                message = await loop.run_in_executor(
                    self.door.pool, decode_json, payload, method.request, values
                )
        PREDECODED.set((payload, message))

    async def _grpc_here(self, scope: Any, headers: dict[str, str], send: Any) -> None:
        """gRPC needs HTTP/2 and trailers: it is served on the gRPC port."""
        call = self._call(
            scope,
            Method(scope.get("path", ""), Message, 0),
            headers,
            "application/grpc",
        )
        call.transport = "grpc"
        message = (
            "gRPC needs HTTP/2: call the gRPC port, or use gRPC-Web or Connect here."
        )
        self.door.observer.record(
            call, scope.get("path", ""), ("UNIMPLEMENTED", "GRPC_NEEDS_HTTP2")
        )
        body = json.dumps(
            {"code": "unimplemented", "message": message}, separators=(",", ":")
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 415,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"grpc-status", b"12"),
                    (b"grpc-message", message.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _unknown(
        self, scope: Any, headers: dict[str, str], receive: Any, send: Any
    ) -> None:
        """A path under a service that names none of its methods: Connect's
        answer (404), with the door's access line and metric."""
        # Whatever the caller wrote, the metrics and the log name no more
        # than the service and "_OTHER" (a label per path would let anyone
        # grow the metrics without bound).
        service = "/".join(scope.get("path", "").split("/")[:2])
        path = f"{service}/_OTHER"
        call = self._call(
            scope, Method(path, Message, 0), headers, headers.get("content-type", "")
        )
        if _sanitized(scope["headers"]) != list(scope["headers"]):
            scope = {**scope, "headers": _sanitized(scope["headers"])}
        status: list[int] = []

        async def watched(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        await self.app(scope, receive, watched)
        self.door.observer.record(
            call, path, ("UNIMPLEMENTED", f"HTTP_{status[0] if status else 0}")
        )


def _too_large(size: int, limit: int, more: bool = False) -> ResourceExhausted:
    return ResourceExhausted(
        "REQUEST_TOO_LARGE",
        f"The request has {size}{' or more' if more else ''} bytes; the limit is "
        f"{limit}.",
    )


def _headers(scope: Any) -> tuple[dict[str, str], str]:
    """The request's headers (names in lower case, the first of each), and
    the name of one that is not UTF-8 ('' when all are)."""
    headers: dict[str, str] = {}
    bad = ""
    for raw_name, raw_value in scope.get("headers", ()):
        try:
            name = raw_name.decode("ascii").lower()
            value = raw_value.decode("utf-8")
        except UnicodeDecodeError:
            bad = bad or raw_name.decode("latin-1")[:40]
            continue
        headers.setdefault(name, value)
    return headers, bad


def _sanitized(raw: Any) -> list[tuple[bytes, bytes]]:
    """The headers without those that are not UTF-8 (which the Connect
    runtime would fail to decode)."""
    kept = []
    for name, value in raw:
        try:
            name.decode("ascii")
            value.decode("utf-8")
        except UnicodeDecodeError:
            continue
        kept.append((name, value))
    return kept


def _is_json(content_type: str) -> bool:
    return content_type.split(";")[0].strip().endswith("json")


def _payload(
    transport: str,
    content_type: str,
    headers: Mapping[str, str],
    body: bytes,
    method: Method,
) -> bytes | None:
    """The request message's bytes as its codec will see them (unwrapped
    from its envelope, decompressed within the method's bound); None when
    the gate leaves them to the runtime (an unknown compression)."""
    if content_type.startswith(_ENVELOPE_TYPES):
        kind = "grpc-web" if transport == "grpc-web" else "connect-stream"
        if len(body) < 5:
            return None  # the runtime says what is wrong with it
        flags = body[0]
        message = body[5 : 5 + int.from_bytes(body[1:5], "big")]
        compressed = bool(flags & 1)
    else:
        kind = "connect"
        message = body
        compressed = bool(body)
    encoding = headers.get(_COMPRESSION_HEADERS[kind], "").strip().lower() or "identity"
    if not compressed or encoding == "identity":
        if compressed and kind != "connect":
            raise InvalidArgument(
                "COMPRESSION_MISSING",
                "A message is marked compressed but the request names no "
                f"compression ({_COMPRESSION_HEADERS[kind]}).",
                _COMPRESSION_HEADERS[kind],
            )
        return message
    if encoding != "gzip":
        return None
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        inflated = inflater.decompress(message, method.limit + 1 if method.limit else 0)
    except zlib.error:
        raise InvalidArgument(
            "COMPRESSION_INVALID", "The request's gzip data is not valid.", ""
        ) from None
    if method.limit and len(inflated) > method.limit:
        raise _too_large(len(inflated), method.limit, more=True)
    return inflated


def decode_json(
    data: bytes, message_class: type[M], values: int = MAX_JSON_VALUES
) -> M:
    """A JSON request as its message: INVALID_ARGUMENT when it is not JSON,
    nests deeper than :data:`MAX_JSON_DEPTH`, holds more than ``values``
    values, or does not fit the message."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise _not_json(message_class, error) from None
    _bounded(value, values)
    message = message_class()
    try:
        json_format.ParseDict(value, message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as error:
        raise _not_json(message_class, error) from None
    return message


def _bounded(value: Any, values: int) -> None:
    """INVALID_ARGUMENT when a parsed JSON value nests too deep or holds
    too many values (walked without recursion)."""
    count = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        count += 1
        if count > values:
            raise InvalidArgument(
                "REQUEST_TOO_COMPLEX",
                f"The request holds more than {values} JSON values.",
            )
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            raise InvalidArgument(
                "REQUEST_TOO_DEEP", f"The request nests deeper than {MAX_JSON_DEPTH}."
            )
        pending.extend((child, depth + 1) for child in children)


def _not_json(message_class: type[Message], error: BaseException) -> InvalidArgument:
    return InvalidArgument(
        "MALFORMED_REQUEST",
        f"The request is not valid JSON for {message_class.DESCRIPTOR.full_name}: "
        f"{quote(str(error), 120)}",
    )
