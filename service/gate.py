"""The gate in front of Connect and gRPC-Web: what a request may cost before
the service decodes it.

:class:`Gate` builds the call's :class:`~service.door.Call`, takes the
caller's rates (connection, address, token) before reading a byte of the
body, refuses a body longer than its method's bound from its
``Content-Length`` or as soon as it grows past it (a gzip body as it
inflates), an admin-only call without the admin token before its body, a
compressed message that names no compression, headers that are not UTF-8,
and gRPC (HTTP/2 only) on this HTTP/1.1 port, and decodes JSON within
:data:`MAX_JSON_VALUES` values and :data:`MAX_JSON_DEPTH` levels, a large
request in a worker thread, one at a time, so that no request's decoding
holds the event loop gRPC and health share. A refusal it makes is still
answered by the Connect runtime in the caller's protocol, through the door
(an access line and the RPC metrics): the gate hands the runtime an empty
request and the door refuses the call before its handler.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import json
import zlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from service.door import Call, Door
from service.errors import InvalidArgument, PermissionDenied, ResourceExhausted
from service.inputs import quote

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]
M = TypeVar("M", bound=Message)

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
    #: It answers with a stream (its messages are gathered: :class:`_Gathered`).
    streaming: bool = False


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

        answer = _Answer(send)
        await self.app(scope, replay, _sender(method, call, answer))
        if not call.request_id:
            # The runtime answered before the door saw the call (a content
            # type it does not serve, a malformed protocol header): still
            # a call, with its access line and metric.
            self.door.observer.record(call, method.path, answer.outcome())

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
        path = self._named(scope.get("path", ""))
        call = self._call(scope, Method(path, Message, 0), headers, "application/grpc")
        call.transport = "grpc"
        message = (
            "gRPC needs HTTP/2: call the gRPC port, or use gRPC-Web or Connect here."
        )
        self.door.observer.record(call, path, ("UNIMPLEMENTED", "GRPC_NEEDS_HTTP2"))
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

    def _named(self, path: str) -> str:
        """The name a call's metrics and log give ``path``: itself when it is
        one of the service's methods, else no more than the service (when it
        is one of ours) and ``_OTHER``: whatever the caller wrote, a label
        per path would let anyone grow the metrics without bound."""
        if path in self.methods:
            return path
        service = "/".join(path.split("/")[:2])
        ours = any(known.startswith(f"{service}/") for known in self.methods)
        return f"{service}/_OTHER" if ours else "/_OTHER"

    async def _unknown(
        self, scope: Any, headers: dict[str, str], receive: Any, send: Any
    ) -> None:
        """A path that names none of the service's methods (or a service
        not here): Connect's answer (404), with the door's access line and
        metric."""
        path = self._named(scope.get("path", ""))
        call = self._call(
            scope, Method(path, Message, 0), headers, headers.get("content-type", "")
        )
        if _sanitized(scope["headers"]) != list(scope["headers"]):
            scope = {**scope, "headers": _sanitized(scope["headers"])}
        answer = _Answer(send)
        await self.app(scope, receive, answer.send)
        self.door.observer.record(call, path, answer.outcome("UNIMPLEMENTED"))


#: The code of a call the Connect runtime answered by itself, by the HTTP
#: status it answered with (Connect's own mapping, read backwards): what a
#: client sent wrong is never INTERNAL.
_CODES_OF_STATUS = {
    400: "INVALID_ARGUMENT",
    404: "UNIMPLEMENTED",
    405: "UNIMPLEMENTED",
    408: "DEADLINE_EXCEEDED",
    413: "RESOURCE_EXHAUSTED",
    415: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
}


class _Answer:
    """The status an ASGI application answers with, on its way out."""

    def __init__(self, send: Any) -> None:
        self._send = send
        self.status = 0

    async def send(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        await self._send(message)

    def outcome(self, code: str = "") -> tuple[str, str]:
        """(code, reason): ``code``, else the status's; ``HTTP_<status>``."""
        code = code or _CODES_OF_STATUS.get(self.status, "UNKNOWN")
        return code, f"HTTP_{self.status}"


def _sender(method: Method, call: Call, answer: _Answer) -> Any:
    """The ASGI ``send`` the runtime answers ``call`` through: a stream's
    gathers its messages (:class:`_Gathered`, flushed by the door)."""
    if not method.streaming:
        return answer.send
    gathered = _Gathered(answer.send)
    call.flush = gathered.flush
    return gathered.send


#: The most bytes of a stream's messages held back for one write.
GATHER_BYTES = 64 * 1024


class _Gathered:
    """A stream's messages, held back while the door has the next one ready
    and sent in one piece when it has none (its :attr:`Call.flush`), when
    :data:`GATHER_BYTES` are held, or with the stream's end. Over HTTP/1.1
    every watcher has a connection of its own, and each piece is a write
    into it made with the event loop held: the events of one command reach
    a watcher in one write, not one write each (gRPC's core gathers the
    same way, off the loop)."""

    def __init__(self, send: Any) -> None:
        self._send = send
        self._held: list[bytes] = []
        self._size = 0

    async def send(self, message: Any) -> None:
        if message["type"] != "http.response.body":
            await self.flush()
        elif message.get("more_body", False):
            body = message.get("body", b"")
            self._held.append(body)
            self._size += len(body)
            if self._size >= GATHER_BYTES:
                await self.flush()
            return
        elif self._held:
            message = {**message, "body": self._take() + message.get("body", b"")}
        await self._send(message)

    async def flush(self) -> None:
        """Send what is held (nothing when nothing is)."""
        if self._held:
            body = self._take()
            await self._send(
                {"type": "http.response.body", "body": body, "more_body": True}
            )

    def _take(self) -> bytes:
        held = self._held
        self._held, self._size = [], 0
        return held[0] if len(held) == 1 else b"".join(held)


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
