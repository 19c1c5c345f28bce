"""Hypothesis strategies for hostile input, generic over every registered game:
arbitrary JSON, stored events with one part replaced by junk, and protobuf
messages filled field by field from their descriptors (out-of-range numbers,
unknown enum values, wrong oneof members)."""

from __future__ import annotations

from functools import cache
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

from domain import codec
from domain.rules import GameRules
from tests.gamekit import play_random

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 10)
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)

json_values = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)


@cache
def stored_events(rules: GameRules[Any, Any, Any, Any]) -> list[tuple[str, Any]]:
    """(type name, JSON body) of every event of a few random games, as stored."""
    out = []
    for players in sorted({rules.min_players, rules.max_players}):
        played = play_random(rules, players, f"hostile-{players}")
        for event in played.events:
            out.append((type(event).__name__, codec.encode(event)))
    return out


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            paths += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            paths += _paths(inner, (*prefix, index))
    return paths


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {
            k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()
        }
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


@st.composite
def damaged_events(
    draw: st.DrawFn, rules: GameRules[Any, Any, Any, Any]
) -> tuple[str, Any]:
    """A real stored event with one value (or key) replaced by junk."""
    name, body = draw(st.sampled_from(stored_events(rules)))
    path = draw(st.sampled_from(_paths(body)))
    how = draw(st.sampled_from(["replace", "drop", "add"]))
    if how == "replace" or not path:
        return name, _replace(body, path, draw(json_values))
    parent_path, key = path[:-1], path[-1]
    parent = body
    for step in parent_path:
        parent = parent[step]
    if how == "drop" and isinstance(parent, dict):
        trimmed = {k: v for k, v in parent.items() if k != key}
        return name, _replace(body, parent_path, trimmed)
    if isinstance(parent, dict):
        extra = {**parent, draw(st.text(max_size=8)): draw(json_values)}
        return name, _replace(body, parent_path, extra)
    return name, _replace(body, parent_path, [*parent, draw(json_values)])


# -- protobuf messages --------------------------------------------------------

_INTS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}


def _scalar(field: Any) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind in _INTS:
        low, high = _INTS[kind]
        return st.integers(max(low, -3), min(high, 12)) | st.integers(low, high)
    if kind == FieldDescriptor.TYPE_ENUM:
        numbers = [v.number for v in field.enum_type.values]
        # Unknown values too: proto3 enums are open, so clients can send them.
        return st.sampled_from(numbers) | st.integers(-3, max(numbers) + 5)
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind == FieldDescriptor.TYPE_STRING:
        return st.text(max_size=16)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=16)
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(width=32)
    raise TypeError(f"no strategy for {field.full_name}")


def _class(descriptor: Any) -> type[Message]:
    return message_factory.GetMessageClass(descriptor)


def _is_map(field: Any) -> bool:
    return bool(
        field.is_repeated
        and field.message_type is not None
        and field.message_type.GetOptions().map_entry
    )


@st.composite
def messages(draw: st.DrawFn, cls: type[Message], depth: int = 0) -> Message:
    """A message of type ``cls`` with random fields (one member per oneof)."""
    message = cls()
    descriptor = message.DESCRIPTOR
    chosen: set[str] = set()
    for oneof in descriptor.oneofs:
        if oneof.name.startswith("_"):
            continue  # proto3 `optional`: decided with the field itself
        if oneof.fields and (depth == 0 or draw(st.booleans())):
            chosen.add(draw(st.sampled_from([f.name for f in oneof.fields])))
    for field in descriptor.fields:
        real_oneof = field.containing_oneof is not None and not (
            field.containing_oneof.name.startswith("_")
        )
        if real_oneof:
            if field.name not in chosen:
                continue
        elif not draw(st.booleans()):
            continue
        _fill(draw, message, field, depth)
    return message


def _fill(draw: st.DrawFn, message: Message, field: Any, depth: int) -> None:
    target = getattr(message, field.name)
    if _is_map(field):
        key_field = field.message_type.fields_by_name["key"]
        value_field = field.message_type.fields_by_name["value"]
        for _ in range(draw(st.integers(0, 3))):
            key = draw(_scalar(key_field))
            if value_field.message_type is not None:
                if depth < 3:
                    target[key].CopyFrom(
                        draw(messages(_class(value_field.message_type), depth + 1))
                    )
            else:
                target[key] = draw(_scalar(value_field))
        return
    if field.is_repeated:
        for _ in range(draw(st.integers(0, 3))):
            if field.message_type is not None:
                if depth < 3:
                    target.add().CopyFrom(
                        draw(messages(_class(field.message_type), depth + 1))
                    )
            else:
                target.append(draw(_scalar(field)))
        return
    if field.message_type is not None:
        if depth < 3:
            target.CopyFrom(draw(messages(_class(field.message_type), depth + 1)))
        else:
            target.SetInParent()
        return
    setattr(message, field.name, draw(_scalar(field)))
