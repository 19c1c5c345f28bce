"""An in-memory event store: the port's behaviour without a database.

What it is for: unit tests of the application layer (``service``) and
in-process simulation, where a database would only cost time. It keeps
every promise of the port (:class:`eventstore.base.EventStore`), and the
store contract (``tests/eventstore/test_contract.py``) runs on it as on
SQLite and PostgreSQL: versions from 1 without gaps; global positions dense
and in commit order; :class:`~eventstore.base.ConcurrencyError` and
:class:`~eventstore.base.DuplicateCommand` where the SQL stores raise them,
writing nothing; the command log and its retries; snapshots; imports;
waits and subscriptions in threads and on event loops (a waiting coroutine
holds no thread). Event data, command payloads and snapshot states are kept
as JSON text, so what reads back is what a database gives back (new
objects, lists for tuples, string keys) and what is not JSON is refused.

What it does not do:

* persist: everything lives in one object's dicts under one lock; nothing
  survives the process or a new ``InMemoryEventStore``, and :meth:`close`
  changes nothing;
* share: one object is the whole store, with no URL
  (:func:`eventstore.factory.open_store` does not open it); no other store
  object or process reads its events or wakes its waiters;
* SQL: no schema or migrations, no engine or connections for read models
  (the game list projection needs a SQL store, so a server on this store
  runs without it), no plain SQL for tests to inspect or sabotage;
* fail as a database fails: it never raises
  :class:`~eventstore.base.StoreUnavailable`;
* scale: every call takes the one lock, ``read_commands`` scans every
  game's commands, and memory grows with the log.

The contract cases that need more than the port say so with
``@pytest.mark.requires`` and do not run on this store
(``tests/eventstore/backends.py``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from eventstore.base import (
    AppendResult,
    CommandRecord,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    NewCommand,
    NewEvent,
    RecordedEvent,
    Snapshot,
    check_append,
    check_import,
    check_rejection,
    encode_json,
    utc,
)
from eventstore.loops import AppendNotifier


class InMemoryEventStore(EventStore):
    """The event store port, in memory (see the module's docstring). Its
    records keep event data, command payloads and snapshot states as JSON
    text, decoded on every read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notifier = AppendNotifier()
        self._streams: dict[str, list[RecordedEvent]] = {}
        self._log: list[RecordedEvent] = []
        self._commands: dict[tuple[str, str], CommandRecord] = {}
        self._snapshots: dict[str, Snapshot] = {}

    def append(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command: NewCommand | None = None,
    ) -> AppendResult:
        check_append(events, expected_version)
        encoded = [encode_json(event.data) for event in events]
        if command is not None:
            command = replace(command, payload=encode_json(command.payload))
        with self._lock:
            if command is not None and (game_id, command.command_id) in self._commands:
                raise DuplicateCommand(
                    _decoded_command(self._commands[game_id, command.command_id])
                )
            stream = self._streams.get(game_id, [])
            if len(stream) != expected_version:
                raise ConcurrencyError(game_id, expected_version, len(stream))
            self._streams[game_id] = stream
            now = datetime.now(UTC)
            for offset, (event, data) in enumerate(
                zip(events, encoded, strict=True), 1
            ):
                recorded = RecordedEvent(
                    game_id=game_id,
                    version=expected_version + offset,
                    position=len(self._log) + 1,
                    type=event.type,
                    schema_version=event.schema_version,
                    data=data,
                    recorded_at=now,
                )
                stream.append(recorded)
                self._log.append(recorded)
            if command is not None:
                outcome = replace(
                    command.outcome,
                    first_version=expected_version + 1,
                    last_version=expected_version + len(events),
                )
                self._log_command(game_id, replace(command, outcome=outcome), now)
            last_position = len(self._log)
        self._notifier.advance(last_position)
        return AppendResult(
            expected_version + 1, expected_version + len(events), last_position, now
        )

    def _log_command(
        self, game_id: str, command: NewCommand, now: datetime
    ) -> CommandRecord:
        record = CommandRecord(
            game_id=game_id,
            command_id=command.command_id,
            actor=command.actor,
            payload=command.payload,
            outcome=command.outcome,
            decided_at_version=command.decided_at_version,
            recorded_at=now,
            sequence=len(self._commands) + 1,
        )
        self._commands[game_id, command.command_id] = record
        return record

    def record_rejection(self, game_id: str, command: NewCommand) -> CommandRecord:
        check_rejection(command)
        command = replace(command, payload=encode_json(command.payload))
        with self._lock:
            record = self._commands.get((game_id, command.command_id))
            if record is None:
                record = self._log_command(game_id, command, datetime.now(UTC))
            return _decoded_command(record)

    def find_command(self, game_id: str, command_id: str) -> CommandRecord | None:
        with self._lock:
            record = self._commands.get((game_id, command_id))
        return None if record is None else _decoded_command(record)

    def read_commands(
        self, game_id: str, after_sequence: int = 0, limit: int | None = None
    ) -> list[CommandRecord]:
        with self._lock:
            records = [
                c
                for (g, _), c in self._commands.items()
                if g == game_id and c.sequence > after_sequence
            ]
        records.sort(key=lambda c: c.sequence)
        if limit is not None:
            records = records[: max(limit, 0)]
        return [_decoded_command(c) for c in records]

    def count_refusals(self, game_id: str) -> int:
        with self._lock:
            return sum(
                1
                for (g, _), c in self._commands.items()
                if g == game_id and not c.outcome.accepted
            )

    def read_stream(
        self, game_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        with self._lock:
            stream = self._streams.get(game_id, [])
            end = len(stream) if to_version is None else max(to_version, 0)
            events = stream[max(from_version, 1) - 1 : end]
        return [_decoded_event(e) for e in events]

    def stream_version(self, game_id: str) -> int:
        with self._lock:
            return len(self._streams.get(game_id, []))

    def read_all(
        self, after_position: int = 0, limit: int = 1000
    ) -> list[RecordedEvent]:
        start = max(after_position, 0)  # positions are list indices + 1
        with self._lock:
            events = self._log[start : start + limit]
        return [_decoded_event(e) for e in events]

    def last_position(self) -> int:
        with self._lock:
            return len(self._log)

    def list_streams(self, after_game_id: str = "", limit: int = 100) -> list[str]:
        with self._lock:
            return sorted(g for g in self._streams if g > after_game_id)[:limit]

    def save_snapshot(self, snapshot: Snapshot) -> None:
        encoded = replace(snapshot, state=encode_json(snapshot.state))
        with self._lock:
            self._snapshots[snapshot.game_id] = encoded

    def load_snapshot(self, game_id: str) -> Snapshot | None:
        with self._lock:
            snapshot = self._snapshots.get(game_id)
        if snapshot is None:
            return None
        return replace(snapshot, state=json.loads(snapshot.state))

    def wait_for_append(self, after_position: int, timeout: float) -> bool:
        return self._notifier.wait_past(after_position, timeout)

    def interrupt_waits(self) -> None:
        self._notifier.interrupt()

    async def wait_for_append_async(self, after_position: int, timeout: float) -> bool:
        """:meth:`wait_for_append` without holding a thread."""
        return await self._notifier.wait_past_async(after_position, timeout)

    def import_game(
        self,
        game_id: str,
        events: Sequence[RecordedEvent],
        commands: Sequence[CommandRecord],
    ) -> AppendResult:
        check_import(events)
        events = [
            replace(e, data=encode_json(e.data), recorded_at=utc(e.recorded_at))
            for e in events
        ]
        commands = [
            replace(c, payload=encode_json(c.payload), recorded_at=utc(c.recorded_at))
            for c in commands
        ]
        command_ids = {(game_id, c.command_id) for c in commands}
        with self._lock:
            if self._streams.get(game_id):
                raise ConcurrencyError(game_id, 0, len(self._streams[game_id]))
            if len(command_ids) < len(commands) or command_ids & self._commands.keys():
                # As in a database, a command id is logged once per game.
                raise ConcurrencyError(game_id, 0, None)
            stream = self._streams.setdefault(game_id, [])
            for event in events:
                recorded = replace(event, game_id=game_id, position=len(self._log) + 1)
                stream.append(recorded)
                self._log.append(recorded)
            for record in sorted(commands, key=lambda c: c.sequence):
                self._commands[game_id, record.command_id] = replace(
                    record, game_id=game_id, sequence=len(self._commands) + 1
                )
            last_position = len(self._log)
        self._notifier.advance(last_position)
        return AppendResult(1, len(events), last_position)

    def close(self) -> None:
        pass


def _decoded_event(event: RecordedEvent) -> RecordedEvent:
    return replace(event, data=json.loads(event.data))


def _decoded_command(record: CommandRecord) -> CommandRecord:
    return replace(record, payload=json.loads(record.payload))
