"""Connect and gRPC-Web for the door's handlers: the translation, nothing else.

For every Strata service, the ASGI application ``protoc-gen-connectrpc``
generated (``strata/v1/*_connect.py``, on the official Connect runtime,
``connectrpc``), given an implementation whose every method turns the
request's context into a :class:`~service.door.Call`, runs the door's
handler for it (the same one gRPC runs), and turns a
:class:`~service.errors.Refusal` into a ``ConnectError`` with the same
code, message and ``google.rpc`` details (``ErrorInfo`` with the stable
reason; ``BadRequest`` for malformed input). The Connect protocol (JSON and
binary, unary and server streams) and gRPC-Web are both served by these
applications; the runtime tells them apart by content type.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, TypeVar

from connectrpc.code import Code as ConnectCode
from connectrpc.compression.gzip import GzipCompression
from connectrpc.errors import ConnectError, ErrorDetail
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import DecodeError, Message
from protobuf.wkt import Any as AnyDetail
from strata.v1 import (
    admin_service_connect,
    game_service_connect,
    integration_service_connect,
)
from strata.v1.game_service_pb2 import WatchGameResponse

from service.door import Call, Door
from service.errors import Code, InvalidArgument, Refusal, details
from service.gate import GATED, PREDECODED, Gate, Method, decode_json
from service.inputs import quote
from service.sharing import ByIdentity

M = TypeVar("M", bound=Message)

ADMIN_SERVICE = "strata.v1.AdminService"

#: The generated ASGI application of each service.
APPLICATIONS: dict[str, Any] = {
    "strata.v1.GameService": game_service_connect.GameServiceASGIApplication,
    ADMIN_SERVICE: admin_service_connect.AdminServiceASGIApplication,
    "strata.v1.IntegrationService": (
        integration_service_connect.IntegrationServiceASGIApplication
    ),
}

_CODES: dict[Code, ConnectCode] = {
    code: ConnectCode[code.name.replace("CANCELLED", "CANCELED")]
    for code in Code
    if code is not Code.OK
}


class JsonCodec:
    """The Connect JSON codec on google.protobuf's JSON mapping: compact, and
    any request it cannot read (bad JSON, nesting or values past the
    bounds of :func:`~service.gate.decode_json`, a field of the wrong
    type) is INVALID_ARGUMENT, never an error of the server. A request the
    gate decoded already (:data:`~service.gate.PREDECODED`) is not
    decoded again."""

    def name(self) -> str:
        return "json"

    def __init__(self) -> None:
        self._shared = _SharedEncodings(_json)

    def encode(self, message: Message) -> bytes:
        if type(message) is WatchGameResponse:
            return self._shared.encode(message)
        return _json(message)

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> M:
        payload = bytes(data)
        predecoded = PREDECODED.get()
        if predecoded is not None and predecoded[0] == payload:
            message = predecoded[1]
            if isinstance(message, message_class):
                return message
        try:
            return decode_json(payload, message_class)
        except InvalidArgument as error:
            return _refused(error, message_class)


def _json(message: Message) -> bytes:
    return json_format.MessageToJson(message, indent=None).encode()


#: The encodings of shared answers (the bytes objects themselves, kept
#: while cached), so that compression can tell them from the rest.
_SHARED_BYTES: ByIdentity[bool] = ByIdentity()


class _SharedEncodings:
    """Watchers' answers encoded: one answer is shared by every watcher who
    sees alike (service.sharing), so it is encoded once, and compressed
    once (:class:`SharedGzip`)."""

    def __init__(self, encode: Callable[[Message], bytes]) -> None:
        self._encode = encode
        self._encoded: ByIdentity[bytes] = ByIdentity()

    def encode(self, message: Message) -> bytes:
        encoded = self._encoded.get(message)
        if encoded is None:
            encoded = self._encoded.put(message, self._encode(message))
            _SHARED_BYTES.put(encoded, True)
        return encoded


class SharedGzip(GzipCompression):
    """gzip, compressing a shared answer's encoding once for all its
    watchers (the rest as they come)."""

    def __init__(self) -> None:
        super().__init__()
        self._compressed: ByIdentity[bytes] = ByIdentity()

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        if _SHARED_BYTES.get(data) is None:
            return super().compress(data)
        compressed = self._compressed.get(data)
        if compressed is None:
            compressed = self._compressed.put(data, super().compress(data))
        return compressed


def _binary(message: Message) -> bytes:
    return message.SerializeToString()


class BinaryCodec:
    """The Connect binary codec: bytes that do not parse are INVALID_ARGUMENT."""

    def name(self) -> str:
        return "proto"

    def __init__(self) -> None:
        self._shared = _SharedEncodings(_binary)

    def encode(self, message: Message) -> bytes:
        if type(message) is WatchGameResponse:
            return self._shared.encode(message)
        return message.SerializeToString()

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> M:
        try:
            return message_class.FromString(bytes(data))
        except (DecodeError, ValueError, RecursionError) as error:
            return _refused(
                InvalidArgument(
                    "MALFORMED_REQUEST",
                    f"The request is not a valid message: {quote(str(error))}",
                ),
                message_class,
            )


def _refused(error: InvalidArgument, message_class: type[M]) -> M:
    """A request that cannot be decoded: refused by the door (with its
    access line and metrics) when the gate admitted the call, else by the
    runtime."""
    call = GATED.get()
    if call is None:
        raise ConnectError(ConnectCode.INVALID_ARGUMENT, error.message)
    call.refused = error
    return message_class()


CODECS = (BinaryCodec(), JsonCodec())
#: What a Connect or gRPC-Web client may ask its answers compressed with
#: (the runtime's default, gzip, with shared answers compressed once).
COMPRESSIONS = (SharedGzip(),)


def applications(
    door: Door,
    services: Iterable[tuple[ServiceDescriptor, object]],
    read_max_bytes: int,
) -> dict[str, Any]:
    """The ASGI application of each service, behind the HTTP edge's
    :class:`~service.gate.Gate`, by its path prefix
    (``/strata.v1.GameService/``)."""
    apps: dict[str, Any] = {}
    for service, servicer in services:
        app = APPLICATIONS[service.full_name](
            _Implementation(door, service, servicer),
            read_max_bytes=read_max_bytes,
            codecs=CODECS,
            compressions=COMPRESSIONS,
        )
        apps[f"/{service.full_name}/"] = Gate(app, door, methods_of(door, service))
    return apps


def methods_of(door: Door, service: ServiceDescriptor) -> dict[str, Method]:
    """What the gate knows of each of ``service``'s methods, by path."""
    admin_only = service.full_name == ADMIN_SERVICE
    methods = {}
    for method in service.methods:
        path = f"/{service.full_name}/{method.name}"
        methods[path] = Method(
            path,
            message_factory.GetMessageClass(method.input_type),
            door.limits.request_limit(path),
            admin_only,
            streaming=method.server_streaming,
        )
    return methods


def snake_case(name: str) -> str:
    """``ListGameTypes`` -> ``list_game_types`` (the generated method names)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class _Implementation:
    """The methods a generated application calls (``list_game_types(request,
    ctx)``), each running the door's handler of the servicer's method."""

    def __init__(
        self, door: Door, service: ServiceDescriptor, servicer: object
    ) -> None:
        for method in service.methods:
            path = f"/{service.full_name}/{method.name}"
            handler = getattr(servicer, method.name)
            if method.server_streaming:
                setattr(self, snake_case(method.name), _streaming(door, path, handler))
            else:
                setattr(self, snake_case(method.name), _unary(door, path, handler))


def _unary(door: Door, path: str, handler: Any) -> Any:
    run = door.unary(path, handler)

    async def unary(request: Any, ctx: Any) -> Any:
        call = call_of(door, path, ctx)
        try:
            return await run(request, call)
        except Refusal as refusal:
            raise connect_error(refusal) from None
        finally:
            _respond_with(call, ctx)

    return unary


def _streaming(door: Door, path: str, handler: Any) -> Any:
    run = door.stream(path, handler)

    async def streaming(request: Any, ctx: Any) -> AsyncIterator[Any]:
        call = call_of(door, path, ctx)
        _respond_with(call, ctx)
        try:
            async for response in run(request, call):
                yield response
        except Refusal as refusal:
            raise connect_error(refusal) from None

    return streaming


def call_of(door: Door, method: str, ctx: Any) -> Call:
    """The :class:`Call` of a Connect or gRPC-Web request's context: the
    one the gate admitted (same task), with the request's deadline."""
    timeout_ms = ctx.timeout_ms
    deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000

    def time_remaining() -> float | None:
        return None if deadline is None else deadline - time.monotonic()

    gated = GATED.get()
    if gated is not None and gated.method == method:
        gated.time_remaining = time_remaining
        return gated
    headers: dict[str, str] = {}
    for key, value in ctx.request_headers.allitems():
        headers.setdefault(key.lower(), value)
    content_type = headers.get("content-type", "")
    transport = (
        "grpc-web" if content_type.startswith("application/grpc-web") else "connect"
    )
    client = ctx.client_address or ""
    return Call(
        method=method,
        headers=headers,
        peer=door.client_address(client.rpartition(":")[0] or client, headers),
        connection=f"http:{client}",
        transport=transport,
        time_remaining=time_remaining,
    )


def connect_error(refusal: Refusal) -> ConnectError:
    """A refusal as Connect's error, with its ``google.rpc`` details."""
    return ConnectError(
        _CODES[refusal.code],
        refusal.message,
        details=[
            ErrorDetail(
                AnyDetail(
                    type_url="type.googleapis.com/" + detail.DESCRIPTOR.full_name,
                    value=detail.SerializeToString(),
                )
            )
            for detail in details(refusal)
        ],
    )


def _respond_with(call: Call, ctx: Any) -> None:
    headers = ctx.response_headers
    for key, value in call.response_headers.items():
        headers[key] = value
