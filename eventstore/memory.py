"""An in-memory event store: the port's behaviour without a database.

For unit tests of the application layer and for in-process simulation. It
keeps everything in dicts under one lock; nothing survives the process.
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
)


class InMemoryEventStore(EventStore):
    """The event store port, in memory."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
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
        if not events:
            raise ValueError("an append needs at least one event")
        for event in events:
            json.dumps(event.data, allow_nan=False)  # JSON only, as a database
        with self._lock:
            if command is not None and (game_id, command.command_id) in self._commands:
                raise DuplicateCommand(self._commands[game_id, command.command_id])
            stream = self._streams.get(game_id, [])
            if len(stream) != expected_version:
                raise ConcurrencyError(game_id, expected_version, len(stream))
            self._streams[game_id] = stream
            now = datetime.now(UTC)
            for offset, event in enumerate(events, start=1):
                recorded = RecordedEvent(
                    game_id=game_id,
                    version=expected_version + offset,
                    position=len(self._log) + 1,
                    type=event.type,
                    schema_version=event.schema_version,
                    data=event.data,
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
            self._lock.notify_all()
            return AppendResult(
                expected_version + 1,
                expected_version + len(events),
                len(self._log),
                now,
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
        if command.outcome.accepted:
            raise ValueError("a rejection needs an outcome with an error_kind")
        with self._lock:
            existing = self._commands.get((game_id, command.command_id))
            if existing is not None:
                return existing
            return self._log_command(game_id, command, datetime.now(UTC))

    def find_command(self, game_id: str, command_id: str) -> CommandRecord | None:
        with self._lock:
            return self._commands.get((game_id, command_id))

    def read_commands(self, game_id: str) -> list[CommandRecord]:
        with self._lock:
            return sorted(
                (c for (g, _), c in self._commands.items() if g == game_id),
                key=lambda c: c.sequence,
            )

    def read_stream(
        self, game_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        with self._lock:
            stream = self._streams.get(game_id, [])
            end = len(stream) if to_version is None else min(to_version, len(stream))
            return stream[max(from_version, 1) - 1 : end]

    def stream_version(self, game_id: str) -> int:
        with self._lock:
            return len(self._streams.get(game_id, []))

    def read_all(
        self, after_position: int = 0, limit: int = 1000
    ) -> list[RecordedEvent]:
        with self._lock:
            return self._log[after_position : after_position + limit]

    def last_position(self) -> int:
        with self._lock:
            return len(self._log)

    def list_streams(self, after_game_id: str = "", limit: int = 100) -> list[str]:
        with self._lock:
            return sorted(g for g in self._streams if g > after_game_id)[:limit]

    def save_snapshot(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._snapshots[snapshot.game_id] = snapshot

    def load_snapshot(self, game_id: str) -> Snapshot | None:
        with self._lock:
            return self._snapshots.get(game_id)

    def wait_for_append(self, after_position: int, timeout: float) -> bool:
        with self._lock:
            return self._lock.wait_for(
                lambda: len(self._log) > after_position, timeout=timeout
            )

    def import_game(
        self,
        game_id: str,
        events: Sequence[RecordedEvent],
        commands: Sequence[CommandRecord],
    ) -> AppendResult:
        versions = [e.version for e in events]
        if not events or versions != list(range(1, len(events) + 1)):
            raise ValueError("an imported game needs versions 1..n without gaps")
        with self._lock:
            if self._streams.get(game_id):
                raise ConcurrencyError(game_id, 0, len(self._streams[game_id]))
            stream = self._streams.setdefault(game_id, [])
            for event in events:
                recorded = replace(event, game_id=game_id, position=len(self._log) + 1)
                stream.append(recorded)
                self._log.append(recorded)
            for record in sorted(commands, key=lambda c: c.sequence):
                self._commands[game_id, record.command_id] = replace(
                    record, game_id=game_id, sequence=len(self._commands) + 1
                )
            self._lock.notify_all()
            return AppendResult(1, len(events), len(self._log))

    def close(self) -> None:
        pass
