"""The port every event store implements, and the records it deals in.

A game is one stream, keyed by ``game_id``. Versions in a stream start at 1
and have no gaps; ``(game_id, version)`` is unique. Every event also gets a
global ``position``, unique and growing along the global log: a reader that
follows the log from a position never skips an event that a concurrent
writer commits late, and never sees one twice. Positions need not be dense
(on PostgreSQL they follow transaction ids; see ``eventstore.sql``), so a
reader compares them, never counts on them.
"""

from __future__ import annotations

import abc
import asyncio
import contextvars
import json
import threading
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Protocol

JSON = Any


class StoreError(Exception):
    """Base of the store's errors."""


class ConcurrencyError(StoreError):
    """The stream is not at the expected version (someone else appended first)."""

    def __init__(self, game_id: str, expected: int, actual: int | None = None) -> None:
        super().__init__(
            f"game {game_id}: expected version {expected}, stream is at {actual}"
        )
        self.game_id = game_id
        self.expected = expected
        self.actual = actual


class DuplicateCommand(StoreError):
    """The command id was already recorded for this game.

    ``record`` is the first record, with the command's original outcome.
    """

    def __init__(self, record: CommandRecord) -> None:
        super().__init__(f"command {record.command_id} already recorded")
        self.record = record


class StoreUnavailable(StoreError):
    """The database cannot be reached (maps to UNAVAILABLE)."""


@dataclass(frozen=True)
class NewEvent:
    """An event to append: its type name, schema version and JSON body."""

    type: str
    data: JSON
    schema_version: int = 1


@dataclass(frozen=True)
class RecordedEvent:
    """An event as stored."""

    game_id: str
    version: int
    position: int
    type: str
    schema_version: int
    data: JSON
    recorded_at: datetime


@dataclass(frozen=True)
class MatchingEvents:
    """What :meth:`EventStore.read_all_matching` found in a stretch of the
    global log: the ``scanned`` events after the position asked for, up to
    position ``through`` (the position asked for when there were none), and
    of those the ones that matched, in position order."""

    events: list[RecordedEvent]
    through: int
    scanned: int


@dataclass(frozen=True)
class CommandOutcome:
    """What a command did: the versions it appended, or the error it got."""

    first_version: int = 0
    last_version: int = 0
    error_kind: str = ""
    error_reason: str = ""
    error_message: str = ""

    @property
    def accepted(self) -> bool:
        return not self.error_kind


@dataclass(frozen=True)
class NewCommand:
    """A command to log with its outcome (idempotency and verified replay)."""

    command_id: str
    actor: str
    payload: JSON
    outcome: CommandOutcome = field(default_factory=CommandOutcome)
    decided_at_version: int = 0


@dataclass(frozen=True)
class CommandRecord:
    """A logged command."""

    game_id: str
    command_id: str
    actor: str
    payload: JSON
    outcome: CommandOutcome
    decided_at_version: int
    recorded_at: datetime
    sequence: int


@dataclass(frozen=True)
class AppendResult:
    """Versions and global positions the append was given, and the time it
    recorded on its events (None from a store that does not say)."""

    first_version: int
    last_version: int
    last_position: int
    recorded_at: datetime | None = None


@dataclass(frozen=True)
class Snapshot:
    """A game's folded state at ``version``, encoded with ``schema_version``."""

    game_id: str
    version: int
    schema_version: int
    state: JSON


#: ``encode_json``'s encoder, made once: ``json.dumps`` with any argument
#: makes a new encoder a call, which cost more than encoding an event's
#: data (3.8 against 1.7 µs for a small event).
_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"))
_C_ENCODE = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None,  # no check for circular structures: the data is a fold's output
        _ENCODER.default,
        encode_basestring,
        None,
        ":",
        ",",
        False,
        False,
        False,
    )
)


def encode_json(value: JSON) -> str:
    """The JSON text every backend stores for event data, payloads and
    snapshots (compact); NaN and infinities are refused with ``ValueError``,
    other values that are not JSON with ``TypeError``."""
    if _C_ENCODE is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def utc(time: datetime) -> datetime:
    """``time`` in UTC, as every backend stores it; a time without a zone is
    refused with ``ValueError``."""
    if time.tzinfo is None:
        raise ValueError(f"naive datetime {time!r}: timestamps must be aware")
    return time.astimezone(UTC)


def check_append(events: Sequence[NewEvent], expected_version: int) -> None:
    """What every backend refuses of an append before writing anything
    (``ValueError``): an empty batch (a command that changes nothing is a
    rejection: :meth:`EventStore.record_rejection`), a negative version."""
    if not events:
        raise ValueError("an append needs at least one event")
    if expected_version < 0:
        raise ValueError(f"expected_version {expected_version} is negative")


def check_import(events: Sequence[RecordedEvent]) -> None:
    """What every backend refuses of an imported game (``ValueError``):
    versions that are not 1..n without gaps."""
    versions = [e.version for e in events]
    if not events or versions != list(range(1, len(events) + 1)):
        raise ValueError("an imported game needs versions 1..n without gaps")


def check_rejection(command: NewCommand) -> None:
    """What every backend refuses of a logged refusal (``ValueError``): an
    outcome that carries no error."""
    if command.outcome.accepted:
        raise ValueError("a rejection needs an outcome with an error_kind")


#: The position a caller's read must show at least (read your writes across
#: replicas): set per call by the service from the caller's
#: ``strata-read-after`` header, the ``strata-position`` an earlier answer
#: (of any replica) gave it. A store that reads from standbys waits for them
#: to pass it; one that reads its primary always does.
READ_AFTER: contextvars.ContextVar[int] = contextvars.ContextVar(
    "strata_read_after", default=0
)


@dataclass(frozen=True)
class PoolUsage:
    """One of the store's connection pools (or dedicated connections): its
    name, the connections in use and idle, and the most it may open."""

    name: str
    used: int
    idle: int
    max: int


class ReadModels(Protocol):
    """The read models a store keeps in the database of its log (checkpoints
    written in the transactions that apply a batch): what projections use.
    The SQL stores' is :class:`eventstore.readmodels.SQLReadModels`;
    ``table`` and ``statement`` are SQLAlchemy's."""

    def checkpoint(self, name: str) -> int:
        """The position projection ``name`` has applied up to (0: none)."""
        ...

    def apply(
        self,
        name: str,
        from_position: int,
        to_position: int,
        table: Any,
        rows: Sequence[Mapping[str, Any]],
    ) -> bool:
        """Upsert ``rows`` and move checkpoint ``name`` from
        ``from_position`` to ``to_position`` in one transaction; False when
        the checkpoint was elsewhere."""
        ...

    def reset(self, name: str, table: Any) -> None:
        """Empty ``table`` and put checkpoint ``name`` back to zero."""
        ...

    def query(self, statement: Any) -> list[Any]:
        """The rows of a read of the read models."""
        ...

    def query_nearby(self, statement: Any, name: str, at_least: int) -> list[Any]:
        """:meth:`query`, from a hot standby that has applied ``name`` up to
        ``at_least`` when there is one."""
        ...


class EventStore(abc.ABC):
    """The port. Implementations: ``SQLiteEventStore``, ``PostgresEventStore``
    and, for tests and simulation, ``InMemoryEventStore``."""

    def read_models(self) -> ReadModels | None:
        """The read models kept in the same database as the log (their
        checkpoints written in the transactions that apply a batch), or None
        for a backend that keeps none (the in-memory store): a capability,
        asked of the port instead of its class."""
        return None

    @abc.abstractmethod
    def append(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command: NewCommand | None = None,
    ) -> AppendResult:
        """Append ``events`` atomically after ``expected_version``.

        Raises :class:`ConcurrencyError` when the stream is at another version
        (no event of the batch is written). With ``command``, the command is
        logged in the same transaction; if its ``command_id`` is already
        logged for the game, raises :class:`DuplicateCommand` carrying the
        first record and writes nothing. An empty batch or a negative
        ``expected_version`` raises ``ValueError``, data that is not JSON
        ``ValueError`` (NaN, infinities) or ``TypeError``; nothing is written.
        """

    async def append_async(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command: NewCommand | None = None,
    ) -> AppendResult:
        """:meth:`append` for a caller on an event loop, with the same
        contract. This default runs :meth:`append` in the loop's default
        executor; a store whose appends can wait without a thread of their
        own overrides it."""
        return await asyncio.to_thread(
            self.append, game_id, expected_version, events, command
        )

    @abc.abstractmethod
    def record_rejection(self, game_id: str, command: NewCommand) -> CommandRecord:
        """Log a refused command (no events) so a retry gets the same answer.

        Returns the first record when the command id was already logged.
        """

    @abc.abstractmethod
    def find_command(self, game_id: str, command_id: str) -> CommandRecord | None:
        """The logged command with this id, if any."""

    @abc.abstractmethod
    def read_commands(
        self, game_id: str, after_sequence: int = 0, limit: int | None = None
    ) -> list[CommandRecord]:
        """A game's logged commands in the order they were logged: those with
        ``sequence > after_sequence``, at most ``limit`` of them (all when
        None)."""

    @abc.abstractmethod
    def count_refusals(self, game_id: str) -> int:
        """How many refused commands a game's command log holds."""

    @abc.abstractmethod
    def read_stream(
        self, game_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """Events of a game with ``from_version <= version <= to_version``."""

    def read_stream_nearby(
        self, game_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """:meth:`read_stream` for a reader that does not write next (a view,
        a replay, a watcher): a store with hot standbys answers it from one
        (PostgreSQL: ``STRATA_READ_DATABASE_URL``), never older than what
        this store has written or been told of (read your writes) nor than
        an earlier answer, and always a prefix of the stream (no version
        missing before the last one). Here: the stream itself."""
        return self.read_stream(game_id, from_version, to_version)

    @abc.abstractmethod
    def stream_version(self, game_id: str) -> int:
        """The last version of a game's stream (0 when it has none)."""

    @abc.abstractmethod
    def read_all(
        self, after_position: int = 0, limit: int = 1000
    ) -> list[RecordedEvent]:
        """Up to ``limit`` events of every game with position > ``after_position``,
        in position order. Never returns an event while an earlier position
        could still be committed."""

    def read_all_matching(
        self,
        after_position: int,
        limit: int,
        event_types: Collection[str] = (),
        game_ids: Collection[str] = (),
    ) -> MatchingEvents:
        """Of the events :meth:`read_all` would return (up to ``limit`` after
        ``after_position``), those whose type is in ``event_types`` or whose
        game is in ``game_ids``, and how far that read went: a follower that
        needs few of the log's events moves along it without receiving or
        decoding the others. This default filters :meth:`read_all`."""
        events = self.read_all(after_position, limit)
        types, games = set(event_types), set(game_ids)
        return MatchingEvents(
            [e for e in events if e.type in types or e.game_id in games],
            events[-1].position if events else after_position,
            len(events),
        )

    def known_position(self) -> int:
        """The highest position this store has appended or been told of,
        without asking the database (0: it does not keep one): what the
        service hands callers as ``strata-position``."""
        return 0

    @abc.abstractmethod
    def last_position(self) -> int:
        """The highest global position committed (0 for an empty store)."""

    def events_after(self, position: int, limit: int = 100_000) -> int:
        """How many events the global log holds after ``position``, counting
        up to ``limit`` (a follower's lag: positions need not be dense, so
        their difference is not it)."""
        count = 0
        while count < limit:
            events = self.read_all(position, min(1000, limit - count))
            if not events:
                break
            count += len(events)
            position = events[-1].position
        return count

    def connections_in_use(self) -> int | None:
        """Database connections checked out now (None: not a pooled store)."""
        return None

    def connection_pools(self) -> list[PoolUsage]:
        """Every pool or dedicated connection the store holds to its
        databases, with how many connections are in use and idle (empty:
        a store that holds none)."""
        return []

    def commit_queue(self) -> int | None:
        """Appends waiting for the group commit now (None: no group commit)."""
        return None

    def check_health(self) -> None:
        """Raise :class:`StoreUnavailable` unless the store answers now (a
        health check's probe: quick, and it must notice a database that
        went away)."""
        self.last_position()

    @abc.abstractmethod
    def list_streams(self, after_game_id: str = "", limit: int = 100) -> list[str]:
        """Game ids in id order, after ``after_game_id``."""

    @abc.abstractmethod
    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Store (or replace) the snapshot of a game."""

    @abc.abstractmethod
    def load_snapshot(self, game_id: str) -> Snapshot | None:
        """The latest snapshot of a game, if any."""

    @abc.abstractmethod
    def wait_for_append(self, after_position: int, timeout: float) -> bool:
        """Block until an event past ``after_position`` may exist or ``timeout``
        elapses. True if woken by an append (a hint: callers re-read)."""

    @abc.abstractmethod
    def interrupt_waits(self) -> None:
        """Wake every thread in :meth:`wait_for_append` now: each returns as
        if its timeout had passed (unless an append came). A server that
        stops calls it, so its background threads notice at once instead of
        at the end of their wait; a wait begun afterwards waits as usual."""

    @abc.abstractmethod
    def import_game(
        self,
        game_id: str,
        events: Sequence[RecordedEvent],
        commands: Sequence[CommandRecord],
    ) -> AppendResult:
        """Write a whole game exported from another store, in one transaction:
        its events (versions 1..n, with their recording times; new global
        positions) and its command log. Raises :class:`ConcurrencyError`, and
        writes nothing, if the game already has events or has one of the
        commands logged."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections and background threads."""

    def subscribe(
        self,
        after_position: int = 0,
        stop: threading.Event | None = None,
        batch: int = 500,
        idle_timeout: float = 1.0,
    ) -> Iterator[RecordedEvent]:
        """Follow the global log from ``after_position`` forever (until ``stop``)."""
        position = after_position
        while stop is None or not stop.is_set():
            events = self.read_all(position, batch)
            for event in events:
                yield event
                position = event.position
            if len(events) < batch:
                self.wait_for_append(position, idle_timeout)

    def subscribe_stream(
        self,
        game_id: str,
        from_version: int = 1,
        stop: threading.Event | None = None,
        idle_timeout: float = 1.0,
    ) -> Iterator[RecordedEvent]:
        """Follow one game's stream from ``from_version`` (until ``stop``)."""
        version = from_version
        while stop is None or not stop.is_set():
            seen, events = self._stream_tail(game_id, version)
            for event in events:
                yield event
                version = event.version + 1
            if not events:
                self._wait_after_tail(seen, idle_timeout)

    async def subscribe_stream_async(
        self, game_id: str, from_version: int = 1, idle_timeout: float = 1.0
    ) -> AsyncIterator[RecordedEvent]:
        """:meth:`subscribe_stream` for a caller on an event loop, until the
        caller stops iterating: the reads run in the loop's default
        executor, the waits are :meth:`wait_for_append_async`."""
        version = from_version
        while True:
            seen, events = await asyncio.to_thread(self._stream_tail, game_id, version)
            for event in events:
                yield event
                version = event.version + 1
            if not events:
                await self._wait_after_tail_async(seen, idle_timeout)

    def _stream_tail(
        self, game_id: str, version: int
    ) -> tuple[int, list[RecordedEvent]]:
        """A mark to wait past when nothing is new, taken before the read
        (here a position), and the game's events from ``version``."""
        seen = self.last_position()
        return seen, self.read_stream_nearby(game_id, version)

    def _wait_after_tail(self, mark: int, timeout: float) -> None:
        """Wait for an append after the mark :meth:`_stream_tail` took."""
        self.wait_for_append(mark, timeout)

    async def _wait_after_tail_async(self, mark: int, timeout: float) -> None:
        """:meth:`_wait_after_tail` on an event loop."""
        await self.wait_for_append_async(mark, timeout)

    async def wait_for_append_async(self, after_position: int, timeout: float) -> bool:
        """:meth:`wait_for_append` for a caller on an event loop. This
        default waits in the loop's default executor; a store that can wake
        a loop itself overrides it."""
        return await asyncio.to_thread(self.wait_for_append, after_position, timeout)
