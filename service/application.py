"""The use cases of the service: pure orchestration of domain and store.

Nothing here knows gRPC. The servicer translates protos to these calls and
back; this layer authenticates by token hash, loads a game (cached state,
snapshot, then the events after it), lets the rules decide, appends with
optimistic concurrency and logs commands for idempotency.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hashlib
import hmac
import json
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from domain import bots as domain_bots
from domain import codec, registry
from domain.chance import Rng
from domain.errors import DomainError, InvalidCommand, NotYourSeat, RuleViolation
from domain.rules import GameRules, Role, Viewer
from domain.session import (
    GameCreated,
    GameFinished,
    Session,
    SessionState,
    Status,
    event_schema_version,
)
from eventstore.base import (
    AppendResult,
    CommandOutcome,
    CommandRecord,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    NewCommand,
    NewEvent,
    RecordedEvent,
    Snapshot,
)
from service import inputs, telemetry
from service.errors import (
    Aborted,
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    bounded,
)
from service.fanout import GameFeeds
from service.inputs import quote

SNAPSHOT_EVERY = 200
MAX_RETRIES = 8
CACHE_SIZE = 4096
MAX_COMMAND_ID = 128


#: Command log types of the lifecycle commands (game commands use their
#: class names).
JOIN = "JoinGame"
START = "StartGame"
#: A creation is logged under this id and type (see :meth:`create_game`).
CREATE = "create"
START_ID = "start"
CREATE_TYPE = "CreateGame"
#: The creator of a game created in this process, without a token (the
#: balance lab, tests): trusted, not counted against any quota.
IN_PROCESS = "in-process"
#: A seat freed before the start: ``leave-seat-<seat>-at-<version>``.
LEAVE_PREFIX = "leave-seat-"
LEAVE_TYPE = "LeaveGame"
#: An unstarted game ended by the service.
EXPIRE = "expire"
EXPIRE_TYPE = "ExpireGame"
#: Command ids that only the service gives (joins, the start, leaves, the
#: creation, an expiry), whoever sends them.
_RESERVED_IDS = (START_ID, CREATE, EXPIRE)
_RESERVED_PREFIXES = ("join-seat-", LEAVE_PREFIX)

_REFUSALS: dict[str, type[DomainError]] = {
    kind.__name__: kind for kind in (RuleViolation, InvalidCommand, NotYourSeat)
}


#: The prefix of the bot runner's command ids (``service.bots.command_id``),
#: which no other caller may use.
BOT_COMMAND_PREFIX = "bot-seat-"


#: Every seat token begins with this: a token never looks like a command-line
#: option (``--token $TOKEN``), and a leaked one is easy to find in secret
#: scans. Tokens issued before the prefix keep working: only their hashes are
#: stored, whatever their form.
SEAT_TOKEN_PREFIX = "st_"


def new_seat_token() -> str:
    """A fresh secret seat token: the prefix and 256 random bits."""
    return SEAT_TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The stored form of a seat token."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who is calling: the bearer token (empty for none) and whether it is
    the admin token. ``bot`` marks the service's own bot runner, which acts
    for bot seats only (no token can: their token hash is empty)."""

    token: str = ""
    admin: bool = False
    bot: bool = False
    #: The caller's network address without its port (``""`` in process):
    #: who an anonymous caller is, for keys and quotas.
    peer: str = ""

    @functools.cached_property
    def token_hash(self) -> str:
        # Asked for several times a command (seats, actor, view): hashed once.
        return hash_token(self.token) if self.token else ""

    @property
    def identity(self) -> str:
        """Who the caller is, for what is kept per caller (creation keys,
        quotas): the admin, a token (by its hash), else the address."""
        if self.admin:
            return "admin"
        if self.bot:
            return "bot"
        if self.token:
            return "token:" + self.token_hash[:32]
        return "address:" + self.peer

    def viewer(self, state: SessionState[Any]) -> Viewer:
        if self.admin:
            return Viewer.admin()
        if self.token:
            seats = state.seats_of(self.token_hash)
            if seats:
                return Viewer(seats, Role.PLAYER)
        return Viewer.spectator()


class Created(NamedTuple):
    """A created game: its id, its version, and the token that proves its
    holder created it (empty for a retried creation)."""

    game_id: str
    version: int
    host_token: str


@dataclasses.dataclass(frozen=True)
class Loaded:
    """A game's state with the rules that fold it."""

    game_id: str
    session: Session[Any]
    state: SessionState[Any]
    created_at: datetime | None

    @property
    def rules(self) -> GameRules[Any, Any, Any, Any]:
        return self.session.rules


@dataclasses.dataclass(frozen=True)
class Submitted:
    """The answer to a command: the version after it and its events."""

    version: int
    events: list[tuple[RecordedEvent, Any]]
    duplicate: bool


@dataclasses.dataclass(frozen=True)
class _Attempt:
    """A command decided on one state: the append it makes."""

    version: int
    events: list[Any]
    new_events: list[NewEvent]
    command: NewCommand
    #: The state after ``events`` (folded by the decision itself).
    after: SessionState[Any]


def _payload(seat: int, command: Any) -> dict[str, Any]:
    """A game command as its command log entry keeps it."""
    return {
        "seat": seat,
        "type": type(command).__name__,
        "command": codec.encode(command),
    }


def session_of(game_id: str, created: RecordedEvent) -> Session[Any]:
    """The rules a stored game is played by: its game type's, at the rules
    version it was created under (``created`` is its GameCreated event)."""
    game_type = created.data.get("game_type", "")
    rules_version = created.data.get("rules_version", "")
    if game_type not in registry.game_types():
        raise NotFound(
            "GAME_TYPE_NOT_SUPPORTED",
            f"Game {game_id!r} is of type {quote(game_type)}, which this service "
            "does not run.",
        )
    try:
        return registry.session_for(game_type, rules_version)
    except KeyError:
        shipped = ", ".join(registry.rules_versions(game_type))
        raise FailedPrecondition(
            "RULES_VERSION_UNAVAILABLE",
            f"Game {game_id!r} was created under rules version "
            f"{quote(rules_version)} of {game_type}, which this service no longer "
            f"runs (it runs {shipped}).",
        ) from None


#: The largest body a refused command's log entry keeps (its canonical
#: JSON); a larger one is kept as its digest and size.
MAX_REFUSED_BODY = 1024


def _refusal_payload(seat: int, command: Any) -> dict[str, Any]:
    """A refused command as its log entry keeps it: its body when small
    (verification decides it again), else only a digest of it (what a
    refusal needs: its id, reason and what was sent, not a caller's 60 kB)."""
    payload = _payload(seat, command)
    body = json.dumps(payload["command"], sort_keys=True, separators=(",", ":"))
    if len(body) > MAX_REFUSED_BODY:
        del payload["command"]
        payload["digest"] = hashlib.sha256(body.encode()).hexdigest()
        payload["size"] = len(body)
    return payload


class GameApp:
    """Every use case of the game service."""

    def __init__(
        self,
        store: EventStore,
        admin_token: str = "",
        max_refusals: int = 1000,
        max_open_seats: int = 8,
    ) -> None:
        self.store = store
        #: Refused commands a game's log keeps (see :meth:`submit`).
        self.max_refusals = max_refusals
        #: One reader a watched game, however many watch it.
        self.feeds = GameFeeds(store)
        self.tracer = telemetry.tracer()
        self.metrics = CommandMetrics()
        #: The seats of unstarted games each caller holds.
        self.lobby = Lobby(self, max_open_seats)
        self._admin_hash = hash_token(admin_token) if admin_token else ""
        self._cache: OrderedDict[str, Loaded] = OrderedDict()
        self._cache_lock = threading.Lock()

    # -- callers --------------------------------------------------------------

    def caller(self, token: str, peer: str = "") -> Caller:
        """The caller a bearer token names (constant-time admin check),
        calling from ``peer`` (its address, without the port)."""
        if not token:
            return Caller(peer=peer)
        caller = Caller(token=token, peer=peer)
        if self._admin_hash and hmac.compare_digest(
            caller.token_hash, self._admin_hash
        ):
            caller = Caller(token=token, admin=True, peer=peer)
        return caller

    # -- loading --------------------------------------------------------------

    def load(self, game_id: str, refresh: bool = True) -> Loaded:
        """The game's latest state (cached, caught up with the store)."""
        with self.tracer.start_as_current_span("load"):
            return self._load(game_id, refresh)

    def _load(self, game_id: str, refresh: bool) -> Loaded:
        with self._cache_lock:
            loaded = self._cache.get(game_id)
            if loaded is not None:
                self._cache.move_to_end(game_id)
        if loaded is None:
            loaded = self._load_cold(game_id)
        elif refresh:
            newer = self.store.read_stream(game_id, loaded.state.version + 1)
            if newer:
                state = loaded.session.fold(
                    (self._decode(loaded.session, e) for e in newer), loaded.state
                )
                loaded = dataclasses.replace(loaded, state=state)
        self._remember(game_id, loaded)
        return loaded

    def _remember(self, game_id: str, loaded: Loaded) -> None:
        with self._cache_lock:
            current = self._cache.get(game_id)
            if current is None or current.state.version <= loaded.state.version:
                self._cache[game_id] = loaded
                self._cache.move_to_end(game_id)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)

    def _load_cold(self, game_id: str) -> Loaded:
        first = self.store.read_stream(game_id, 1, 1)
        if not first:
            raise NotFound("GAME_NOT_FOUND", f"No game {game_id!r}.")
        created = first[0]
        session = session_of(game_id, created)
        state: SessionState[Any] | None = None
        snapshot = self.store.load_snapshot(game_id)
        if snapshot is not None and snapshot.schema_version == self._snapshot_schema(
            session
        ):
            try:
                state = session.decode_state(snapshot.state)
            except (codec.CodecError, TypeError, ValueError, KeyError):
                state = None  # unreadable: rebuild from the events
        from_version = 1 if state is None else state.version + 1
        events = self.store.read_stream(game_id, from_version)
        state = session.fold((self._decode(session, e) for e in events), state)
        return Loaded(game_id, session, state, created.recorded_at)

    def state_at(self, game_id: str, version: int) -> Loaded:
        """The game as it was after ``version`` events."""
        loaded = self.load(game_id)
        if version < 1 or version > loaded.state.version:
            raise InvalidArgument(
                "VERSION_OUT_OF_RANGE",
                f"Version {version} is not between 1 and {loaded.state.version}.",
                "at_version",
            )
        if version == loaded.state.version:
            return loaded
        events = self.store.read_stream(game_id, 1, version)
        state = loaded.session.fold(self._decode(loaded.session, e) for e in events)
        return dataclasses.replace(loaded, state=state)

    @staticmethod
    def _snapshot_schema(session: Session[Any]) -> int:
        digest = hashlib.sha256(
            f"{session.rules.game_type}/{session.rules.rules_version}".encode()
        ).digest()
        return int.from_bytes(digest[:3], "big")

    @staticmethod
    def _decode(session: Session[Any], event: RecordedEvent) -> Any:
        return session.decode_event(event.type, event.data, event.schema_version)

    # -- creating and joining -------------------------------------------------

    def create_game(
        self,
        caller: Caller,
        game_type: str,
        players: int,
        options: Any = None,
        scenario: Any = None,
        seed: str = "",
        request_id: str = "",
        bots: Sequence[tuple[int, str]] = (),
    ) -> Created:
        """Create a game. ``bots`` (seat, kind) are seated at once; a game of
        bots only is started too."""
        try:
            session = registry.session_for(game_type)
        except KeyError:
            raise InvalidArgument(
                "UNKNOWN_GAME_TYPE",
                f"No game type {quote(game_type)}; see ListGameTypes.",
                "game_type",
            ) from None
        if scenario is not None and not caller.admin:
            raise PermissionDenied(
                "SCENARIO_NEEDS_ADMIN", "Only the admin token may set a scenario."
            )
        if seed and not caller.admin:
            # A seed foretells every draw: its chooser could compute the
            # hands and deck orders offline, and pick a seed that wins.
            raise PermissionDenied(
                "SEED_NEEDS_ADMIN",
                "Only the admin token may choose a game's seed; leave it empty "
                "and the service draws one.",
            )
        created = session.create(
            players, seed or secrets.token_hex(16), options, scenario
        )
        self._check_bots(game_type, players, bots)
        # The creation is logged (as the command ``create``): who created
        # the game (whose quotas its bot seats' moves count against), the
        # hash of the host token that may free its seats before the start,
        # and with a request_id, the request's digest (a retry is told apart
        # from a different request under the same key).
        host_token = caller.token or new_seat_token()
        body: dict[str, Any] = {"host": hash_token(host_token)}
        if request_id:
            # The key is its caller's: nobody else can claim it first.
            game_id = uuid.uuid5(
                uuid.NAMESPACE_URL, f"strata:{caller.identity}:{request_id}"
            ).hex
            body["request_id"] = request_id
            body["digest"] = _request_digest(created, seed, bots)
        else:
            game_id = _time_ordered_id()
        command = NewCommand(
            command_id=CREATE,
            actor=self._creator(caller),
            payload={"seat": -1, "type": CREATE_TYPE, "command": body},
            outcome=CommandOutcome(first_version=1, last_version=1),
            decided_at_version=0,
        )
        try:
            self.store.append(game_id, 0, [self._new_event(created)], command)
        except (ConcurrencyError, DuplicateCommand):
            if not request_id:
                raise
            first = self.store.find_command(game_id, CREATE)
            if (
                first is None
                or first.payload["command"].get("digest") != body["digest"]
            ):
                raise AlreadyExists(
                    "REQUEST_ID_REUSED",
                    "This request_id already created a different game; send a "
                    "new request_id for a new game.",
                    "request_id",
                ) from None
            host_token = ""  # a retry: the first answer had it
        if bots:
            return Created(game_id, self._seat_bots(game_id, bots), host_token)
        if request_id:
            return Created(game_id, self.load(game_id).state.version, host_token)
        return Created(game_id, 1, host_token)

    @staticmethod
    def _creator(caller: Caller) -> str:
        """Who created a game, as its command log names it (what the bot
        runner charges its bot seats' moves to)."""
        if caller.admin:
            return "admin"
        if caller.token:
            return caller.token_hash[:16]
        if not caller.peer:
            return IN_PROCESS
        return "address:" + hashlib.sha256(caller.peer.encode()).hexdigest()[:16]

    def host_of(self, game_id: str) -> tuple[str, str]:
        """(creator, host token hash) of a game, from its logged creation
        (empty strings for a game created before creations were logged)."""
        record = self.store.find_command(game_id, CREATE)
        if record is None:
            return "", ""
        return record.actor, str(record.payload.get("command", {}).get("host", ""))

    def join_game(
        self, caller: Caller, game_id: str, seat: int | None, name: str
    ) -> tuple[int, str, int]:
        """Take a seat; returns (seat, token, version)."""
        name = inputs.player_name(name)
        self.lobby.check(caller)
        for _ in range(MAX_RETRIES):
            loaded = self.load(game_id)
            state = loaded.state
            token = (
                caller.token
                if caller.token and state.seats_of(caller.token_hash)
                else ""
            )
            token = token or new_seat_token()
            token_hash = hash_token(token)
            taken, version = self._append_join(
                game_id, loaded, seat, name, token_hash, actor=token_hash[:16]
            )
            if version:
                self.lobby.hold(caller, game_id, taken, token_hash)
                return taken, token, version
            # someone else joined meanwhile: decide again
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    def leave_game(self, caller: Caller, game_id: str, seat: int) -> int:
        """Free ``seat`` of a game not yet started (its own token, the
        game's host token or the admin); returns the version."""
        for _ in range(MAX_RETRIES):
            loaded = self.load(game_id)
            state = loaded.state
            events = loaded.session.leave(state, seat)  # the seat exists, taken
            info = state.seats[seat]
            assert info is not None
            allowed = caller.admin or (
                bool(caller.token)
                and caller.token_hash in (info.token_hash, self.host_of(game_id)[1])
            )
            if not allowed:
                raise PermissionDenied(
                    "NOT_YOUR_SEAT",
                    f"Only seat {seat}'s player, the game's host or the admin may "
                    "free it.",
                )
            command = NewCommand(
                command_id=f"{LEAVE_PREFIX}{seat}-at-{state.version}",
                actor=self._actor(caller, state, seat),
                payload={"seat": seat, "type": LEAVE_TYPE, "command": {}},
                decided_at_version=state.version,
            )
            try:
                result = self.store.append(
                    game_id,
                    state.version,
                    [self._new_event(e) for e in events],
                    command,
                )
            except (ConcurrencyError, DuplicateCommand):
                continue  # the game changed meanwhile: decide again
            self._after_append(game_id, loaded, events, result.last_version)
            return result.last_version
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    def expire_game(self, game_id: str, at: datetime) -> bool:
        """End a game never started, as the service's own command (id
        ``expire``, pinned to the version: on several replicas one expires
        it); ``at`` is the instant the service decided it. False when the
        game started (or changed) meanwhile, or expired already."""
        loaded = self.load(game_id)
        state = loaded.state
        if state.status is not Status.OPEN:
            return False
        events = loaded.session.expire(state)
        command = NewCommand(
            command_id=EXPIRE,
            actor="service",
            payload={
                "seat": -1,
                "type": EXPIRE_TYPE,
                "command": {"at": at.isoformat()},
            },
            decided_at_version=state.version,
        )
        try:
            result = self.store.append(
                game_id, state.version, [self._new_event(e) for e in events], command
            )
        except (ConcurrencyError, DuplicateCommand):
            return False
        self._after_append(game_id, loaded, events, result.last_version)
        return True

    def start_game(self, caller: Caller, game_id: str) -> int:
        """Start a game whose seats are all taken; returns the version."""
        for _ in range(MAX_RETRIES):
            loaded = self.load(game_id)
            state = loaded.state
            if not caller.admin and not (
                (caller.token or caller.bot) and self._acts_for(caller, state)
            ):
                raise PermissionDenied(
                    "NOT_SEATED", "Only a seated player or the admin may start a game."
                )
            events = loaded.session.start(state, Rng(state.config.seed, state.version))
            command = NewCommand(
                command_id=START_ID,
                actor="admin"
                if caller.admin
                else "bot"
                if caller.bot
                else caller.token_hash[:16],
                payload={"seat": -1, "type": START, "command": {}},
                decided_at_version=state.version,
            )
            try:
                result = self.store.append(
                    game_id,
                    state.version,
                    [self._new_event(e) for e in events],
                    command,
                )
            except DuplicateCommand as duplicate:
                return duplicate.record.outcome.last_version  # started meanwhile
            except ConcurrencyError:
                continue
            self._after_append(game_id, loaded, events, result.last_version)
            return result.last_version
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    # -- playing --------------------------------------------------------------

    def submit(
        self,
        caller: Caller,
        game_id: str,
        seat: int,
        command_id: str,
        command: Any,
        expected_version: int | None = None,
    ) -> Submitted:
        """Decide and append one game command, idempotently by ``command_id``
        (for its actor: see :meth:`_replayed`)."""
        with self.metrics.command(game_id, self) as counted:
            counted.submitted = self._submit(
                caller, game_id, seat, command_id, command, expected_version
            )
            return counted.submitted

    def _submit(
        self,
        caller: Caller,
        game_id: str,
        seat: int,
        command_id: str,
        command: Any,
        expected_version: int | None = None,
    ) -> Submitted:
        self._check_command(caller, command_id)
        # Decide on the cached state without asking the store whether it is
        # current: the append checks the version anyway, and a stale state
        # costs a conflict and a retry. Only an answer that is not an append
        # (a refusal, a seat or version mismatch) is first checked against
        # the store's latest state, and against the command log.
        loaded, fresh = self._load_for_command(game_id)
        for _ in range(MAX_RETRIES):
            try:
                with self.tracer.start_as_current_span("decide"):
                    attempt = self._attempt(
                        caller, loaded, seat, command_id, command, expected_version
                    )
            except (PermissionDenied, Aborted):
                if not fresh:
                    loaded, fresh = self.load(game_id), True
                    continue
                previous = self.store.find_command(game_id, command_id)
                if previous is not None:
                    actor = self._actor(caller, loaded.state, seat)
                    return self._replayed(caller, game_id, previous, actor)
                raise
            except DomainError as error:
                if not fresh:
                    loaded, fresh = self.load(game_id), True
                    continue
                state = loaded.state
                actor = self._actor(caller, state, seat)
                refusal = CommandOutcome(
                    error_kind=type(error).__name__,
                    error_reason=error.reason,
                    error_message=bounded(error.message),
                )
                if self.store.count_refusals(game_id) >= self.max_refusals:
                    # The log keeps a bounded number of refusals a game: past
                    # it, refusals are answered, not kept (a retry is decided
                    # again, and refused again).
                    raise
                record = self.store.record_rejection(
                    game_id,
                    NewCommand(
                        command_id,
                        actor,
                        _refusal_payload(seat, command),
                        refusal,
                        state.version,
                    ),
                )
                if record.outcome != refusal or record.actor != actor:
                    # A concurrent try of this command id was logged first
                    # (accepted, or refused on another version): its outcome
                    # is the answer, for this try as for every later one.
                    # Or someone else's command has the id (nothing logged).
                    return self._replayed(caller, game_id, record, actor)
                raise
            try:
                with self.tracer.start_as_current_span("append"), self.metrics.timed():
                    result = self.store.append(
                        game_id, attempt.version, attempt.new_events, attempt.command
                    )
            except DuplicateCommand as duplicate:
                return self._replayed(
                    caller, game_id, duplicate.record, attempt.command.actor
                )
            except ConcurrencyError:
                if expected_version is not None:
                    # The stores answer a logged command id with
                    # DuplicateCommand even on a conflict; asked again here
                    # so that no store can turn another try's success into
                    # ABORTED.
                    previous = self.store.find_command(game_id, command_id)
                    if previous is not None:
                        return self._replayed(
                            caller, game_id, previous, attempt.command.actor
                        )
                    raise Aborted(
                        "VERSION_MISMATCH", "The game changed; reload and retry."
                    ) from None
                loaded, fresh = self.load(game_id), True
                continue
            submitted, snapshot = self._accepted(
                caller, game_id, loaded, attempt, result
            )
            if snapshot is not None:
                self.store.save_snapshot(snapshot)
            return submitted
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    async def submit_async(
        self,
        caller: Caller,
        game_id: str,
        seat: int,
        command_id: str,
        command: Any,
        expected_version: int | None = None,
    ) -> Submitted:
        """:meth:`submit` for a caller on an event loop.

        The common case runs on the loop: a command decided on the cached
        state and appended with :meth:`EventStore.append_async`, so no thread
        waits for the commit. Anything else (no cached state, a refusal, a
        seat or version mismatch, a conflict, a command id seen before)
        starts over in :meth:`submit` on a worker thread, whose answer is
        the answer: the same one :meth:`submit` would have given.
        """
        with self.metrics.command(game_id, self) as counted:
            counted.submitted = await self._submit_async(
                caller, game_id, seat, command_id, command, expected_version
            )
            return counted.submitted

    async def _submit_async(
        self,
        caller: Caller,
        game_id: str,
        seat: int,
        command_id: str,
        command: Any,
        expected_version: int | None = None,
    ) -> Submitted:
        self._check_command(caller, command_id)

        def slowly() -> Submitted:
            return self._submit(
                caller, game_id, seat, command_id, command, expected_version
            )

        loaded = self.cached(game_id)
        if loaded is None:
            return await asyncio.to_thread(slowly)
        try:
            with self.tracer.start_as_current_span("decide"):
                attempt = self._attempt(
                    caller, loaded, seat, command_id, command, expected_version
                )
        except (PermissionDenied, Aborted, DomainError):
            return await asyncio.to_thread(slowly)
        try:
            with self.tracer.start_as_current_span("append"), self.metrics.timed():
                result = await self.store.append_async(
                    game_id, attempt.version, attempt.new_events, attempt.command
                )
        except (ConcurrencyError, DuplicateCommand):
            return await asyncio.to_thread(slowly)
        submitted, snapshot = self._accepted(caller, game_id, loaded, attempt, result)
        if snapshot is not None:
            await asyncio.to_thread(self.store.save_snapshot, snapshot)
        return submitted

    @staticmethod
    def _check_command(caller: Caller, command_id: str) -> None:
        """Refuse a command id or a caller no command can have."""
        if not 1 <= len(command_id) <= MAX_COMMAND_ID:
            raise InvalidArgument(
                "COMMAND_ID_INVALID",
                f"command_id needs 1 to {MAX_COMMAND_ID} characters.",
                "command_id",
            )
        if command_id in _RESERVED_IDS or command_id.startswith(_RESERVED_PREFIXES):
            # The ids join_game and start_game log under: a game command
            # with one would be answered as a duplicate of the join or start.
            raise InvalidArgument(
                "COMMAND_ID_RESERVED",
                f"command_id {quote(command_id)} is reserved for the service's "
                "own commands (the creation, joins, leaves, the start, expiry).",
                "command_id",
            )
        if command_id.startswith(BOT_COMMAND_PREFIX) and not caller.bot:
            # The bot runner's ids are predictable: a player who took one
            # first would own it, and the bot could not make that move.
            raise InvalidArgument(
                "COMMAND_ID_RESERVED",
                f"command_id {command_id!r} is reserved for the bot seats' moves.",
                "command_id",
            )
        if not caller.token and not caller.bot:
            raise Unauthenticated(
                "TOKEN_REQUIRED", "Send your seat token as `authorization: Bearer …`."
            )

    def _attempt(
        self,
        caller: Caller,
        loaded: Loaded,
        seat: int,
        command_id: str,
        command: Any,
        expected_version: int | None,
    ) -> _Attempt:
        """Decide ``command`` on ``loaded``: the append it makes. Raises
        PermissionDenied (NOT_YOUR_SEAT) or Aborted (VERSION_MISMATCH) when
        the command does not fit this state, the rules' DomainError when
        they refuse it."""
        state = loaded.state
        if not caller.admin and seat not in self._acts_for(caller, state):
            raise PermissionDenied(
                "NOT_YOUR_SEAT", f"Your token does not act for seat {seat}."
            )
        if expected_version is not None and expected_version != state.version:
            raise Aborted(
                "VERSION_MISMATCH",
                f"The game is at version {state.version}, not {expected_version}.",
            )
        events, after = loaded.session.advance(
            state, seat, command, Rng(state.config.seed, state.version)
        )
        outcome = CommandOutcome(
            first_version=state.version + 1,
            last_version=state.version + len(events),
        )
        logged = NewCommand(
            command_id,
            self._actor(caller, state, seat),
            _payload(seat, command),
            outcome,
            state.version,
        )
        return _Attempt(
            state.version, events, [self._new_event(e) for e in events], logged, after
        )

    def _accepted(
        self,
        caller: Caller,
        game_id: str,
        loaded: Loaded,
        attempt: _Attempt,
        result: AppendResult,
    ) -> tuple[Submitted, Snapshot | None]:
        """The answer to an appended command, and the snapshot to save."""
        new_state, snapshot = self._advance(
            game_id, loaded, attempt.after, result.last_version
        )
        viewer = caller.viewer(new_state)
        recorded = self._recorded(game_id, attempt.new_events, result)
        submitted = Submitted(
            result.last_version,
            [
                (r, loaded.session.redact(e, viewer))
                for r, e in zip(recorded, attempt.events, strict=True)
            ],
            False,
        )
        return submitted, snapshot

    def cached(self, game_id: str) -> Loaded | None:
        """The game's cached state, if any (not checked against the store)."""
        with self._cache_lock:
            return self._cache.get(game_id)

    def _load_for_command(self, game_id: str) -> tuple[Loaded, bool]:
        """The cached state (not checked against the store), else a fresh
        load; and whether it is fresh."""
        loaded = self.cached(game_id)
        if loaded is not None:
            return loaded, False
        return self.load(game_id), True

    def _recorded(
        self, game_id: str, events: list[NewEvent], result: AppendResult
    ) -> list[RecordedEvent]:
        """The events of an append as stored, without reading them back."""
        if result.recorded_at is None:
            return self.store.read_stream(
                game_id, result.first_version, result.last_version
            )
        first_position = result.last_position - len(events) + 1
        return [
            RecordedEvent(
                game_id=game_id,
                version=result.first_version + offset,
                position=first_position + offset,
                type=event.type,
                schema_version=event.schema_version,
                data=event.data,
                recorded_at=result.recorded_at,
            )
            for offset, event in enumerate(events)
        ]

    def _replayed(
        self, caller: Caller, game_id: str, record: CommandRecord, actor: str
    ) -> Submitted:
        """The first answer to a command id seen before, for ``actor`` (the
        caller as the command log names it) when the id is its own.

        A command id is an idempotency key of whoever logged it: a token
        (for every seat it acts for), a bot kind or the admin. Another
        actor's id is refused (ALREADY_EXISTS, COMMAND_ID_TAKEN), so that
        no caller gets someone else's answer and a client that reuses ids
        learns its command was not applied. The admin, who may act for
        every seat and sees everything, gets the first answer to any id.
        """
        if not caller.admin and record.actor != actor:
            raise AlreadyExists(
                "COMMAND_ID_TAKEN",
                f"command_id {record.command_id!r} is in use in this game by "
                "another player (or a bot, or the admin); send each new "
                "command with a new id.",
                "command_id",
            )
        outcome = record.outcome
        if not outcome.accepted:
            kind = _REFUSALS.get(outcome.error_kind, RuleViolation)
            raise kind(outcome.error_reason, outcome.error_message)
        loaded = self.load(game_id)
        viewer = caller.viewer(loaded.state)
        recorded = self.store.read_stream(
            game_id, outcome.first_version, outcome.last_version
        )
        return Submitted(
            outcome.last_version,
            [
                (r, loaded.session.redact(self._decode(loaded.session, r), viewer))
                for r in recorded
            ],
            True,
        )

    def _after_append(
        self, game_id: str, loaded: Loaded, events: list[Any], version: int
    ) -> SessionState[Any]:
        """Cache the new state; snapshot it every SNAPSHOT_EVERY versions."""
        state, snapshot = self._advance(
            game_id, loaded, loaded.session.fold(events, loaded.state), version
        )
        if snapshot is not None:
            self.store.save_snapshot(snapshot)
        return state

    def _advance(
        self, game_id: str, loaded: Loaded, state: SessionState[Any], version: int
    ) -> tuple[SessionState[Any], Snapshot | None]:
        """Cache ``state``, ``loaded``'s state after an append that stored
        ``version``; the state, and the snapshot to save when it crossed a
        multiple of SNAPSHOT_EVERY."""
        if state.version != version:
            raise RuntimeError(f"folded to {state.version}, stored {version}")
        self._remember(game_id, dataclasses.replace(loaded, state=state))
        snapshot = None
        if version // SNAPSHOT_EVERY > loaded.state.version // SNAPSHOT_EVERY:
            snapshot = Snapshot(
                game_id,
                version,
                self._snapshot_schema(loaded.session),
                loaded.session.encode_state(state),
            )
        return state, snapshot

    @staticmethod
    def _new_event(event: Any) -> NewEvent:
        return NewEvent(
            type=type(event).__name__,
            data=codec.encode(event),
            schema_version=event_schema_version(type(event)),
        )

    # -- bot seats --------------------------------------------------------------

    @staticmethod
    def _actor(caller: Caller, state: SessionState[Any], seat: int) -> str:
        """Who the command log says acted."""
        if caller.admin:
            return "admin"
        info = state.seats[seat] if 0 <= seat < len(state.seats) else None
        if caller.bot and info is not None:
            return f"bot:{info.bot}"
        return caller.token_hash[:16]

    @staticmethod
    def _acts_for(caller: Caller, state: SessionState[Any]) -> frozenset[int]:
        """The seats ``caller`` may act for (the bot runner: the bot seats)."""
        if caller.bot:
            return frozenset(
                i for i, s in enumerate(state.seats) if s is not None and s.bot
            )
        return state.seats_of(caller.token_hash)

    @staticmethod
    def _check_bots(
        game_type: str, players: int, bots: Sequence[tuple[int, str]]
    ) -> None:
        seen: set[int] = set()
        for seat, kind in bots:
            if not 0 <= seat < players or seat in seen:
                raise InvalidArgument(
                    "BOT_SEAT_INVALID",
                    f"Bot seat {seat} is out of range (0 to {players - 1}) "
                    "or listed twice.",
                    "bots",
                )
            seen.add(seat)
            if kind not in domain_bots.bot_kinds(game_type):
                raise InvalidArgument(
                    "UNKNOWN_BOT",
                    f"No bot {quote(kind)} for {game_type}; there are "
                    f"{', '.join(domain_bots.bot_kinds(game_type))}.",
                    "bots",
                )

    def _append_join(
        self,
        game_id: str,
        loaded: Loaded,
        seat: int | None,
        name: str,
        token_hash: str,
        actor: str,
        bot: str = "",
    ) -> tuple[int, int]:
        """Take a seat, logged as a JoinGame command (so verification decides
        it again). Returns (seat, version), version 0 when someone else
        changed the game meanwhile and the caller should decide again."""
        state = loaded.state
        events = loaded.session.join(state, name, token_hash, seat, bot=bot)
        taken = events[0].seat
        body = {"player_name": name, "token_hash": token_hash}
        if bot:
            body["bot"] = bot
        command = NewCommand(
            command_id=f"join-seat-{taken}-at-{state.version}",
            actor=actor,
            payload={"seat": taken, "type": JOIN, "command": body},
            decided_at_version=state.version,
        )
        try:
            result = self.store.append(
                game_id, state.version, [self._new_event(e) for e in events], command
            )
        except (ConcurrencyError, DuplicateCommand):
            return taken, 0
        self._after_append(game_id, loaded, events, result.last_version)
        return taken, result.last_version

    def _seat_bots(self, game_id: str, bots: Sequence[tuple[int, str]]) -> int:
        """Seat each bot (logged as a join, idempotently); start the game when
        bots fill every seat. Returns the version."""
        for seat, kind in sorted(bots):
            while True:
                loaded = self.load(game_id)
                state = loaded.state
                if state.seats[seat] is not None:
                    break  # seated already (a retried creation)
                _, version = self._append_join(
                    game_id, loaded, seat, f"{kind} bot", "", f"bot:{kind}", kind
                )
                if version:
                    break
        state = self.load(game_id).state
        if state.status is Status.OPEN and all(
            s is not None and s.bot for s in state.seats
        ):
            return self.start_game(Caller(bot=True), game_id)
        return state.version

    # -- looking ----------------------------------------------------------------

    def legal_actions(
        self, caller: Caller, game_id: str, seat: int | None, refresh: bool = True
    ) -> tuple[Loaded, list[tuple[int, Any]]]:
        """The caller's seats' legal commands now (``refresh=False``: on the
        cached state, without asking the store for newer events)."""
        loaded = self.load(game_id, refresh)
        return loaded, self.actions_of(caller, loaded, seat)

    @staticmethod
    def actions_of(
        caller: Caller, loaded: Loaded, seat: int | None = None
    ) -> list[tuple[int, Any]]:
        """The legal commands of the caller's seats (or of ``seat``) in
        ``loaded``."""
        viewer = caller.viewer(loaded.state)
        seats: list[int] = (
            list(range(len(loaded.state.seats)))
            if caller.admin
            else sorted(viewer.seats)
        )
        if seat is not None:
            if seat not in seats:
                raise PermissionDenied(
                    "NOT_YOUR_SEAT", f"Your token does not act for seat {seat}."
                )
            seats = [seat]
        return [
            (s, command)
            for s in seats
            for command in loaded.session.legal_actions(loaded.state, s)
        ]

    async def watch_async(
        self, caller: Caller, game_id: str, from_version: int, follow: bool
    ) -> AsyncIterator[tuple[RecordedEvent, Any]]:
        """The game's events from ``from_version``, redacted for the caller;
        live until the game finishes when ``follow``. Reads run in the
        loop's default executor; no thread waits for the next event, and
        the watchers of one game share one reader (:mod:`service.fanout`)."""
        loaded = await asyncio.to_thread(self.load, game_id)
        session = loaded.session
        if not follow:
            events = await asyncio.to_thread(
                self.store.read_stream, game_id, max(from_version, 1)
            )
            viewer = caller.viewer(loaded.state)
            for recorded in events:
                yield recorded, session.redact(self._decode(session, recorded), viewer)
            return
        async for recorded in self.feeds.watch(game_id, max(from_version, 1)):
            event = self._decode(session, recorded)
            # Seats only fill up: a state older than the cache's can only
            # make the caller see less.
            viewer = caller.viewer((self.cached(game_id) or loaded).state)
            yield recorded, session.redact(event, viewer)
            if isinstance(event, GameFinished):
                return

    def list_games(
        self, game_type: str, status: Status | None, page_size: int, page_token: str
    ) -> tuple[list[Loaded], str]:
        """Games in id (creation) order with paging."""
        page_size = 50 if page_size <= 0 else min(page_size, 500)
        out: list[Loaded] = []
        after = page_token
        while len(out) < page_size:
            ids = self.store.list_streams(after, 200)
            if not ids:
                after = ""
                break
            for game_id in ids:
                after = game_id
                try:
                    loaded = self.load(game_id)
                except NotFound:
                    continue
                if game_type and loaded.state.game_type != game_type:
                    continue
                if status is not None and loaded.state.status is not status:
                    continue
                out.append(loaded)
                if len(out) == page_size:
                    break
        return out, after if len(out) == page_size else ""


class CommandMetrics:
    """Commands by game type and outcome, and the time their appends take."""

    def __init__(self) -> None:
        meter = telemetry.meter()
        self.commands = meter.create_counter(
            "strata.commands",
            description="Game commands decided, by game type and outcome "
            "(accepted, duplicate, refused, failed)",
        )
        self.append_ms = meter.create_histogram(
            "strata.store.append.duration",
            unit="ms",
            description="Time a command's append took, to its durable commit",
        )

    @contextlib.contextmanager
    def command(self, game_id: str, app: GameApp) -> Iterator[_Counted]:
        counted = _Counted()
        outcome = "failed"
        try:
            yield counted
            outcome = "duplicate" if counted.submitted.duplicate else "accepted"
        except DomainError:
            outcome = "refused"
            raise
        finally:
            loaded = app.cached(game_id)
            game_type = loaded.state.game_type if loaded is not None else "unknown"
            self.commands.add(1, {"game_type": game_type, "outcome": outcome})

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.append_ms.record((time.perf_counter() - started) * 1000)


class _Counted:
    submitted: Submitted


class Lobby:
    """The seats of games not yet started that each caller holds, so that
    no caller squats the lobby: at most ``max_open_seats`` per address and
    per token (the admin, the bot runner and callers in process are not
    counted).

    Kept in this process: a bound per replica, forgotten at a restart (the
    seats themselves are freed by their games' expiry, and by their hosts).
    """

    def __init__(self, app: GameApp, max_open_seats: int) -> None:
        self.app = app
        self.max_open_seats = max_open_seats
        self._held: dict[str, dict[tuple[str, int], str]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _keys(caller: Caller) -> list[str]:
        if caller.admin or caller.bot or not caller.peer:
            return []
        keys = ["address:" + caller.peer]
        if caller.token:
            keys.append("token:" + caller.token_hash)
        return keys

    def check(self, caller: Caller) -> None:
        """RESOURCE_EXHAUSTED ``OPEN_SEATS_LIMIT`` when ``caller`` holds as
        many seats of unstarted games as it may."""
        if self.max_open_seats <= 0:
            return
        for key in self._keys(caller):
            with self._lock:
                held = dict(self._held.get(key, {}))
            if len(held) < self.max_open_seats:
                continue
            # Forget the seats of games that started or ended, and seats
            # given up (read afresh: another replica may have seen it).
            for (game_id, seat), token_hash in held.items():
                try:
                    state = self.app.load(game_id).state
                except NotFound:
                    state = None
                if (
                    state is None
                    or state.status is not Status.OPEN
                    or (info := state.seats[seat]) is None
                    or info.token_hash != token_hash
                ):
                    with self._lock:
                        self._held.get(key, {}).pop((game_id, seat), None)
            with self._lock:
                count = len(self._held.get(key, {}))
            if count >= self.max_open_seats:
                raise ResourceExhausted(
                    "OPEN_SEATS_LIMIT",
                    f"You hold {count} seats of games not yet started (the limit "
                    f"is {self.max_open_seats}); start or leave some first.",
                )

    def hold(self, caller: Caller, game_id: str, seat: int, token_hash: str) -> None:
        for key in self._keys(caller):
            with self._lock:
                self._held.setdefault(key, {})[(game_id, seat)] = token_hash


def _request_digest(
    created: GameCreated, seed: str, bots: Sequence[tuple[int, str]]
) -> str:
    """A digest of what a CreateGame request asked for."""
    asked = codec.encode(created)
    asked["seed"] = seed  # as asked: empty when the service drew it
    asked["bots"] = sorted([seat, kind] for seat, kind in bots)
    canonical = json.dumps(asked, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _time_ordered_id() -> str:
    """A 32-hex-digit id whose first 12 digits are the millisecond time."""
    return f"{int(time.time() * 1000):012x}{secrets.token_hex(10)}"


__all__ = ["Caller", "GameApp", "GameCreated", "Loaded", "Submitted", "hash_token"]
