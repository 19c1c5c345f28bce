"""Cross-cutting concerns of every RPC, in one place.

The server is a ``grpc.aio`` server: handlers that are coroutines run on its
event loop; plain functions and generators (most of the servicers: they call
the synchronous store) run in a worker thread pool. One interceptor,
:class:`Door`, wraps every handler in three concerns, outermost first:

- :class:`ErrorsAndLogging` gives each call a request id, binds it (and the
  game id, when the request has one) to the structlog context, logs one line
  per call, and turns any error into a gRPC status via
  :func:`service.errors.classify`, the single mapping from errors to codes.
  Anything unclassified is a bug: it is logged with its traceback and
  answered INTERNAL without details.
- :class:`service.limits.Limits`: rate, concurrency and size limits.
- :class:`InThreads` turns a synchronous handler into a coroutine that runs
  it in the pool, handing it a :class:`ThreadContext` (the part of the call's
  context a thread may use).

A method's handler is wrapped once and the wrapper reused: the wrappers hold
nothing of a single call.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Executor
from typing import Any, TypeAlias

import grpc
import structlog
from grpc_status import rpc_status

from service.errors import classify, to_status

log = structlog.get_logger("strata.rpc")

Continuation: TypeAlias = Callable[
    [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]
]
AioContext: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class Door(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """The server's one interceptor: it wraps each method's handler in the
    :class:`HandlerWrapper` s given (outermost first), once per method, so
    a call pays for one interception however many concerns there are."""

    def __init__(self, *wrappers: HandlerWrapper) -> None:
        self.wrappers = wrappers
        self._wrapped: dict[
            str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]
        ] = {}

    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return None
        method: str = details.method
        known = self._wrapped.get(method)
        if known is not None and known[0] is handler:
            return known[1]
        wrapped = handler
        for wrapper in reversed(self.wrappers):
            if not wrapper.strata_only or method.startswith("/strata."):
                wrapped = wrapper.wrap(method, wrapped)
        self._wrapped[method] = (handler, wrapped)
        return wrapped


class HandlerWrapper:
    """One concern around every handler of Strata's methods (or of every
    method), applied by :class:`Door`."""

    #: Only methods of the ``strata.*`` services (health and reflection are
    #: left alone).
    strata_only = True

    def wrap(
        self, method: str, handler: grpc.RpcMethodHandler
    ) -> grpc.RpcMethodHandler:
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self.unary(method, handler.unary_unary),
                request_deserializer=self.deserializer(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self.stream(method, handler.unary_stream),
                request_deserializer=self.deserializer(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        return handler  # no Strata method streams its requests

    def deserializer(
        self, deserialize: Callable[[bytes], Any] | None
    ) -> Callable[[bytes], Any] | None:
        return deserialize

    def unary(
        self, method: str, inner: Callable[..., Any]
    ) -> Callable[[Any, AioContext], Awaitable[Any]]:
        raise NotImplementedError

    def stream(
        self, method: str, inner: Callable[..., Any]
    ) -> Callable[[Any, AioContext], AsyncIterator[Any]]:
        raise NotImplementedError


# -- errors and logging -----------------------------------------------------------


async def _abort(context: AioContext, error: BaseException, method: str) -> None:
    classified = classify(error)
    if classified is None:
        log.error("rpc.internal_error", method=method, exc_info=error)
        await context.abort(grpc.StatusCode.INTERNAL, "internal error")
        return
    code, reason, message, field = classified
    log.info("rpc.refused", method=method, code=code.name, reason=reason)
    status = rpc_status.to_status(to_status(code, reason, message, field))
    await context.abort(status.code, status.details, status.trailing_metadata)


class ErrorsAndLogging(HandlerWrapper):
    """Request ids, structured logs and error mapping for every RPC."""

    def unary(
        self, method: str, inner: Callable[..., Any]
    ) -> Callable[[Any, AioContext], Awaitable[Any]]:
        async def unary(request: Any, context: AioContext) -> Any:
            with _bound(request, context, method) as started:
                try:
                    response = await inner(request, context)
                except grpc.aio.AbortError:
                    raise
                except Exception as error:
                    await _abort(context, error, method)
                    raise
                log.debug("rpc.ok", method=method, ms=_ms(started))
                return response

        return unary

    def stream(
        self, method: str, inner: Callable[..., Any]
    ) -> Callable[[Any, AioContext], AsyncIterator[Any]]:
        async def stream(request: Any, context: AioContext) -> AsyncIterator[Any]:
            with _bound(request, context, method):
                try:
                    async for response in inner(request, context):
                        yield response
                except grpc.aio.AbortError:
                    raise
                except Exception as error:
                    await _abort(context, error, method)
                    raise

        return stream


class _bound:
    """Bind request id, method and game id to the log context of this call
    (context variables: each call's task has its own)."""

    def __init__(self, request: Any, context: AioContext, method: str) -> None:
        self.request_id = ""
        for key, value in context.invocation_metadata() or ():
            if key == "x-request-id":
                self.request_id = str(value)
        # Bound before it is checked (service.inputs): a log line never holds
        # more than a short prefix of what a caller sent.
        self.request_id = self.request_id[:128] or _next_request_id()
        self.game_id = str(getattr(request, "game_id", "") or "")[:64]
        self.method = method

    def __enter__(self) -> float:
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(
            request_id=self.request_id, method=self.method, game_id=self.game_id
        )
        return time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        structlog.contextvars.clear_contextvars()


#: Request ids made here: this process's random prefix and a counter (unique
#: enough to find a call's log lines, and no system call per call).
_REQUEST_IDS = itertools.count(1)
_REQUEST_ID_PREFIX = uuid.uuid4().hex[:12]


def _next_request_id() -> str:
    return f"{_REQUEST_ID_PREFIX}-{next(_REQUEST_IDS):x}"


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


# -- synchronous handlers in threads ----------------------------------------------


class ThreadContext:
    """What a synchronous handler, running in a worker thread, may use of
    its call's context: the metadata, the peer and the deadline. (A handler
    that waits for something belongs on the event loop, where the call's
    end cancels it: ``WatchGame``, ``FollowLog``.)"""

    def __init__(self, context: AioContext) -> None:
        self._context = context

    def invocation_metadata(self) -> Any:
        return self._context.invocation_metadata()

    def peer(self) -> str:
        return str(self._context.peer())

    def time_remaining(self) -> float | None:
        remaining = self._context.time_remaining()
        return None if remaining is None else float(remaining)


_END = object()


class InThreads(HandlerWrapper):
    """Runs synchronous handlers (of every service) in ``pool``; coroutine
    handlers are left to the event loop."""

    strata_only = False

    def __init__(self, pool: Executor) -> None:
        super().__init__()
        self.pool = pool

    def wrap(
        self, method: str, handler: grpc.RpcMethodHandler
    ) -> grpc.RpcMethodHandler:
        behaviour = handler.unary_unary or handler.unary_stream
        if inspect.iscoroutinefunction(behaviour) or inspect.isasyncgenfunction(
            behaviour
        ):
            return handler
        return super().wrap(method, handler)

    def unary(
        self, method: str, inner: Callable[..., Any]
    ) -> Callable[[Any, AioContext], Awaitable[Any]]:
        pool = self.pool

        async def unary(request: Any, context: AioContext) -> Any:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                pool, inner, request, ThreadContext(context)
            )

        return unary

    def stream(
        self, method: str, inner: Callable[..., Any]
    ) -> Callable[[Any, AioContext], AsyncIterator[Any]]:
        pool = self.pool

        async def stream(request: Any, context: AioContext) -> AsyncIterator[Any]:
            thread_context = ThreadContext(context)
            responses = _Responses(lambda: inner(request, thread_context))
            loop = asyncio.get_running_loop()
            try:
                while True:
                    response = await loop.run_in_executor(pool, responses.next)
                    if response is _END:
                        return
                    yield response
            finally:
                # Let the generator clean up (its finally blocks) in a thread;
                # a pool already shut down (the server stopping) has none.
                with contextlib.suppress(RuntimeError):
                    pool.submit(responses.close)

        return stream


class _Responses:
    """A synchronous handler's responses, made and stepped in worker
    threads, one step at a time, and closed after the last."""

    def __init__(self, start: Callable[[], Iterator[Any]]) -> None:
        self._start = start
        self._responses: Iterator[Any] | None = None
        self._lock = threading.Lock()

    def next(self) -> Any:
        with self._lock:
            if self._responses is None:
                self._responses = iter(self._start())
            return next(self._responses, _END)

    def close(self) -> None:
        with self._lock:
            close = getattr(self._responses, "close", None)
            if close is not None:
                close()
