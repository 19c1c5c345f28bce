"""The door every call comes through, whatever carried it.

A transport (:mod:`service.grpc_transport`, :mod:`service.connect_transport`)
turns its own call into a :class:`Call` and hands it, with the decoded
request, to the handler :class:`Door` made for the method. The door does, in
this order and once for every transport:

- gives the call a request id (the caller's ``x-request-id``, or a new one),
  binds it, the method and the game id to the log context, and logs one
  access line when the call ends;
- admits it (:class:`service.limits.Limits`): clean input, sizes, rates,
  concurrency, stream slots;
- runs the handler: coroutines on the event loop, plain functions and
  generators (most of the servicers: they call the synchronous store) in
  the worker pool;
- classifies any error (:func:`service.errors.classify`) into the
  :class:`~service.errors.Refusal` the transport sends; anything
  unclassified is a bug, logged with its traceback, answered INTERNAL.

Handlers are the servicers' methods, ``(request, call) -> response`` (or an
iterator of responses for a stream): they never see a transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import inspect
import itertools
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from concurrent.futures import Executor
from typing import Any, TypeAlias

import structlog
from opentelemetry import context as context_api
from opentelemetry import propagate, trace

from service import telemetry
from service.addresses import TrustedProxies, canonical
from service.calls import Call
from service.errors import (
    INTERNAL,
    Code,
    DeadlineExceeded,
    Refusal,
    Unavailable,
    classify,
)
from service.inputs import check_request
from service.limits import Limits
from service.streams import StreamSlot

log = structlog.get_logger("strata.rpc")

Handler: TypeAlias = Callable[[Any, "Call"], Any]

Unary: TypeAlias = Callable[[Any, "Call"], Awaitable[Any]]
Stream: TypeAlias = Callable[[Any, "Call"], AsyncIterator[Any]]


class Door:
    """Makes, once per method, the handler every transport calls."""

    def __init__(
        self,
        limits: Limits,
        pool: Executor,
        access_log: str = "all",
        position: Callable[[], int] = lambda: 0,
        proxies: TrustedProxies | None = None,
        seated: Callable[[str, str], bool] = lambda token, game_id: False,
        store_timeout: float = 0.0,
        reads_after: Callable[[int], None] = lambda position: None,
    ) -> None:
        """``access_log``: ``all`` (a line per call), ``errors`` (a line per
        call that did not end OK) or ``off``. ``position``: the highest
        position of the log the service knows (the store's), sent back as
        ``strata-position`` (see :func:`read_after`). ``proxies``: the
        reverse proxies whose ``X-Forwarded-For`` names the client.
        ``seated(token, game_id)``: whether ``token`` holds a seat of the
        game (a stream of a seat's player outranks anonymous streams; a
        made-up token does not); called in the pool. ``store_timeout``: the
        longest a unary call may wait (on the database) before it is
        answered UNAVAILABLE ``STORE_TIMEOUT`` (0: no bound).
        ``reads_after(position)``: the use cases' setter of the position the
        call's reads must show (its ``strata-read-after``), called in the
        call's context before the handler runs."""
        self.limits = limits
        self.pool = pool
        self.observer = Observer(access_log)
        self.position = position
        self.proxies = proxies or TrustedProxies()
        self.seated = seated
        self.store_timeout = store_timeout
        self.reads_after = reads_after
        #: Set when the service shuts down: new calls are refused.
        self.stopping = False
        #: Checks of large requests run in the pool, one at a time.
        self._heavy = asyncio.Semaphore(1)

    def stop(self) -> None:
        """The service is shutting down: refuse new calls (UNAVAILABLE
        ``SHUTTING_DOWN``) and end every open stream with that status now."""
        self.stopping = True
        self.limits.streams.stop_all()

    def client_address(self, peer: str, headers: Mapping[str, str]) -> str:
        """Who a call comes from: its connection's address (canonical), or
        behind a trusted proxy the client the proxy names."""
        return self.proxies.client(canonical(peer), headers)

    def unary(self, method: str, handler: Handler) -> Unary:
        """The door's handler of a unary method: ``(request, call) ->
        response``; raises :class:`Refusal`."""
        run = self._runner(handler)
        limits = self.limits

        observer = self.observer

        position = self.position

        async def unary(request: Any, call: Call) -> Any:
            with observer.call(request, call, method, current=True) as outcome:
                try:
                    if call.refused is not None:
                        raise call.refused
                    if self.stopping:
                        raise SHUTTING_DOWN
                    await self._check_input(request, call)
                    with limits.admit(request, call, checked=True):
                        self.reads_after(read_after(call))
                        response = await self._bounded(run(request, call), call)
                except asyncio.CancelledError:
                    # The caller went away or its deadline passed: its answer,
                    # not a fault of the service.
                    outcome.code = (
                        Code.DEADLINE_EXCEEDED if call.expired() else Code.CANCELLED
                    )
                    raise
                except BaseException as error:
                    raise outcome.refused(error) from None
                outcome.names_game(getattr(response, "game_id", ""))
                known = position()
                if known:
                    call.response_headers[POSITION_HEADER] = str(known)
                return response

        return unary

    def stream(self, method: str, handler: Handler) -> Stream:
        """The door's handler of a server-streaming method: ``(request,
        call) -> async iterator of responses``; raises :class:`Refusal`."""
        iterate = self._iterator(handler)
        limits = self.limits

        observer = self.observer

        async def stream(request: Any, call: Call) -> AsyncIterator[Any]:
            with observer.call(request, call, method, current=False) as outcome:
                try:
                    if call.refused is not None:
                        raise call.refused
                    if self.stopping:
                        raise SHUTTING_DOWN
                    await self._check_input(request, call)
                    seated = await self._seated(request, call)
                    with limits.admit(
                        request, call, stream=True, seated=seated, checked=True
                    ) as slot:
                        self.reads_after(read_after(call))
                        responses = iterate(request, call)
                        within = outcome.context()
                        try:
                            while True:
                                response = await _next(responses, slot, within)
                                if response is _END:
                                    return
                                if call.done() or call.expired():
                                    return  # nobody is listening any more
                                yield response
                                outcome.sent += 1
                        finally:
                            await responses.aclose()  # type: ignore[attr-defined]
                except (asyncio.CancelledError, GeneratorExit):
                    outcome.code = (
                        Code.DEADLINE_EXCEEDED if call.expired() else Code.CANCELLED
                    )
                    raise
                except BaseException as error:
                    raise outcome.refused(error) from None

        return stream

    async def _check_input(self, request: Any, call: Call) -> None:
        """The request's checks before any of it is used, after the
        caller's rates (a refused caller costs no checking): its shape on
        the loop, its text (every string of it) in a worker thread, one at
        a time, when it is large (the loop answers everyone meanwhile)."""
        limits = self.limits
        if not call.rates_taken:
            limits.admit_caller(call)
        limits.check_shape(request, call)
        if request.ByteSize() <= CHECK_ON_LOOP_BYTES:
            check_request(request)
            return
        async with self._heavy:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self.pool, check_request, request)

    async def _bounded(self, work: Awaitable[Any], call: Call) -> Any:
        """``work``'s answer, or the refusal of a call that waited too long:
        DEADLINE_EXCEEDED once the caller's deadline passed, UNAVAILABLE
        ``STORE_TIMEOUT`` after ``store_timeout`` seconds (a database that
        hangs: the thread waiting on it is left to finish, the caller is
        answered)."""
        bound = self.store_timeout if self.store_timeout > 0 else None
        remaining = call.time_remaining()
        by_caller = remaining is not None and (bound is None or remaining < bound)
        timeout = max(remaining or 0.0, 0.0) if by_caller else bound
        if timeout is None:
            return await work
        try:
            return await asyncio.wait_for(work, timeout)
        except TimeoutError:
            if by_caller:
                raise DeadlineExceeded(
                    "DEADLINE_EXCEEDED", "The call's deadline passed."
                ) from None
            raise Unavailable(
                "STORE_TIMEOUT",
                f"The database did not answer within {bound:g} s; retry later "
                "(a command retried with the same command_id is applied once).",
            ) from None

    async def _seated(self, request: Any, call: Call) -> bool:
        """Whether the caller of a stream on a game holds a seat of it
        (looked up only for a token the limits do not know already)."""
        token = call.token
        game_id = getattr(request, "game_id", "")
        limits = self.limits
        if not (token and game_id) or limits.is_admin(token):
            return False
        if limits.is_integration(token):
            return False
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self.pool, self.seated, token, game_id)
        except Exception:  # the handler says what is wrong
            return False

    # -- running handlers ---------------------------------------------------

    def _runner(self, handler: Handler) -> Unary:
        """A coroutine running ``handler``: on the loop, or in the pool."""
        if inspect.iscoroutinefunction(handler):
            return handler
        pool = self.pool

        async def in_thread(request: Any, call: Call) -> Any:
            loop = asyncio.get_running_loop()
            # The call's context (its log fields, its span) goes with it.
            context = contextvars.copy_context()
            return await loop.run_in_executor(pool, context.run, handler, request, call)

        return in_thread

    def _iterator(self, handler: Handler) -> Stream:
        """An async iterator of ``handler``'s responses: on the loop, or
        stepped in the pool one response at a time."""
        if inspect.isasyncgenfunction(handler):
            return handler
        pool = self.pool

        async def in_threads(request: Any, call: Call) -> AsyncIterator[Any]:
            responses = _Responses(lambda: handler(request, call))
            loop = asyncio.get_running_loop()
            context = contextvars.copy_context()
            try:
                while True:
                    response = await loop.run_in_executor(
                        pool, context.run, responses.next
                    )
                    if response is _END:
                        return
                    yield response
            finally:
                # Let the generator clean up (its finally blocks) in a thread;
                # a pool already shut down (the server stopping) has none.
                with contextlib.suppress(RuntimeError):
                    pool.submit(responses.close)

        return in_threads


_END = object()

#: Requests at most this large are checked on the loop (quicker than a
#: thread's round trip); larger ones in the pool.
CHECK_ON_LOOP_BYTES = 4096

#: The answer to a call the service will not finish: it is stopping.
SHUTTING_DOWN = Refusal(
    Code.UNAVAILABLE,
    "SHUTTING_DOWN",
    "This server is shutting down: call again (another replica answers), and "
    "resume a stream from the last version or position you received.",
)


#: The response header with the highest log position the answering
#: replica knew when it answered (its own writes included).
POSITION_HEADER = "strata-position"
#: The request header a caller sends back with the highest
#: ``strata-position`` it was given: its reads show at least that much,
#: whichever replica (or standby behind it) answers them.
READ_AFTER_HEADER = "strata-read-after"


def read_after(call: Call) -> int:
    """The position the caller's reads must show (its ``strata-read-after``
    header; 0 when absent or not a number)."""
    value = call.headers.get(READ_AFTER_HEADER, "")
    # isascii: str.isdigit also accepts '²' and other digits int() refuses.
    return int(value) if value.isascii() and value.isdigit() and len(value) < 20 else 0


async def _next(
    responses: AsyncIterator[Any],
    slot: StreamSlot | None,
    within: contextvars.Context,
) -> Any:
    """The next response (``_END`` after the last), or the stream's shedding
    (a :class:`~service.errors.Refusal`) if it comes first. Each step runs
    in ``within``, the call's context with its span current: what a stream
    loads is a child of its call, never a span of its own."""

    async def step_once() -> Any:
        return await anext(responses, _END)

    step = asyncio.get_running_loop().create_task(step_once(), context=within)
    stopper = None if slot is None else slot.stopper
    if stopper is None:
        return await step
    if not step.done():
        try:
            await asyncio.wait((step, stopper), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The call ended: stop the step, and let it finish before the
            # responses are closed.
            step.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait((step,))
            raise
    if stopper.done() and slot is not None:
        step.cancel()
        with contextlib.suppress(BaseException):
            await step
        raise SHUTTING_DOWN if slot.stopped else slot.shed_refusal()
    return step.result()


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


# -- what is seen of a call: a log line, a span, the RPC metrics ------------------


class Observer:
    """The access log, the span and the RPC metrics of every call."""

    def __init__(self, access_log: str = "all") -> None:
        if access_log not in ("all", "errors", "off"):
            raise ValueError(f"access log {access_log!r}: use all, errors or off")
        self.access_log = access_log
        self.tracer = telemetry.tracer()
        meter = telemetry.meter()
        self.duration = meter.create_histogram(
            "rpc.server.call.duration",
            unit="s",
            description="Duration of RPCs served, by system, method and status "
            "(OpenTelemetry RPC conventions), every transport",
        )
        self.active = meter.create_up_down_counter(
            "strata.rpc.server.active_calls",
            description="Calls being served now, unary and streams, by method",
        )

    def call(self, request: Any, call: Call, method: str, current: bool) -> _Observed:
        return _Observed(self, request, call, method, current)

    def record(self, call: Call, method: str, outcome: tuple[str, str]) -> None:
        """Record a call a transport answered without a handler (no such
        method, the wrong protocol): ``outcome`` is its code's name and its
        reason."""
        with self.call(None, call, method, current=False) as observed:
            observed.code = Code[outcome[0]]
            observed.reason = outcome[1]


class _Observed:
    """One call's observation: binds request id, method, game id (and trace
    id) to the log context of the call (context variables: each call's task
    has its own), opens its span (the current span while a unary handler
    runs), and at the end records its duration and writes its access line;
    also classifies the error that ends it."""

    def __init__(
        self, observer: Observer, request: Any, call: Call, method: str, current: bool
    ) -> None:
        # Bounded before the request is checked (service.inputs): a log line
        # never holds more than a short prefix of what a caller sent.
        call.request_id = call.headers.get("x-request-id", "")[:128] or _next_id()
        call.response_headers["x-request-id"] = call.request_id
        self.observer = observer
        self.call = call
        self.method = method
        self.game_id = str(getattr(request, "game_id", "") or "")[:64]
        self.current = current
        self.code = Code.OK
        self.reason = ""
        self.sent = 0
        self._token: Any = None

    def __enter__(self) -> _Observed:
        call = self.call
        self.attributes = {
            "rpc.system.name": "connectrpc" if call.transport == "connect" else "grpc",
            "rpc.method": self.method.strip("/"),
            "strata.transport": call.transport,
        }
        self.observer.active.add(1, self.attributes)
        parent = (
            propagate.extract(call.headers) if "traceparent" in call.headers else None
        )
        self.span = self.observer.tracer.start_span(
            self.attributes["rpc.method"],
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes=self.attributes,
        )
        span_context = self.span.get_span_context()
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(
            request_id=call.request_id,
            method=self.method,
            game_id=self.game_id,
            trace_id=format(span_context.trace_id, "032x"),
        )
        if self.current:
            self._token = context_api.attach(trace.set_span_in_context(self.span))
        self.started = time.perf_counter()
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        seconds = time.perf_counter() - self.started
        ms = seconds * 1000
        if self._token is not None:
            context_api.detach(self._token)
        self.observer.active.add(-1, self.attributes)
        status = {"rpc.response.status_code": self.code.name}
        if self.code is not Code.OK:
            status["error.type"] = self.code.name
        self.observer.duration.record(seconds, {**self.attributes, **status})
        if self.code is not Code.OK:
            self.span.set_status(trace.StatusCode.ERROR, self.reason)
            self.span.set_attribute("strata.reason", self.reason)
        self.span.set_attributes(status)
        self.span.end()
        mode = self.observer.access_log
        if mode == "all" or (mode == "errors" and self.code is not Code.OK):
            call = self.call
            log.info(
                "rpc",
                code=self.code.name,
                reason=self.reason,
                ms=round(ms, 2),
                transport=call.transport,
                peer=_peer_hash(call.peer),
                **({"sent": self.sent} if self.sent else {}),
            )
        structlog.contextvars.clear_contextvars()

    def context(self) -> contextvars.Context:
        """A copy of the current context with the call's span current in it
        (a stream's steps run there: its span is never current in the
        stream's own task, whose context a closing generator may not be in)."""
        within = contextvars.copy_context()
        within.run(context_api.attach, trace.set_span_in_context(self.span))
        return within

    def names_game(self, game_id: object) -> None:
        """The game a call made (``CreateGame``, ``FindGame``: their
        requests name none) on the call's lines from now, the access line
        too."""
        if game_id and not self.game_id:
            self.game_id = str(game_id)[:64]
            structlog.contextvars.bind_contextvars(game_id=self.game_id)

    def refused(self, error: BaseException) -> Refusal:
        """The refusal ``error`` is answered with (an unclassified error is
        logged with its traceback: a bug)."""
        refusal = classify(error)
        if refusal is None:
            log.error(
                "rpc.internal_error",
                method=self.method,
                transport=self.call.transport,
                exc_info=error,
            )
            self.span.record_exception(error)
            refusal = INTERNAL
        self.code = refusal.code
        self.reason = refusal.reason
        return refusal


def _peer_hash(peer: str) -> str:
    """A caller's address in a log line: a short hash, not the address."""
    return hashlib.sha256(peer.encode()).hexdigest()[:12] if peer else ""


#: Request ids made here: this process's random prefix and a counter (unique
#: enough to find a call's log lines, and no system call per call).
_REQUEST_IDS = itertools.count(1)
_REQUEST_ID_PREFIX = uuid.uuid4().hex[:12]


def _next_id() -> str:
    return f"{_REQUEST_ID_PREFIX}-{next(_REQUEST_IDS):x}"


__all__ = ["Call", "Code", "Door", "Refusal"]
