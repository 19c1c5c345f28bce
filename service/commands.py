"""Commands: deciding and appending a game command, idempotently.

A command is decided on the cached state and appended with optimistic
concurrency (retried on a conflict unless its version is pinned); every
command is logged under its ``command_id``, its sender's idempotency key,
and a refused one too (bounded: :data:`MAX_REFUSED_BODY`,
``max_refusals``), so that a retry gets the first answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

from domain import codec
from domain import session as session_kinds
from domain.chance import Rng
from domain.errors import DomainError, InvalidCommand, NotYourSeat, RuleViolation
from domain.seats import seat_number
from domain.session import SessionState
from eventstore.base import (
    AppendResult,
    CommandOutcome,
    CommandRecord,
    ConcurrencyError,
    DuplicateCommand,
    NewCommand,
    NewEvent,
    RecordedEvent,
    Snapshot,
)
from service import telemetry
from service.callers import Caller, actor_of, acts_for
from service.errors import (
    Aborted,
    AlreadyExists,
    InvalidArgument,
    PermissionDenied,
    Unauthenticated,
    bounded,
)
from service.games import Games, Loaded, decode_recorded, new_event
from service.inputs import quote

MAX_RETRIES = 8
MAX_COMMAND_ID = 128

#: Command log types of the lifecycle commands (game commands use their
#: class names).
JOIN = session_kinds.JOIN
START = session_kinds.START
#: A creation is logged under this id and type (see :meth:`create_game`).
CREATE = "create"
START_ID = "start"
#: A finished game's rematch is logged in it under this id and type.
REMATCH = "rematch"
REMATCH_TYPE = session_kinds.REMATCH
CREATE_TYPE = "CreateGame"
#: The creator of a game created in this process, without a token (the
#: balance lab, tests): trusted, not counted against any quota.
IN_PROCESS = "in-process"
#: A seat freed before the start: ``leave-seat-<seat>-at-<version>``.
LEAVE_PREFIX = "leave-seat-"
LEAVE_TYPE = session_kinds.LEAVE
#: An unstarted game ended by the service.
EXPIRE = "expire"
EXPIRE_TYPE = session_kinds.EXPIRE
#: The prefix of the bot runner's command ids (``service.bots.command_id``),
#: which no other caller may use.
BOT_COMMAND_PREFIX = "bot-seat-"
#: The prefix of the service's timeout commands (``service.clocks``), which
#: only the service itself may use.
TIMEOUT_PREFIX = "timeout-seat-"
#: Command ids that only the service gives (joins, the start, leaves, the
#: creation, an expiry), whoever sends them.
_RESERVED_IDS = (START_ID, CREATE, EXPIRE, REMATCH)
_RESERVED_PREFIXES = ("join-seat-", LEAVE_PREFIX)

_REFUSALS: dict[str, type[DomainError]] = {
    kind.__name__: kind for kind in (RuleViolation, InvalidCommand, NotYourSeat)
}
#: The largest body a refused command's log entry keeps (its canonical
#: JSON); a larger one is kept as its digest and size.
MAX_REFUSED_BODY = 1024


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


def _noted(attempt: Any, seat: int, command: Any, note: dict[str, Any] | None) -> Any:
    """``attempt`` with ``note`` (what the service adds, e.g. a timeout's
    instant) in its logged command's payload."""
    if not note:
        return attempt
    payload = _payload(seat, command, note)
    logged = dataclasses.replace(attempt.command, payload=payload)
    return dataclasses.replace(attempt, command=logged)


def _payload(
    seat: int, command: Any, note: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A game command as its command log entry keeps it (with the service's
    ``note`` on why it acted, e.g. a timeout's instant)."""
    return {
        "seat": seat,
        "type": type(command).__name__,
        "command": codec.encode(command),
        **(note or {}),
    }


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


class CommandMetrics:
    """Commands by game type and outcome, and the time their appends take.

    The commands are counted in plain integers (:func:`telemetry.counts`),
    which the metrics read when they are collected: an instrument's ``add`` per
    command cost several microseconds of attribute lookups and locking."""

    def __init__(self) -> None:
        #: Commands decided in this process, by (game type, outcome).
        self.decided = telemetry.counts(
            "strata.commands",
            ("game_type", "outcome"),
            "Game commands decided, by game type and outcome "
            "(accepted, duplicate, refused, failed)",
        )
        self.append_seconds = telemetry.histogram(
            "strata.store.append.duration",
            unit="s",
            description="Time a command's append took, to its durable commit",
        ).series()

    @contextlib.contextmanager
    def command(self, game_id: str, games: Games) -> Iterator[_Counted]:
        counted = _Counted()
        outcome = "failed"
        try:
            yield counted
            outcome = "duplicate" if counted.submitted.duplicate else "accepted"
        except DomainError:
            outcome = "refused"
            raise
        finally:
            loaded = games.cached(game_id)
            game_type = loaded.state.game_type if loaded is not None else "unknown"
            self.decided[game_type, outcome] += 1

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.append_seconds.record(time.perf_counter() - started)


class _Counted:
    submitted: Submitted


class Commands:
    """Deciding and appending game commands."""

    def __init__(self, games: Games, max_refusals: int = 1000) -> None:
        self.games = games
        self.store = games.store
        #: Refused commands a game's log keeps (see :meth:`submit`).
        self.max_refusals = max_refusals
        self.tracer = telemetry.step_tracer()
        self.metrics = CommandMetrics()

    def submit(
        self,
        caller: Caller,
        game_id: str,
        seat: int,
        command_id: str,
        command: Any,
        expected_version: int | None = None,
        note: dict[str, Any] | None = None,
    ) -> Submitted:
        """Decide and append one game command, idempotently by ``command_id``
        (for its actor: see :meth:`_replayed`). ``note``: what the service
        logs beside a command of its own (a timeout)."""
        with self.metrics.command(game_id, self.games) as counted:
            counted.submitted = self._submit(
                caller, game_id, seat, command_id, command, expected_version, note
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
        note: dict[str, Any] | None = None,
        refused: tuple[int, Exception] | None = None,
    ) -> Submitted:
        """``refused``: the version of a state that already refused the
        command (the fast path's cached one) and how: no state can be more
        current than the store's, so that is loaded first, and at the same
        version the answer is that one, not decided again (the rules are a
        function of the state and the command)."""
        self._check_command(caller, command_id)
        # Decide on the cached state without asking the store whether it is
        # current: the append checks the version anyway, and a stale state
        # costs a conflict and a retry. Only an answer that is not an append
        # (a refusal, a seat or version mismatch) is first checked against
        # the store's latest state, and against the command log.
        loaded, fresh = (
            self.games.for_command(game_id)
            if refused is None
            else (self.games.load(game_id), True)
        )
        for _ in range(MAX_RETRIES):
            try:
                attempt = self._attempt(
                    caller, loaded, seat, command_id, command, expected_version, refused
                )
                attempt = _noted(attempt, seat, command, note)
            except (PermissionDenied, Aborted):
                if not fresh:
                    loaded, fresh = self.games.load(game_id), True
                    continue
                previous = self.store.find_command(game_id, command_id)
                if previous is not None:
                    actor = actor_of(caller, loaded.state, seat)
                    return self._replayed(caller, game_id, previous, actor)
                raise
            except DomainError as error:
                if not fresh:
                    loaded, fresh = self.games.load(game_id), True
                    continue
                state = loaded.state
                actor = actor_of(caller, state, seat)
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
                record = self.games.log_refusal(
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
                    result = self.games.append(
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
                loaded, fresh = self.games.load(game_id), True
                continue
            submitted, snapshot = self._accepted(
                caller, game_id, loaded, attempt, result
            )
            if snapshot is not None:
                self.games.save_snapshot(snapshot)
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
        with self.metrics.command(game_id, self.games) as counted:
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

        def slowly(refused: tuple[int, Exception] | None = None) -> Submitted:
            return self._submit(
                caller,
                game_id,
                seat,
                command_id,
                command,
                expected_version,
                refused=refused,
            )

        loaded = self.games.cached(game_id)
        if loaded is None:
            return await asyncio.to_thread(slowly)
        try:
            attempt = self._attempt(
                caller, loaded, seat, command_id, command, expected_version
            )
        except (PermissionDenied, Aborted, DomainError) as error:
            # Checked against the store's latest state and the command log
            # on a thread, without deciding it again on the same state.
            return await asyncio.to_thread(slowly, (loaded.state.version, error))
        try:
            with self.tracer.start_as_current_span("append"), self.metrics.timed():
                result = await self.games.append_async(
                    game_id, attempt.version, attempt.new_events, attempt.command
                )
        except (ConcurrencyError, DuplicateCommand):
            return await asyncio.to_thread(slowly)
        submitted, snapshot = self._accepted(caller, game_id, loaded, attempt, result)
        if snapshot is not None:
            await asyncio.to_thread(self.games.save_snapshot, snapshot)
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
        if command_id.startswith(TIMEOUT_PREFIX) and not caller.service:
            raise InvalidArgument(
                "COMMAND_ID_RESERVED",
                f"command_id {command_id!r} is reserved for the service's timeouts.",
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
        if not caller.token and not caller.bot and not caller.service:
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
        refused: tuple[int, Exception] | None = None,
    ) -> _Attempt:
        """Decide ``command`` on ``loaded``: the append it makes. Raises
        PermissionDenied (NOT_YOUR_SEAT) or Aborted (VERSION_MISMATCH) when
        the command does not fit this state, the rules' DomainError when
        they refuse it; or ``refused``'s error, undecided, when that says
        this state (its version) already refused it so."""
        state = loaded.state
        if refused is not None and refused[0] == state.version:
            raise refused[1]
        with self.tracer.start_as_current_span("decide"):
            if not caller.admin and seat not in acts_for(caller, state):
                raise PermissionDenied(
                    "NOT_YOUR_SEAT",
                    f"Your token does not act for seat {seat_number(seat)}.",
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
                actor_of(caller, state, seat),
                _payload(seat, command),
                outcome,
                state.version,
            )
            return _Attempt(
                state.version, events, [new_event(e) for e in events], logged, after
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
        new_state, snapshot = self.games.advance(
            game_id, loaded, attempt.after, result.last_version
        )
        viewer = caller.viewer(new_state)
        recorded = self.games.recorded(game_id, attempt.new_events, result)
        submitted = Submitted(
            result.last_version,
            [
                (r, loaded.session.redact(e, viewer))
                for r, e in zip(recorded, attempt.events, strict=True)
            ],
            False,
        )
        return submitted, snapshot

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
        loaded = self.games.load(game_id)
        viewer = caller.viewer(loaded.state)
        recorded = self.store.read_stream(
            game_id, outcome.first_version, outcome.last_version
        )
        return Submitted(
            outcome.last_version,
            [
                (r, loaded.session.redact(decode_recorded(loaded.session, r), viewer))
                for r in recorded
            ],
            True,
        )
