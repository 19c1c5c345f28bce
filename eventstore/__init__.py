"""The event store: one small interface, a SQLite and a PostgreSQL implementation."""

from eventstore.base import (
    AppendResult,
    CommandOutcome,
    CommandRecord,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    MatchingEvents,
    NewCommand,
    NewEvent,
    RecordedEvent,
    Snapshot,
    StoreUnavailable,
)

__all__ = [
    "AppendResult",
    "CommandOutcome",
    "CommandRecord",
    "ConcurrencyError",
    "DuplicateCommand",
    "EventStore",
    "MatchingEvents",
    "NewCommand",
    "NewEvent",
    "RecordedEvent",
    "Snapshot",
    "StoreUnavailable",
]
