"""Limits at the door: no one client can starve the others.

:class:`Limits` is a gRPC server interceptor that, before a Strata handler
runs, refuses with RESOURCE_EXHAUSTED (an ``ErrorInfo`` reason, mapped by
:mod:`service.interceptors` like every other error):

- ``RATE_LIMITED``: the connection (the gRPC peer, ``ipv4:host:port``) or
  the game (``request.game_id``) has used up its token bucket; each refills
  at ``rate_per_peer`` / ``rate_per_game`` requests a second and holds
  ``burst_seconds`` worth of them;
- ``TOO_MANY_CALLS``: the connection already has ``max_calls_per_peer``
  calls running (streams hold no worker thread while they wait, but a
  client opening thousands of endless ``WatchGame`` streams would still
  cost the others memory and wake-ups; and calls that do run in worker
  threads would queue behind one client's);
- ``REQUEST_TOO_LARGE``: the request is over ``max_request_bytes`` (the
  transport already refuses anything over 1 MiB; no Strata request needs
  more than a few KiB).

It also answers bytes that do not parse as the request message with
INVALID_ARGUMENT ``MALFORMED_REQUEST`` (gRPC's own answer would be
INTERNAL), does not start a call whose deadline passed while it waited for a
worker, and stops a streaming handler as soon as its client has gone or its
deadline has passed, so no worker keeps working for nobody.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from service.errors import AppError, InvalidArgument, ResourceExhausted
from service.inputs import check_request, quote
from service.interceptors import AioContext, HandlerWrapper

DEFAULT_RATE_PER_PEER = 500.0
DEFAULT_RATE_PER_GAME = 250.0
DEFAULT_BURST_SECONDS = 2.0
DEFAULT_MAX_CALLS_PER_PEER = 64
DEFAULT_MAX_REQUEST_BYTES = 64 * 1024
DEFAULT_MAX_REFUSALS_PER_GAME = 1000

#: Methods whose requests carry a document (an admin's game import: a
#: whole game is 40 to 200 kB), limited by the transport's 1 MiB instead.
LARGE_REQUESTS = frozenset({"/strata.v1.AdminService/ImportGame"})
MAX_LARGE_REQUEST_BYTES = 1 << 20

#: Idle buckets are forgotten once there are more than this many.
_PRUNE_ABOVE = 10_000


@dataclasses.dataclass(frozen=True)
class LimitSettings:
    """The limits; a rate of 0 (or less) switches that limit off.

    From the environment: ``STRATA_RATE_PER_PEER``, ``STRATA_RATE_PER_GAME``
    (requests a second), ``STRATA_RATE_BURST_SECONDS``,
    ``STRATA_MAX_CALLS_PER_PEER``, ``STRATA_MAX_REQUEST_BYTES``.
    """

    rate_per_peer: float = DEFAULT_RATE_PER_PEER
    rate_per_game: float = DEFAULT_RATE_PER_GAME
    burst_seconds: float = DEFAULT_BURST_SECONDS
    max_calls_per_peer: int = DEFAULT_MAX_CALLS_PER_PEER
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    #: Refused commands a game's log keeps (``STRATA_MAX_REFUSALS_PER_GAME``).
    max_refusals_per_game: int = DEFAULT_MAX_REFUSALS_PER_GAME

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LimitSettings:
        env = os.environ if environ is None else environ

        def number(name: str, default: float) -> float:
            raw = env.get(name, "")
            return float(raw) if raw.strip() else default

        return cls(
            rate_per_peer=number("STRATA_RATE_PER_PEER", DEFAULT_RATE_PER_PEER),
            rate_per_game=number("STRATA_RATE_PER_GAME", DEFAULT_RATE_PER_GAME),
            burst_seconds=number("STRATA_RATE_BURST_SECONDS", DEFAULT_BURST_SECONDS),
            max_calls_per_peer=int(
                number("STRATA_MAX_CALLS_PER_PEER", DEFAULT_MAX_CALLS_PER_PEER)
            ),
            max_request_bytes=int(
                number("STRATA_MAX_REQUEST_BYTES", DEFAULT_MAX_REQUEST_BYTES)
            ),
            max_refusals_per_game=int(
                number("STRATA_MAX_REFUSALS_PER_GAME", DEFAULT_MAX_REFUSALS_PER_GAME)
            ),
        )


class TokenBuckets:
    """One token bucket per key, refilled at ``rate`` a second up to ``burst``."""

    def __init__(
        self,
        rate: float,
        burst: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = max(burst, 1.0)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> bool:
        """Take one token from ``key``'s bucket; False when it is empty."""
        if self.rate <= 0:
            return True
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
            self._buckets[key] = (tokens, now)
            if len(self._buckets) > _PRUNE_ABOVE:
                self._prune(now)
            return allowed

    def _prune(self, now: float) -> None:
        """Forget buckets that have refilled (they hold no information)."""
        full_after = self.burst / self.rate
        for key, (_, last) in list(self._buckets.items()):
            if now - last >= full_after:
                del self._buckets[key]

    def __len__(self) -> int:
        return len(self._buckets)

    def __contains__(self, key: object) -> bool:
        return key in self._buckets


class DeadlinePassed(AppError):
    """The client's deadline passed before its call could start."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


class _Malformed:
    """Stands in for a request whose bytes did not parse."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class Limits(HandlerWrapper):
    """Rate, concurrency and size limits per connection and per game."""

    def __init__(self, settings: LimitSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or LimitSettings()
        burst = self.settings.burst_seconds
        self.peers = TokenBuckets(
            self.settings.rate_per_peer, self.settings.rate_per_peer * burst
        )
        self.games = TokenBuckets(
            self.settings.rate_per_game, self.settings.rate_per_game * burst
        )
        self._in_flight: Counter[str] = Counter()
        self._lock = threading.Lock()

    def in_flight(self, peer: str | None = None) -> int:
        """Calls running now, of one peer or of all."""
        with self._lock:
            if peer is None:
                return sum(self._in_flight.values())
            return self._in_flight[peer]

    # -- the interceptor ----------------------------------------------------

    def deserializer(
        self, deserialize: Callable[[bytes], Any] | None
    ) -> Callable[[bytes], Any] | None:
        return _tolerant(deserialize)

    def unary(
        self, method: str, inner: Callable[..., Any]
    ) -> Callable[[Any, AioContext], Awaitable[Any]]:
        async def unary(request: Any, context: AioContext) -> Any:
            with self._admitted(request, context, method):
                return await inner(request, context)

        return unary

    def stream(
        self, method: str, inner: Callable[..., Any]
    ) -> Callable[[Any, AioContext], AsyncIterator[Any]]:
        async def stream(request: Any, context: AioContext) -> AsyncIterator[Any]:
            with self._admitted(request, context, method):
                async for response in inner(request, context):
                    if context.done() or _expired(context):
                        return  # nobody is listening any more
                    yield response

        return stream

    def _admitted(self, request: Any, context: AioContext, method: str) -> _Admission:
        if _expired(context) or context.done():
            # Queued behind other calls until its client gave up: working on
            # it now would only delay the calls that can still be answered.
            raise DeadlinePassed(
                "DEADLINE_PASSED", "The call's deadline passed before it started."
            )
        if isinstance(request, _Malformed):
            raise InvalidArgument(
                "MALFORMED_REQUEST",
                f"The request is not a valid message: {quote(str(request.error))}",
            )
        size = request.ByteSize()
        limit = self.settings.max_request_bytes
        if method in LARGE_REQUESTS:
            limit = max(limit, MAX_LARGE_REQUEST_BYTES)
        if size > limit > 0:
            raise ResourceExhausted(
                "REQUEST_TOO_LARGE",
                f"The request has {size} bytes; the limit is {limit}.",
            )
        # Before any bucket, cache or log sees its ids.
        check_request(request)
        peer = context.peer() or "unknown"
        if not self.peers.take(peer):
            raise ResourceExhausted(
                "RATE_LIMITED",
                f"Too many requests on this connection (over "
                f"{self.settings.rate_per_peer:g} a second); slow down.",
            )
        game_id = getattr(request, "game_id", "")
        if game_id and not self.games.take(game_id):
            raise ResourceExhausted(
                "RATE_LIMITED",
                f"Too many requests for this game (over "
                f"{self.settings.rate_per_game:g} a second); slow down.",
            )
        return _Admission(self, peer)


class _Admission:
    """Counts a call as running on its connection while it runs."""

    def __init__(self, limits: Limits, peer: str) -> None:
        self.limits = limits
        self.peer = peer

    def __enter__(self) -> None:
        limit = self.limits.settings.max_calls_per_peer
        with self.limits._lock:
            running = self.limits._in_flight[self.peer]
            if 0 < limit <= running:
                raise ResourceExhausted(
                    "TOO_MANY_CALLS",
                    f"This connection already has {running} calls running "
                    f"(the limit is {limit}).",
                )
            self.limits._in_flight[self.peer] = running + 1

    def __exit__(self, *exc: object) -> None:
        with self.limits._lock:
            self.limits._in_flight[self.peer] -= 1
            if self.limits._in_flight[self.peer] <= 0:
                del self.limits._in_flight[self.peer]


def _expired(context: AioContext) -> bool:
    remaining = context.time_remaining()
    return remaining is not None and remaining <= 0


def _tolerant(
    deserialize: Callable[[bytes], Any] | None,
) -> Callable[[bytes], Any] | None:
    """A deserializer that returns :class:`_Malformed` instead of raising
    (gRPC would answer INTERNAL for an exception here)."""
    if deserialize is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserialize(data)
        except (DecodeError, ValueError, TypeError) as error:
            return _Malformed(error)

    return parse
