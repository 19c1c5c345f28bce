"""Clean input at the edge: what every request is checked for before any
bucket, cache, log line or store sees it, whatever the transport.

- **Ids have a shape.** ``game_id``, ``command_id`` and ``request_id`` are
  short strings of a few safe characters (:data:`ID_SHAPES`); anything else
  is INVALID_ARGUMENT before it becomes a rate-limit bucket key, a cache key
  or a 60 kB log line.
- **Text the databases can hold.** No string of any request may hold NUL:
  PostgreSQL's ``text`` and ``jsonb`` cannot store it (it failed with
  INTERNAL, and its retries slowed everyone's group commits), and SQLite
  must answer the same.
- **Names people read.** Player names are NFC-normalised; control, format
  (bidi overrides, zero-width) and unassigned characters are refused, so a
  name cannot rewrite another user's terminal or reorder a page; so is a
  name that mixes scripts where a letter of one stands in for another's
  (:mod:`service.names`).
- **Errors quote input briefly** (:func:`quote`): an error that repeated a
  long input grew past the transport's metadata limit and turned into an
  unrelated transport error.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

# Errors quote input briefly; the domain quotes its refusals alike.
from domain.errors import quote as quote
from service import names
from service.errors import InvalidArgument

#: Id fields checked on every request, with the shape each must have.
ID_SHAPES: dict[str, tuple[re.Pattern[str], str]] = {
    # Games get 32 hex digits; an imported game may be given any id of this
    # shape.
    "game_id": (
        re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}"),
        "1 to 64 letters, digits, '.', '_', ':' or '-' (not first)",
    ),
    "command_id": (
        re.compile(r"[\x21-\x7e]{1,128}"),
        "1 to 128 printable ASCII characters, no spaces",
    ),
    "request_id": (
        re.compile(r"[\x21-\x7e]{1,128}"),
        "1 to 128 printable ASCII characters, no spaces",
    ),
}

MAX_NAME = 64
#: The name of a player who gave none (it may repeat in a game).
DEFAULT_NAME = "player"


def check_request(request: Message) -> None:
    """Refuse a request whose ids have the wrong shape or whose strings hold
    what the store cannot keep (INVALID_ARGUMENT, naming the field)."""
    descriptor = request.DESCRIPTOR
    ids = _ID_FIELDS.get(descriptor)
    if ids is None:
        ids = _ID_FIELDS[descriptor] = _id_fields(descriptor)
    for name, pattern, shape in ids:
        value: str = getattr(request, name)
        if value and not pattern.fullmatch(value):
            raise InvalidArgument(
                f"{name.upper()}_INVALID",
                f"{name} {quote(value)} is not an id: it must have {shape}.",
                name,
            )
    if not _holds_nul(request):
        return
    for path, value in _strings(request, ""):
        if "\x00" in value:
            raise InvalidArgument(
                "NUL_CHARACTER",
                f"{path} holds a NUL character, which no text field may hold.",
                path,
            )


#: The id fields of each request type (its descriptor), with their shapes.
_ID_FIELDS: dict[Any, list[tuple[str, re.Pattern[str], str]]] = {}


def _id_fields(descriptor: Any) -> list[tuple[str, re.Pattern[str], str]]:
    out = []
    for name, (pattern, shape) in ID_SHAPES.items():
        field = descriptor.fields_by_name.get(name)
        if field is not None and field.type == FieldDescriptor.TYPE_STRING:
            out.append((name, pattern, shape))
    return out


# What a field holds, as _holds_nul walks it (decided once a field).
_OTHER, _STRING, _STRINGS, _MAP, _MESSAGES, _MESSAGE = range(6)
_KINDS: dict[FieldDescriptor, int] = {}


def _kind(field: FieldDescriptor) -> int:
    if field.type == FieldDescriptor.TYPE_STRING:
        return _STRINGS if field.is_repeated else _STRING
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            return _MAP
        return _MESSAGES if field.is_repeated else _MESSAGE
    return _OTHER


def _holds_nul(message: Message) -> bool:
    """Whether any string of ``message`` holds NUL: the walk of
    :func:`_strings` without its field paths, which only a refusal needs
    (every request is walked; few are refused)."""
    for field, value in message.ListFields():
        kind = _KINDS.get(field)
        if kind is None:
            kind = _KINDS[field] = _kind(field)
        if kind == _STRING:
            if "\x00" in value:
                return True
        elif kind == _MESSAGE:
            if _holds_nul(value):
                return True
        elif kind == _STRINGS:
            if any("\x00" in item for item in value):
                return True
        elif kind == _MESSAGES:
            if any(_holds_nul(item) for item in value):
                return True
        elif kind == _MAP and _map_holds_nul(value):
            return True
    return False


def _map_holds_nul(entries: Any) -> bool:
    for key, item in entries.items():
        if isinstance(key, str) and "\x00" in key:
            return True
        if isinstance(item, str) and "\x00" in item:
            return True
        if isinstance(item, Message) and _holds_nul(item):
            return True
    return False


def _strings(message: Message, prefix: str) -> Iterator[tuple[str, str]]:
    """Every string set in ``message`` (nested messages and lists too), with
    its field path."""
    for field, value in message.ListFields():
        path = f"{prefix}{field.name}"
        if field.type == FieldDescriptor.TYPE_STRING:
            if field.is_repeated:
                for n, item in enumerate(value):
                    yield f"{path}[{n}]", item
            else:
                yield path, value
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            entry = field.message_type
            if entry is not None and entry.GetOptions().map_entry:
                for key, item in value.items():
                    if isinstance(key, str):
                        yield f"{path}.key", key
                    if isinstance(item, str):
                        yield f"{path}[{key!r}]", item
                    elif isinstance(item, Message):
                        yield from _strings(item, f"{path}[{key!r}].")
            elif field.is_repeated:
                for n, item in enumerate(value):
                    yield from _strings(item, f"{path}[{n}].")
            else:
                yield from _strings(value, f"{path}.")


def player_name(raw: str, field: str = "player_name") -> str:
    """A player name as stored: trimmed, NFC-normalised, 1 to
    :data:`MAX_NAME` characters (``player`` when empty), every character
    printable (no control, format, unassigned or separator character but
    the space), no mixed-script confusable (INVALID_ARGUMENT otherwise)."""
    name = unicodedata.normalize("NFC", raw).strip()
    if not name:
        return DEFAULT_NAME
    if len(name) > MAX_NAME:
        raise InvalidArgument(
            "NAME_TOO_LONG", f"Names have at most {MAX_NAME} characters.", field
        )
    for char in name:
        if not char.isprintable():
            # Controls, format characters (bidi overrides, zero-width),
            # surrogates, private use, unassigned, separators but the space.
            raise InvalidArgument(
                "NAME_INVALID",
                f"Names may not hold control, formatting, invisible or spacing "
                f"characters other than the space "
                f"(found U+{ord(char):04X}).",
                field,
            )
    stand_in = names.mixed_script_confusable(name)
    if stand_in:
        raise InvalidArgument(
            "NAME_MIXED_SCRIPTS",
            f"Names may not mix scripts where a letter of one looks like a letter "
            f"of another ({quote(stand_in)}, U+{ord(stand_in):04X}, beside letters "
            "of another script): write it in one script.",
            field,
        )
    return name


def json_depth_ok(document: bytes | str, limit: int) -> bool:
    """Whether a JSON text nests arrays and objects at most ``limit`` deep
    (checked before parsing: Python's parser recurses)."""
    if isinstance(document, bytes):
        document = document.decode("utf-8", "replace")
    text = document
    depth = 0
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return False
        elif char in "]}":
            depth -= 1
    return True


def nul_free(value: Any) -> bool:
    """Whether a parsed JSON value holds no NUL in any string or key."""
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, dict):
        return all(nul_free(k) and nul_free(v) for k, v in value.items())
    if isinstance(value, list):
        return all(nul_free(v) for v in value)
    return True
