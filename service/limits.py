"""Limits at the door: no one caller can starve the others, whatever the
transport.

:meth:`Limits.admit` runs before every Strata handler (see
:mod:`service.door`) and refuses, before any bucket, cache or log holds
what the caller sent:

- INVALID_ARGUMENT ``MALFORMED_REQUEST`` for bytes that are not the
  request message, and the shape and text checks of :mod:`service.inputs`
  (ids, NUL characters);
- RESOURCE_EXHAUSTED ``REQUEST_TOO_LARGE`` over ``max_request_bytes``
  (a game import may take the transport's 1 MiB);
- DEADLINE_EXCEEDED ``DEADLINE_PASSED`` for a call whose client gave up
  while it was queued;
- RESOURCE_EXHAUSTED ``RATE_LIMITED`` when a token bucket is empty: the
  connection's, the caller's address's, the caller's token's (so that more
  connections or more tokens buy no more), or the game's;
- RESOURCE_EXHAUSTED ``CREATION_LIMITED`` when the caller's creation budget
  is spent: a game costs 1, and each bot seat :data:`BOT_SEAT_COST` more
  (the bot runner's work for it; the runner also plays a creator's bot
  games at a bounded rate, :mod:`service.bots`);
- RESOURCE_EXHAUSTED ``TOO_MANY_CALLS`` when the connection already has
  ``max_calls_per_peer`` unary calls running, or the server
  ``max_calls``;
- for streams (``WatchGame``, ``ReplayGame``, ``FollowLog``), which are
  counted apart so that they never take the unary calls' or the health
  checks' capacity: at most ``max_streams`` open in all,
  ``max_streams_per_address`` from one address, ``max_streams_per_token``
  for one token and ``max_streams_per_game`` on one game. A stream over a
  bound sheds an older stream of a lower rank (anonymous < token < admin)
  in that bound, the oldest first (its client gets RESOURCE_EXHAUSTED
  ``STREAM_SHED``); with none to shed, the new stream is refused
  (``TOO_MANY_STREAMS``). Over its own address's or token's bound, a
  caller's oldest stream of the same rank is shed: a client that lost its
  streams without closing them is never locked out by them.

The admin token is exempt from rates, budgets and stream bounds. A rate or
bound of 0 switches it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from google.protobuf.message import DecodeError

from service import telemetry
from service.buckets import TokenBuckets, digest
from service.calls import Call
from service.errors import (
    DeadlineExceeded,
    InvalidArgument,
    ResourceExhausted,
)
from service.inputs import check_request, quote
from service.streams import (
    RANK_ADMIN,
    RANK_ANONYMOUS,
    RANK_PLAYER,
    StreamSlot,
    StreamSlots,
)
from service.variables import server_variable

DEFAULT_RATE_PER_PEER = 500.0
DEFAULT_RATE_PER_ADDRESS = 1000.0
DEFAULT_RATE_PER_TOKEN = 250.0
DEFAULT_RATE_PER_GAME = 250.0
DEFAULT_BURST_SECONDS = 2.0
DEFAULT_CREATIONS_PER_MINUTE = 600.0
DEFAULT_MAX_CALLS_PER_PEER = 64
DEFAULT_MAX_CALLS = 1024
DEFAULT_MAX_STREAMS = 10_000
DEFAULT_MAX_STREAMS_PER_ADDRESS = 64
DEFAULT_MAX_STREAMS_PER_TOKEN = 16
DEFAULT_MAX_STREAMS_PER_GAME = 5000
DEFAULT_MAX_REQUEST_BYTES = 64 * 1024
DEFAULT_MAX_REFUSALS_PER_GAME = 1000
DEFAULT_MAX_OPEN_SEATS = 8
DEFAULT_MAX_TIMED_GAMES = 50
DEFAULT_BOT_MOVES_PER_SECOND = 20.0
#: Milliseconds a bot may think about one move (the strong bot's search
#: stops there; the others move at once).
DEFAULT_BOT_MOVE_MS = 250.0
#: Seconds of bot thinking a second one creator's bot games may use in all
#: (a strong move thinks up to STRATA_BOT_MOVE_MS; a heuristic one, next to
#: nothing): a quarter of a core, whatever the moves' rate.
DEFAULT_BOT_THINK_SHARE = 0.25
DEFAULT_OPEN_GAME_HOURS = 24.0
DEFAULT_MAX_HEADER_BYTES = 8192
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 128
DEFAULT_STORE_TIMEOUT = 10.0

#: What a bot seat adds to the cost of creating a game (a bot game of three
#: seats costs 31): the bot runner plays its moves.
BOT_SEAT_COST = 10

#: Methods whose requests carry a document (an admin's game import: a
#: whole game is 40 to 200 kB), limited by the transport's 1 MiB instead.
LARGE_REQUESTS = frozenset({"/strata.v1.AdminService/ImportGame"})
MAX_LARGE_REQUEST_BYTES = 1 << 20
CREATE_GAME = "/strata.v1.GameService/CreateGame"
#: A quick join may create a game: it costs a creation too.
FIND_GAME = "/strata.v1.GameService/FindGame"

_ENVIRONMENT = {
    "rate_per_peer": "STRATA_RATE_PER_PEER",
    "rate_per_address": "STRATA_RATE_PER_ADDRESS",
    "rate_per_token": "STRATA_RATE_PER_TOKEN",
    "rate_per_game": "STRATA_RATE_PER_GAME",
    "burst_seconds": "STRATA_RATE_BURST_SECONDS",
    "creations_per_minute": "STRATA_CREATIONS_PER_MINUTE",
    "max_calls_per_peer": "STRATA_MAX_CALLS_PER_PEER",
    "max_calls": "STRATA_MAX_CALLS",
    "max_streams": "STRATA_MAX_STREAMS",
    "max_streams_per_address": "STRATA_MAX_STREAMS_PER_ADDRESS",
    "max_streams_per_token": "STRATA_MAX_STREAMS_PER_TOKEN",
    "max_streams_per_game": "STRATA_MAX_STREAMS_PER_GAME",
    "max_request_bytes": "STRATA_MAX_REQUEST_BYTES",
    "max_refusals_per_game": "STRATA_MAX_REFUSALS_PER_GAME",
    "max_open_seats": "STRATA_MAX_OPEN_SEATS",
    "max_timed_games": "STRATA_MAX_TIMED_GAMES",
    "bot_moves_per_second": "STRATA_BOT_MOVES_PER_SECOND",
    "bot_move_ms": "STRATA_BOT_MOVE_MS",
    "bot_think_share": "STRATA_BOT_THINK_SHARE",
    "open_game_hours": "STRATA_OPEN_GAME_HOURS",
    "max_header_bytes": "STRATA_MAX_HEADER_BYTES",
    "header_timeout": "STRATA_HEADER_TIMEOUT",
    "body_timeout": "STRATA_BODY_TIMEOUT",
    "max_connections": "STRATA_MAX_CONNECTIONS",
    "max_connections_per_address": "STRATA_MAX_CONNECTIONS_PER_ADDRESS",
    "store_timeout": "STRATA_STORE_TIMEOUT",
}


@dataclasses.dataclass(frozen=True)
class LimitSettings:
    """The limits (a rate or a bound of 0 switches it off); each comes from
    the environment variable :data:`_ENVIRONMENT` names."""

    #: Requests a second one connection may make.
    rate_per_peer: float = DEFAULT_RATE_PER_PEER
    #: Requests a second from one network address, all connections together.
    rate_per_address: float = DEFAULT_RATE_PER_ADDRESS
    #: Requests a second with one bearer token, all connections together.
    rate_per_token: float = DEFAULT_RATE_PER_TOKEN
    #: Requests a second one game may receive, from everyone together.
    rate_per_game: float = DEFAULT_RATE_PER_GAME
    #: A bucket holds this many seconds' worth of requests.
    burst_seconds: float = DEFAULT_BURST_SECONDS
    #: The creation budget of an address and of a token, a minute (a game
    #: costs 1, a bot seat :data:`BOT_SEAT_COST` more).
    creations_per_minute: float = DEFAULT_CREATIONS_PER_MINUTE
    #: Unary calls one connection may have running at once.
    max_calls_per_peer: int = DEFAULT_MAX_CALLS_PER_PEER
    #: Unary calls the server runs at once.
    max_calls: int = DEFAULT_MAX_CALLS
    #: Streams open at once, in all.
    max_streams: int = DEFAULT_MAX_STREAMS
    #: Streams open at once from one address.
    max_streams_per_address: int = DEFAULT_MAX_STREAMS_PER_ADDRESS
    #: Streams open at once with one token.
    max_streams_per_token: int = DEFAULT_MAX_STREAMS_PER_TOKEN
    #: Streams open at once on one game.
    max_streams_per_game: int = DEFAULT_MAX_STREAMS_PER_GAME
    #: The largest request accepted.
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    #: Refused commands a game's log keeps.
    max_refusals_per_game: int = DEFAULT_MAX_REFUSALS_PER_GAME
    #: Seats of games not yet started one caller (address, or token) may
    #: hold at once.
    max_open_seats: int = DEFAULT_MAX_OPEN_SEATS
    #: Games with a time control, not yet finished, one caller (address, or
    #: token) may have created (each is a clock the timekeeper keeps).
    max_timed_games: int = DEFAULT_MAX_TIMED_GAMES
    #: Bot moves a second the bot runner plays for one creator's games.
    bot_moves_per_second: float = DEFAULT_BOT_MOVES_PER_SECOND
    #: Milliseconds a bot seat, or a bot acting on a timeout, may think
    #: about one move (the strong bot stops its search there).
    bot_move_ms: float = DEFAULT_BOT_MOVE_MS
    #: Seconds of thinking a second one creator's bots may use together.
    bot_think_share: float = DEFAULT_BOT_THINK_SHARE
    #: Hours a game may stay unstarted before it expires.
    open_game_hours: float = DEFAULT_OPEN_GAME_HOURS
    #: Bytes of an HTTP request's line and headers.
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    #: Seconds an HTTP request's headers may take to arrive (and a new
    #: gRPC connection its handshake).
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    #: Seconds an HTTP request's body may take to arrive after its headers.
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    #: Connections each listener (gRPC, HTTP) holds at once; 0: half of
    #: what the open-file limit leaves after a reserve for the store,
    #: health and logs (the other half is the other listener's).
    max_connections: int = 0
    #: HTTP connections open at once from one address (trusted proxies
    #: are exempt).
    max_connections_per_address: int = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS
    #: Seconds a unary call may wait (on the database) before it is
    #: answered UNAVAILABLE ``STORE_TIMEOUT``.
    store_timeout: float = DEFAULT_STORE_TIMEOUT

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, problems: list[str] | None = None
    ) -> LimitSettings:
        """The limits the environment gives. A value that is not a number
        >= 0 is a problem: added to ``problems`` when given (the default is
        kept), else raised as ValueError."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        found: list[str] = []
        for field in dataclasses.fields(cls):
            name = server_variable(_ENVIRONMENT[field.name])
            raw = env.get(name, "").strip()
            if not raw:
                continue
            kind = int if field.type in ("int", int) else float
            try:
                value = kind(raw)
            except ValueError:
                value = -1
            if not value >= 0:
                found.append(f"{name}={raw!r} is not a number >= 0")
                continue
            values[field.name] = value
        if found and problems is None:
            raise ValueError("; ".join(found))
        if problems is not None:
            problems.extend(found)
        return cls(**values)

    @staticmethod
    def variables() -> dict[str, str]:
        """Each setting's environment variable."""
        return dict(_ENVIRONMENT)


class Malformed:
    """Stands in for a request whose bytes did not parse."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class Oversized:
    """Stands in for a request longer than its method's bound (its bytes
    were never parsed)."""

    def __init__(self, size: int) -> None:
        self.size = size


def tolerant(
    deserialize: Callable[[bytes], Any], limit: int = 0
) -> Callable[[bytes], Any]:
    """A deserializer that returns :class:`Malformed` instead of raising
    (a transport would answer INTERNAL for an exception here), and
    :class:`Oversized` for more than ``limit`` bytes (0: no bound) without
    parsing them."""

    def parse(data: bytes) -> Any:
        if 0 < limit < len(data):
            return Oversized(len(data))
        try:
            return deserialize(data)
        except (DecodeError, ValueError, TypeError, RecursionError) as error:
            return Malformed(error)

    return parse


# -- the door's admission -------------------------------------------------------------


class Limits:
    """Rates, budgets, concurrency and stream bounds (see the module)."""

    def __init__(
        self,
        settings: LimitSettings | None = None,
        is_admin: Callable[[str], bool] = lambda token: False,
        is_integration: Callable[[str], bool] = lambda token: False,
    ) -> None:
        """``is_admin`` and ``is_integration`` tell the tokens the service
        knows without a lookup: the admin's (exempt from the limits) and
        the integrations' (their streams rank above anonymous ones). Any
        other token ranks as anonymous unless the door found it holds a seat
        of the stream's game (``admit(…, seated=True)``)."""
        self.settings = settings = settings or LimitSettings()
        self.is_admin = is_admin
        self.is_integration = is_integration
        burst = settings.burst_seconds
        self.peers = TokenBuckets(
            settings.rate_per_peer, settings.rate_per_peer * burst
        )
        self.addresses = TokenBuckets(
            settings.rate_per_address, settings.rate_per_address * burst
        )
        self.tokens = TokenBuckets(
            settings.rate_per_token, settings.rate_per_token * burst
        )
        self.games = TokenBuckets(
            settings.rate_per_game, settings.rate_per_game * burst
        )
        # A minute's budget, refilled continuously.
        self.creations = TokenBuckets(
            settings.creations_per_minute / 60, settings.creations_per_minute
        )
        self.streams = StreamSlots()
        self.refusals = telemetry.meter().create_counter(
            "strata.door.refused",
            description="Calls refused at the door for a limit, by reason "
            "(RATE_LIMITED, TOO_MANY_CALLS, TOO_MANY_STREAMS, …)",
        )
        self._in_flight: Counter[str] = Counter()
        self._running = 0
        self._lock = threading.Lock()

    def in_flight(self, connection: str | None = None) -> int:
        """Unary calls running now, of one connection or of all."""
        with self._lock:
            if connection is None:
                return sum(self._in_flight.values())
            return self._in_flight[connection]

    def request_limit(self, method: str) -> int:
        """The most bytes a request to ``method`` may have (0: no bound)."""
        limit = self.settings.max_request_bytes
        if method in LARGE_REQUESTS:
            limit = max(limit, MAX_LARGE_REQUEST_BYTES) if limit > 0 else 0
        return limit

    def admit_caller(self, call: Call) -> None:
        """Count the call against its connection's, address's and token's
        rates before anything of its request is read or decoded (a
        transport that reads the request itself calls this first; the
        door then skips these buckets). RATE_LIMITED when one is empty."""
        token = call.token
        if not (token and self.is_admin(token)):
            try:
                self._take_caller_rates(call, token)
            except ResourceExhausted as refused:
                self.refusals.add(1, {"reason": refused.reason})
                raise
        call.rates_taken = True

    @contextlib.contextmanager
    def admit(
        self,
        request: Any,
        call: Call,
        stream: bool = False,
        seated: bool = False,
        checked: bool = False,
    ) -> Iterator[StreamSlot | None]:
        """Admit ``call`` (raising the refusal when it may not run), and
        count it as running while the block runs. ``seated``: the caller of
        a stream holds a seat of its game (its rank is a player's).
        ``checked``: the request's shape and text were checked already
        (:meth:`check_shape`, :func:`~service.inputs.check_request`)."""
        if not checked:
            self.check_shape(request, call)
            check_request(request)
        token = call.token
        admin = bool(token) and self.is_admin(token)
        try:
            if not admin:
                if not call.rates_taken:
                    self._take_caller_rates(call, token)
                self._take_request_rates(request, call, token)
            if stream:
                slot = self._open_stream(request, call, token, admin, seated)
        except ResourceExhausted as refused:
            self.refusals.add(1, {"reason": refused.reason})
            raise
        if stream:
            try:
                yield slot
            finally:
                self.streams.close(slot)
            return
        try:
            self._start_unary(call.connection)
        except ResourceExhausted as refused:
            self.refusals.add(1, {"reason": refused.reason})
            raise
        try:
            yield None
        finally:
            self._end_unary(call.connection)

    def check_shape(self, request: Any, call: Call) -> None:
        """Refuse a call whose client gave up, or whose request did not
        parse or is past its method's bound (the request's text is
        :func:`~service.inputs.check_request`'s, before any bucket, cache
        or log sees its ids)."""
        if call.expired() or call.done():
            # Queued behind other calls until its client gave up: working on
            # it now would only delay the calls that can still be answered.
            raise DeadlineExceeded(
                "DEADLINE_PASSED", "The call's deadline passed before it started."
            )
        if isinstance(request, Malformed):
            raise InvalidArgument(
                "MALFORMED_REQUEST",
                f"The request is not a valid message: {quote(str(request.error))}",
            )
        limit = self.request_limit(call.method)
        size = request.size if isinstance(request, Oversized) else request.ByteSize()
        if size > limit > 0:
            raise ResourceExhausted(
                "REQUEST_TOO_LARGE",
                f"The request has {size} bytes; the limit is {limit}.",
            )

    def _take_caller_rates(self, call: Call, token: str) -> None:
        settings = self.settings
        if not self.peers.take(call.connection):
            raise _rate_limited("on this connection", settings.rate_per_peer)
        if not self.addresses.take(call.peer):
            raise _rate_limited("from your address", settings.rate_per_address)
        if token and not self.tokens.take(token):
            raise _rate_limited("with this token", settings.rate_per_token)

    def _take_request_rates(self, request: Any, call: Call, token: str) -> None:
        settings = self.settings
        game_id = getattr(request, "game_id", "")
        if game_id and not self.games.take(game_id):
            raise _rate_limited("for this game", settings.rate_per_game)
        if call.method in (CREATE_GAME, FIND_GAME):
            cost = 1 + BOT_SEAT_COST * len(getattr(request, "bots", ()))
            if not self.creations.take("address:" + call.peer, cost) or (
                token and not self.creations.take("token:" + token, cost)
            ):
                raise ResourceExhausted(
                    "CREATION_LIMITED",
                    f"You have created too many games lately (a budget of "
                    f"{settings.creations_per_minute:g} a minute: a game costs 1, "
                    f"each bot seat {BOT_SEAT_COST} more); try again later.",
                )

    def _start_unary(self, connection: str) -> None:
        """Count a unary call as running on ``connection`` (TOO_MANY_CALLS
        when it may not)."""
        settings = self.settings
        with self._lock:
            running = self._in_flight[connection]
            if 0 < settings.max_calls_per_peer <= running:
                raise ResourceExhausted(
                    "TOO_MANY_CALLS",
                    f"This connection already has {running} calls running "
                    f"(the limit is {settings.max_calls_per_peer}).",
                )
            if 0 < settings.max_calls <= self._running:
                raise ResourceExhausted(
                    "TOO_MANY_CALLS", "The service is busy; retry in a moment."
                )
            self._in_flight[connection] = running + 1
            self._running += 1

    def _end_unary(self, connection: str) -> None:
        with self._lock:
            self._running -= 1
            self._in_flight[connection] -= 1
            if self._in_flight[connection] <= 0:
                del self._in_flight[connection]

    def _open_stream(
        self, request: Any, call: Call, token: str, admin: bool, seated: bool
    ) -> StreamSlot:
        try:
            stopper: asyncio.Future[None] | None = (
                asyncio.get_running_loop().create_future()
            )
        except RuntimeError:
            stopper = None
        keys = ["all", "address:" + call.peer]
        token_key = "token:" + digest(token).hex() if token else ""
        if token:
            keys.append(token_key)
        game_id = getattr(request, "game_id", "")
        if game_id:
            keys.append("game:" + game_id)
        rank = (
            RANK_ADMIN
            if admin
            else RANK_PLAYER
            if seated or (token and self.is_integration(token))
            else RANK_ANONYMOUS
        )
        slot = StreamSlot(rank, tuple(keys), call.method, stopper)
        settings = self.settings
        bounds = {
            "all": settings.max_streams,
            "address:" + call.peer: settings.max_streams_per_address,
            token_key: settings.max_streams_per_token,
            "game:" + game_id: settings.max_streams_per_game,
        }
        if admin:
            bounds = {"all": settings.max_streams}
        self.streams.open(slot, bounds)
        return slot


def _rate_limited(where: str, rate: float) -> ResourceExhausted:
    return ResourceExhausted(
        "RATE_LIMITED",
        f"Too many requests {where} (over {rate:g} a second); slow down.",
    )


def deadline_after(ms: float) -> Callable[[], bool]:
    """A check that turns true ``ms`` milliseconds from now (a bot's time
    to think: :data:`DEFAULT_BOT_MOVE_MS`)."""
    end = time.monotonic() + ms / 1000

    def out_of_time() -> bool:
        return time.monotonic() >= end

    return out_of_time
