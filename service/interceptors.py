"""Cross-cutting concerns of every RPC, in one place.

:class:`ErrorsAndLogging` gives each call a request id, binds it (and the
game id, when the request has one) to the structlog context, logs one line
per call, and turns any error into a gRPC status via
:func:`service.errors.classify` — the single mapping from errors to codes.
Anything unclassified is a bug: it is logged with its traceback and answered
INTERNAL without details.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import structlog
from grpc_status import rpc_status

from service.errors import classify, to_status

log = structlog.get_logger("strata.rpc")


def _abort(context: grpc.ServicerContext, error: BaseException, method: str) -> None:
    classified = classify(error)
    if classified is None:
        log.exception("rpc.internal_error", method=method)
        context.abort(grpc.StatusCode.INTERNAL, "internal error")
        return
    code, reason, message, field = classified
    log.info("rpc.refused", method=method, code=code.name, reason=reason)
    context.abort_with_status(
        rpc_status.to_status(to_status(code, reason, message, field))
    )


class ErrorsAndLogging(grpc.ServerInterceptor):  # type: ignore[misc]
    """Request ids, structured logs and error mapping for every RPC."""

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        if not method.startswith("/strata."):
            return handler
        if handler.unary_unary is not None:
            inner_unary = handler.unary_unary

            def unary(request: Any, context: grpc.ServicerContext) -> Any:
                with _bound(request, context, method) as started:
                    try:
                        response = inner_unary(request, context)
                    except Exception as error:
                        _abort(context, error, method)
                        raise
                    log.debug("rpc.ok", method=method, ms=_ms(started))
                    return response

            return grpc.unary_unary_rpc_method_handler(
                unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            def stream(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
                with _bound(request, context, method):
                    try:
                        yield from inner_stream(request, context)
                    except Exception as error:
                        _abort(context, error, method)
                        raise

            return grpc.unary_stream_rpc_method_handler(
                stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


class _bound:
    """Bind request id, method and game id to the log context of this call."""

    def __init__(
        self, request: Any, context: grpc.ServicerContext, method: str
    ) -> None:
        metadata = dict(context.invocation_metadata() or ())
        self.request_id = str(metadata.get("x-request-id") or uuid.uuid4().hex)
        self.game_id = getattr(request, "game_id", "") or ""
        self.method = method

    def __enter__(self) -> float:
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(
            request_id=self.request_id, method=self.method, game_id=self.game_id
        )
        return time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        structlog.contextvars.clear_contextvars()


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
