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
import dataclasses
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from concurrent.futures import Executor
from typing import Any, TypeAlias

import structlog

from service.addresses import TrustedProxies, canonical
from service.calls import Call
from service.errors import (
    Code,
    DeadlineExceeded,
    Refusal,
    Unavailable,
)
from service.inputs import check_request
from service.limits import Limits
from service.observer import Observer
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
        #: Unary calls inside the door now; ``_idle`` is set when a stopping
        #: door has none left (see :meth:`drained`).
        self.running = 0
        self._idle: asyncio.Event | None = None
        #: Checks of large requests run in the pool, one at a time.
        self._heavy = asyncio.Semaphore(1)

    def stop(self) -> None:
        """The service is shutting down: refuse new calls (UNAVAILABLE
        ``SHUTTING_DOWN``) and end every open stream with that status now."""
        self.stopping = True
        self.limits.streams.stop_all()

    async def drained(self, timeout: float) -> bool:
        """Wait (on the loop, after :meth:`stop`) until no unary call is
        running, at most ``timeout`` seconds; whether none is. Until then
        the listeners stay open, so that a call arriving meanwhile is
        refused by the door (UNAVAILABLE ``SHUTTING_DOWN``, which a client
        retries elsewhere), not cut by the transport as it closes."""
        if self.running == 0:
            return True
        self._idle = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)
        return self.running == 0

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
            self.running += 1
            try:
                with observer.call(request, call, method, current=True) as outcome:
                    try:
                        await self._entering(request, call)
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

            finally:
                self.running -= 1
                if self._idle is not None and self.running == 0:
                    self._idle.set()

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
                    await self._entering(request, call)
                    seated = await self._seated(request, call)
                    with limits.admit(
                        request, call, stream=True, seated=seated, checked=True
                    ) as slot:
                        self.reads_after(read_after(call))
                        responses = iterate(request, call)
                        pump = _Pump(responses, slot, outcome.context())
                        flush = call.flush
                        try:
                            while True:
                                if flush is not None and pump.waits():
                                    await flush()
                                response = await pump.next()
                                if response is _END:
                                    return
                                if call.done():
                                    return  # nobody is listening any more
                                if call.expired():
                                    # Not an end: the stream was cut short.
                                    raise _passed()
                                yield response
                                outcome.sent += 1
                        finally:
                            await pump.close()
                            await responses.aclose()  # type: ignore[attr-defined]
                except (asyncio.CancelledError, GeneratorExit):
                    outcome.code = (
                        Code.DEADLINE_EXCEEDED if call.expired() else Code.CANCELLED
                    )
                    raise
                except BaseException as error:
                    raise outcome.refused(error) from None

        return stream

    async def _entering(self, request: Any, call: Call) -> None:
        """A call's way in: refused already by its transport (``call.refused``),
        refused while the service shuts down, then its input checked."""
        if call.refused is not None:
            raise call.refused
        if self.stopping:
            raise SHUTTING_DOWN
        await self._check_input(request, call)

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
                raise _passed() from None
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


def _passed() -> DeadlineExceeded:
    """The refusal of a call whose caller's deadline passed."""
    return DeadlineExceeded("DEADLINE_EXCEEDED", "The call's deadline passed.")


class _Pump:
    """A stream's responses, made in one task of their own up to
    :data:`AHEAD` responses and :data:`AHEAD_EVENTS` events ahead of the
    stream, taken from a queue: a response ready is passed on at once, and
    the stream waits on the queue only when none is ready. Its shedding
    (the slot's stopper) wakes that wait by putting :data:`_STOPPED` in the
    queue: no task and no ``asyncio.wait`` a response (a watcher waits for
    every event; FollowLog sends thousands a second)."""

    def __init__(
        self,
        responses: AsyncIterator[Any],
        slot: StreamSlot | None,
        within: contextvars.Context,
    ) -> None:
        """``within``: the call's context with its span current, where the
        responses are made (what a stream loads is a child of its call,
        never a span of its own)."""
        self.slot = slot
        self.stopper = None if slot is None else slot.stopper
        self.queue: asyncio.Queue[Any] = asyncio.Queue(AHEAD)
        self._events = 0  # events in the responses made and not yet taken
        self._room = asyncio.Event()  # set when the lead is under AHEAD_EVENTS
        if self.stopper is not None:
            self.stopper.add_done_callback(self._stopped)
        self.task = asyncio.get_running_loop().create_task(
            self._run(responses), context=within
        )

    def _stopped(self, _: asyncio.Future[None]) -> None:
        """The stream is shed: wake a wait for the next response. A full
        queue has no waiter; the next :meth:`next` sees the stopper."""
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(_STOPPED)

    async def _run(self, responses: AsyncIterator[Any]) -> None:
        put = self.queue.put
        try:
            async for response in responses:
                await put(response)
                self._events += _weight(response)
                if self._events >= AHEAD_EVENTS:
                    self._room.clear()
                    await self._room.wait()
        except BaseException as error:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # closed: nobody takes what is left
            await put(_Raised(error))  # the stream's end: the door classifies it
        else:
            await put(_END)

    def waits(self) -> bool:
        """Whether :meth:`next` would wait: no response is ready."""
        return self.queue.empty()

    async def next(self) -> Any:
        """The next response (``_END`` after the last), or the stream's
        shedding (a :class:`~service.errors.Refusal`) if it comes first."""
        stopper = self.stopper
        if stopper is None or not stopper.done():
            response = await self.queue.get()
        if stopper is not None and stopper.done():
            assert self.slot is not None
            raise SHUTTING_DOWN if self.slot.stopped else self.slot.shed_refusal()
        self._events -= _weight(response)
        if self._events < AHEAD_EVENTS:
            self._room.set()
        if isinstance(response, _Raised):
            raise response.error
        return response

    async def close(self) -> None:
        """Stop making responses (the stream ended, or its caller left)."""
        if self.stopper is not None:
            self.stopper.remove_done_callback(self._stopped)
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task


@dataclasses.dataclass(frozen=True)
class _Raised:
    """What a stream's handler raised, in its queue of responses."""

    error: BaseException


#: How many responses a stream's handler makes ahead of what it sends.
AHEAD = 64
#: How many events it makes ahead, a response counting as the events it
#: carries (at least one): a slow follower of FollowLog in batches of 500
#: holds at most this many and one batch in the server, not 64 batches
#: (32,000 events).
AHEAD_EVENTS = 2048


#: What a stream's shedding puts in its queue (:meth:`_Pump._stopped`).
_STOPPED = object()


def _weight(response: Any) -> int:
    """The events a response carries (a batch's ``events``), at least one."""
    kind = type(response)
    batched = _BATCHED.get(kind)
    if batched is None:
        # Asked once a type: a getattr that misses costs an exception.
        descriptor = getattr(kind, "DESCRIPTOR", None)
        fields = getattr(descriptor, "fields_by_name", {})
        batched = _BATCHED[kind] = "events" in fields
    return max(1, len(response.events)) if batched else 1


#: Whether a response type carries a list of events (FollowLog's batches).
_BATCHED: dict[type, bool] = {}


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


__all__ = ["Call", "Code", "Door", "Refusal"]
