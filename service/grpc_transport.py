"""gRPC (HTTP/2) for the door's handlers: the translation, nothing else.

For every method of every Strata service, a ``grpc.aio`` method handler
that turns the call's context into a :class:`~service.door.Call`, runs the
door's handler for it, and turns a :class:`~service.errors.Refusal` into a
gRPC status with its ``google.rpc`` details (``grpc-status-details-bin``).
Requests are decoded leniently (undecodable bytes reach the door, which
answers INVALID_ARGUMENT rather than gRPC's INTERNAL).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from grpc_status import rpc_status

from service.addresses import canonical
from service.door import Call, Door
from service.errors import Code, Refusal, to_status
from service.inputs import quote
from service.limits import tolerant

AioContext = Any  # grpc.aio.ServicerContext


def handlers(
    door: Door, services: Iterable[tuple[ServiceDescriptor, object]]
) -> list[grpc.GenericRpcHandler]:
    """A generic handler for each (service, servicer): every method of the
    service, to the servicer's method of the same name, through ``door``."""
    out = []
    for service, servicer in services:
        methods = {
            method.name: _method_handler(door, service, method, servicer)
            for method in service.methods
        }
        out.append(grpc.method_handlers_generic_handler(service.full_name, methods))
    return out


class UnknownMethods:
    """Every method no other handler serves (added last): answered
    UNIMPLEMENTED ``UNKNOWN_METHOD`` as gRPC would, but with the door's
    access line and metric, as every other call. The method is named in
    them as ``<service>/_OTHER`` for Strata's services, ``_OTHER`` for any
    other (a label per name would let any caller grow the metrics)."""

    def __init__(self, door: Door, services: Iterable[str]) -> None:
        self.door = door
        self.services = frozenset(services)

    def service(self, handler_call_details: Any) -> grpc.RpcMethodHandler:
        """gRPC's generic handler's one method (a duck: grpc's base class
        has no types)."""
        asked = str(handler_call_details.method)
        service = asked.strip("/").partition("/")[0]
        path = f"/{service}/_OTHER" if service in self.services else "/_OTHER"
        refusal = Refusal(
            Code.UNIMPLEMENTED,
            "UNKNOWN_METHOD",
            f"No method {quote(asked[:200])} here.",
        )

        async def unknown(requests: AsyncIterator[bytes], context: AioContext) -> None:
            call = call_of(self.door, path, context)
            self.door.observer.record(call, path, (refusal.code.name, refusal.reason))
            await abort(context, call, refusal)

        # A stream both ways answers whatever the caller thinks it calls,
        # without reading a byte of its request.
        return grpc.stream_stream_rpc_method_handler(unknown)


def message_class(descriptor: Any) -> Any:
    return message_factory.GetMessageClass(descriptor)


def _method_handler(
    door: Door, service: ServiceDescriptor, method: MethodDescriptor, servicer: object
) -> grpc.RpcMethodHandler:
    path = f"/{service.full_name}/{method.name}"
    implementation = getattr(servicer, method.name)
    # Bytes past the method's bound are never parsed.
    deserialize = tolerant(
        message_class(method.input_type).FromString, door.limits.request_limit(path)
    )
    serialize = message_class(method.output_type).SerializeToString
    if method.server_streaming:
        stream = door.stream(path, implementation)

        async def streaming(request: Any, context: AioContext) -> AsyncIterator[Any]:
            call = call_of(door, path, context)
            try:
                async for response in stream(request, call):
                    yield response
            except Refusal as refusal:
                await abort(context, call, refusal)

        return grpc.unary_stream_rpc_method_handler(
            streaming, request_deserializer=deserialize, response_serializer=serialize
        )
    unary = door.unary(path, implementation)

    async def answer(request: Any, context: AioContext) -> Any:
        call = call_of(door, path, context)
        try:
            response = await unary(request, call)
        except Refusal as refusal:
            await abort(context, call, refusal)
        context.set_trailing_metadata(tuple(call.response_headers.items()))
        return response

    return grpc.unary_unary_rpc_method_handler(
        answer, request_deserializer=deserialize, response_serializer=serialize
    )


def call_of(door: Door, method: str, context: AioContext) -> Call:
    """The :class:`Call` of a gRPC call's context."""
    headers: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if not key.endswith("-bin"):
            headers.setdefault(key, str(value))
    peer = str(context.peer() or "")

    def time_remaining() -> float | None:
        remaining = context.time_remaining()
        return None if remaining is None else float(remaining)

    return Call(
        method=method,
        headers=headers,
        peer=door.client_address(address_of(peer), headers),
        connection=peer,
        transport="grpc",
        time_remaining=time_remaining,
        done=context.done,
    )


def address_of(peer: str) -> str:
    """The host part of a gRPC peer string, canonical (``ipv4:10.0.0.7:53211``
    -> ``10.0.0.7``; ``ipv6:[::1]:53211`` -> ``::1``;
    ``ipv6:[::ffff:10.0.0.7]:53211`` -> ``10.0.0.7``)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6" and rest.startswith("["):
        return canonical(rest[1:].partition("]")[0])
    if kind == "ipv4":
        return canonical(rest.rpartition(":")[0] or rest)
    return peer


async def abort(context: AioContext, call: Call, refusal: Refusal) -> None:
    """End the call with ``refusal`` as its gRPC status."""
    status = rpc_status.to_status(to_status(refusal))
    metadata = tuple(status.trailing_metadata) + tuple(call.response_headers.items())
    await context.abort(status.code, status.details, metadata)
