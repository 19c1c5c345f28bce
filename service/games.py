"""Loading games and writing them: the cache, snapshots, the state at a
version, and the one door every change to the log goes through.

A game is loaded from the in-process cache (checked against the store's
version when asked), else from its latest snapshot and the events after it,
under the rules version it was created with (:func:`session_of`).

Writes: a use case loads a game here, decides on it, and appends what it
decided here (:meth:`Games.create`, :meth:`Games.commit`,
:meth:`Games.append`, :meth:`Games.log_refusal`, :meth:`Games.import_game`),
which caches the new state and saves a snapshot when one is due. No other
service module calls the store's writing methods
(tests/service/test_one_door_for_writes.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import Any

from domain import codec, registry
from domain.rules import GameRules
from domain.session import Session, SessionState, event_schema_version
from eventstore.base import (
    READ_AFTER,
    AppendResult,
    CommandRecord,
    EventStore,
    NewCommand,
    NewEvent,
    RecordedEvent,
    Snapshot,
)
from service import telemetry
from service.errors import FailedPrecondition, InvalidArgument, NotFound
from service.inputs import quote

SNAPSHOT_EVERY = 200
CACHE_SIZE = 4096
#: Past states kept for replays (:meth:`Games.state_at`): of this many games,
#: this many states each (the most recently served).
PAST_GAMES = 32
PAST_STATES = 16


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


def session_of(game_id: str, created: RecordedEvent) -> Session[Any]:
    """The rules a stored game is played by: its game type's, at the rules
    version it was created under (``created`` is its GameCreated event)."""
    return rules_session(
        game_id,
        str(created.data.get("game_type", "")),
        str(created.data.get("rules_version", "")),
    )


def rules_session(game_id: str, game_type: str, rules_version: str) -> Session[Any]:
    """The rules of ``game_type`` at ``rules_version``, for ``game_id``:
    NotFound for a game type this service does not run, FailedPrecondition
    (``RULES_VERSION_UNAVAILABLE``) for a rules version it no longer runs."""
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


def reads_after(position: int) -> None:
    """The log position the current call's reads must show (the caller's
    ``strata-read-after``: a position an earlier answer gave it): the store
    reads a standby only once it has passed it. Set by the transports'
    door, in the call's context."""
    READ_AFTER.set(position)


def decode_recorded(session: Session[Any], event: RecordedEvent) -> Any:
    """A stored event decoded (upcast) for ``session``."""
    return session.decode_event(event.type, event.data, event.schema_version)


def snapshot_schema(session: Session[Any]) -> int:
    digest = hashlib.sha256(
        f"{session.rules.game_type}/{session.rules.rules_version}".encode()
    ).digest()
    return int.from_bytes(digest[:3], "big")


def new_event(event: Any) -> NewEvent:
    return NewEvent(
        type=type(event).__name__,
        data=codec.encode(event),
        schema_version=event_schema_version(type(event)),
    )


class Games:
    """Games loaded from one store, with a cache of the recent ones."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.tracer = telemetry.step_tracer()
        self._cache: OrderedDict[str, Loaded] = OrderedDict()
        self._cache_lock = threading.Lock()
        #: Past states served (:meth:`state_at`), by game (the most recent
        #: :data:`PAST_GAMES`) and version: a replay that steps through a
        #: game folds each step from the one before, not from the start.
        self._past: OrderedDict[str, OrderedDict[int, SessionState[Any]]] = (
            OrderedDict()
        )

    def load(self, game_id: str, refresh: bool = True, nearby: bool = False) -> Loaded:
        """The game's latest state (cached, caught up with the store).
        ``nearby``: for a reader that does not write next (a view, legal
        actions, a replay): the events may come from a hot standby, with
        read your writes (:meth:`EventStore.read_stream_nearby`)."""
        with self.tracer.start_as_current_span("load"):
            return self._load(game_id, refresh, nearby)

    def look(self, game_id: str) -> Loaded:
        """:meth:`load` for a reader: the latest state, from a standby when
        the store has one."""
        return self.load(game_id, nearby=True)

    def _load(self, game_id: str, refresh: bool, nearby: bool = False) -> Loaded:
        read = self.store.read_stream_nearby if nearby else self.store.read_stream
        with self._cache_lock:
            loaded = self._cache.get(game_id)
            if loaded is not None:
                self._cache.move_to_end(game_id)
        if loaded is None:
            loaded = self._load_cold(game_id, read)
        elif refresh:
            newer = read(game_id, loaded.state.version + 1)
            if newer:
                state = loaded.session.fold(
                    (decode_recorded(loaded.session, e) for e in newer), loaded.state
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

    def _load_cold(
        self, game_id: str, read: Callable[..., list[RecordedEvent]]
    ) -> Loaded:
        first = self.store.read_stream(game_id, 1, 1)
        if not first:
            raise NotFound("GAME_NOT_FOUND", f"No game {game_id!r}.")
        created = first[0]
        session = session_of(game_id, created)
        state: SessionState[Any] | None = None
        snapshot = self.store.load_snapshot(game_id)
        if snapshot is not None and snapshot.schema_version == snapshot_schema(session):
            try:
                state = session.decode_state(snapshot.state)
            except (codec.CodecError, TypeError, ValueError, KeyError):
                state = None  # unreadable: rebuild from the events
        from_version = 1 if state is None else state.version + 1
        events = read(game_id, from_version)
        state = session.fold((decode_recorded(session, e) for e in events), state)
        return Loaded(game_id, session, state, created.recorded_at)

    def state_at(self, game_id: str, version: int) -> Loaded:
        """The game as it was after ``version`` events (read nearby: the
        events of a version once known never change)."""
        loaded = self.look(game_id)
        if version < 1 or version > loaded.state.version:
            raise InvalidArgument(
                "VERSION_OUT_OF_RANGE",
                f"Version {version} is not between 1 and {loaded.state.version}.",
                "at_version",
            )
        if version == loaded.state.version:
            return loaded
        start = self._past_before(game_id, version)
        events = self.events_through(
            game_id, 1 if start is None else start.version + 1, version
        )
        state = loaded.session.fold(
            (decode_recorded(loaded.session, e) for e in events), start
        )
        self._keep_past(game_id, state)
        return dataclasses.replace(loaded, state=state)

    def _past_before(self, game_id: str, version: int) -> SessionState[Any] | None:
        """The latest past state kept of the game at or before ``version``
        (events of a version once known never change: any is a start)."""
        with self._cache_lock:
            kept = self._past.get(game_id)
            if kept is None:
                return None
            self._past.move_to_end(game_id)
            start = max((v for v in kept if v <= version), default=None)
            return None if start is None else kept[start]

    def _keep_past(self, game_id: str, state: SessionState[Any]) -> None:
        with self._cache_lock:
            kept = self._past.setdefault(game_id, OrderedDict())
            self._past.move_to_end(game_id)
            kept[state.version] = state
            kept.move_to_end(state.version)
            while len(kept) > PAST_STATES:
                kept.popitem(last=False)
            while len(self._past) > PAST_GAMES:
                self._past.popitem(last=False)

    def events_through(
        self, game_id: str, from_version: int, through_version: int
    ) -> list[RecordedEvent]:
        """The game's events ``from_version`` to ``through_version``, a
        version this process has seen: read nearby (a standby), and what
        the standby has not replayed yet from the primary."""
        events = self.store.read_stream_nearby(game_id, from_version, through_version)
        have = events[-1].version if events else from_version - 1
        if have < through_version:
            events += self.store.read_stream(game_id, have + 1, through_version)
        return events

    def cached(self, game_id: str) -> Loaded | None:
        """The game's cached state, if any (not checked against the store).
        Without the cache's lock: the event loop asks this of every command,
        and a worker thread holding the lock when the interpreter switched
        away from it would stall the loop until it ran again; one ``get`` of
        the (C) ordered dictionary is atomic under the GIL."""
        return self._cache.get(game_id)

    def for_command(self, game_id: str) -> tuple[Loaded, bool]:
        """The cached state (not checked against the store), else a fresh
        load; and whether it is fresh."""
        loaded = self.cached(game_id)
        if loaded is not None:
            return loaded, False
        return self.load(game_id), True

    def recorded(
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

    def create(self, game_id: str, created: Any, command: NewCommand) -> None:
        """Append a new game's first event (its GameCreated) at version 0,
        with the creation's ``command``. Raises the store's ConcurrencyError
        or DuplicateCommand when the game exists already."""
        self.store.append(game_id, 0, [new_event(created)], command)

    def append(
        self, game_id: str, version: int, events: list[NewEvent], command: NewCommand
    ) -> AppendResult:
        """Append a command's ``events``, decided at ``version``; the caller
        caches the new state with :meth:`advance` and saves its snapshot
        with :meth:`save_snapshot` (:meth:`commit` does all three)."""
        return self.store.append(game_id, version, events, command)

    async def append_async(
        self, game_id: str, version: int, events: list[NewEvent], command: NewCommand
    ) -> AppendResult:
        """:meth:`append` for a caller on an event loop: no thread waits for
        the commit."""
        return await self.store.append_async(game_id, version, events, command)

    def log_refusal(self, game_id: str, command: NewCommand) -> CommandRecord:
        """Log a refused command (nothing appended to the game): the record
        the log keeps for its id, which is another try's when one was
        logged first."""
        return self.store.record_rejection(game_id, command)

    def save_snapshot(self, snapshot: Snapshot) -> None:
        self.store.save_snapshot(snapshot)

    def import_game(
        self,
        game_id: str,
        events: list[RecordedEvent],
        commands: list[CommandRecord],
    ) -> Loaded:
        """Store an exported game's events and command log as they are, and
        load it. Raises the store's ConcurrencyError when the game exists."""
        self.store.import_game(game_id, events, commands)
        return self.load(game_id)

    def commit(
        self, game_id: str, loaded: Loaded, events: list[Any], command: NewCommand
    ) -> int:
        """The unit of work's last step, for a change decided on ``loaded``
        (the lobby's seats, starts, leaves, expiries, rematches): append
        ``events`` with ``command`` at ``loaded``'s version, then cache the
        new state (:meth:`after_append`); returns the new version. Raises
        the store's ConcurrencyError or DuplicateCommand when the game
        changed meanwhile or the command was logged already: the caller
        decides again, or answers with what was logged."""
        result = self.append(
            game_id, loaded.state.version, [new_event(e) for e in events], command
        )
        self.after_append(game_id, loaded, events, result.last_version)
        return result.last_version

    def after_append(
        self, game_id: str, loaded: Loaded, events: list[Any], version: int
    ) -> SessionState[Any]:
        """Cache the new state; snapshot it every SNAPSHOT_EVERY versions."""
        state, snapshot = self.advance(
            game_id, loaded, loaded.session.fold(events, loaded.state), version
        )
        if snapshot is not None:
            self.save_snapshot(snapshot)
        return state

    def advance(
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
                snapshot_schema(loaded.session),
                loaded.session.encode_state(state),
            )
        return state, snapshot
