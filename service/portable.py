"""Export and import of whole games as one portable JSON document.

The document holds the game's metadata, every event (type, schema version,
body, recording time) and every logged command. Importing it into any
store — SQLite or PostgreSQL — gives a game that replays and verifies the
same; global positions are the target store's own.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from eventstore.base import (
    CommandOutcome,
    CommandRecord,
    EventStore,
    RecordedEvent,
)
from service import paging
from service.errors import InvalidArgument, NotFound
from service.inputs import ID_SHAPES, json_depth_ok, nul_free, quote

FORMAT = "strata.game-export"
FORMAT_VERSION = 1
#: The deepest nesting an export document may have (real ones reach about
#: eight: commands' bodies inside the command log).
MAX_DEPTH = 32


#: Events and commands an export page holds by default, and at most.
EXPORT_PAGE = 2000
EXPORT_PAGE_MOST = 5000


def export_game(
    store: EventStore, game_id: str, page_size: int = 0, page_token: str = ""
) -> tuple[bytes, str]:
    """A page of ``game_id``'s export document, and the next page's token
    ("" after the last). A page holds up to ``page_size`` events and as many
    commands; joined in order (:func:`join_pages`), the pages are the whole
    export."""
    size = paging.page_size(page_size, EXPORT_PAGE, EXPORT_PAGE_MOST)
    from_version, after_sequence = paging.decode(page_token, 2, (1, 0))
    created = store.read_stream(game_id, 1, 1)
    if not created:
        raise NotFound("GAME_NOT_FOUND", f"No game {game_id!r}.")
    events = store.read_stream(game_id, from_version, from_version + size - 1)
    commands = store.read_commands(game_id, after_sequence, size)
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "game_id": game_id,
        "game_type": created[0].data.get("game_type", ""),
        "rules_version": created[0].data.get("rules_version", ""),
        "events": [
            {
                "version": e.version,
                "type": e.type,
                "schema_version": e.schema_version,
                "data": e.data,
                "recorded_at": e.recorded_at.isoformat(),
            }
            for e in events
        ],
        "commands": [
            {
                "command_id": c.command_id,
                "actor": c.actor,
                "payload": c.payload,
                "decided_at_version": c.decided_at_version,
                "outcome": {
                    "first_version": c.outcome.first_version,
                    "last_version": c.outcome.last_version,
                    "error_kind": c.outcome.error_kind,
                    "error_reason": c.outcome.error_reason,
                    "error_message": c.outcome.error_message,
                },
                "recorded_at": c.recorded_at.isoformat(),
                "sequence": c.sequence,
            }
            for c in commands
        ],
    }
    more = len(events) == size or len(commands) == size
    next_token = (
        paging.encode(
            events[-1].version + 1 if events else from_version,
            commands[-1].sequence if commands else after_sequence,
        )
        if more
        else ""
    )
    return json.dumps(document, indent=1, ensure_ascii=False).encode(), next_token


def parse_export(
    document: bytes, game_id: str = ""
) -> tuple[str, list[RecordedEvent], list[CommandRecord]]:
    """The game id, events and commands of an export document.

    A document nested deeper than :data:`MAX_DEPTH` or holding a NUL
    character is refused before it is parsed or stored."""
    if not json_depth_ok(document, MAX_DEPTH):
        raise InvalidArgument(
            "EXPORT_MALFORMED",
            f"The document nests deeper than {MAX_DEPTH} levels; no export does.",
            "document",
        )
    try:
        data = json.loads(document)
        if not nul_free(data):
            raise ValueError("a string holds a NUL character")
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} document")
        if data.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"format version {data.get('format_version')} unknown")
        game_id = game_id or str(data["game_id"])
        events = [
            RecordedEvent(
                game_id=game_id,
                version=int(e["version"]),
                position=0,
                type=str(e["type"]),
                schema_version=int(e["schema_version"]),
                data=e["data"],
                recorded_at=_time(e["recorded_at"]),
            )
            for e in data["events"]
        ]
        commands = [
            CommandRecord(
                game_id=game_id,
                command_id=str(c["command_id"]),
                actor=str(c["actor"]),
                payload=c["payload"],
                outcome=CommandOutcome(**_outcome(c["outcome"])),
                decided_at_version=int(c["decided_at_version"]),
                recorded_at=_time(c["recorded_at"]),
                sequence=int(c["sequence"]),
            )
            for c in data["commands"]
        ]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise InvalidArgument(
            "EXPORT_MALFORMED",
            f"Not a valid game export: {quote(str(error), 120)}",
            "document",
        ) from None
    pattern, shape = ID_SHAPES["game_id"]
    if not pattern.fullmatch(game_id):
        raise InvalidArgument(
            "GAME_ID_INVALID",
            f"game_id {quote(game_id)} is not an id: it must have {shape}.",
            "game_id",
        )
    if not events or events[0].type != "GameCreated":
        raise InvalidArgument(
            "EXPORT_MALFORMED", "An export starts with GameCreated.", "document"
        )
    return game_id, events, commands


def _time(text: Any) -> datetime:
    value = datetime.fromisoformat(str(text))
    if value.tzinfo is None:
        raise ValueError(f"time {text!r} has no time zone")
    return value


def _outcome(data: Any) -> dict[str, Any]:
    keys = (
        "first_version",
        "last_version",
        "error_kind",
        "error_reason",
        "error_message",
    )
    return {k: (int if k.endswith("version") else str)(data[k]) for k in keys}
