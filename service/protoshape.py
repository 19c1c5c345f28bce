"""Does a game's model have the shape of its protos? Field by field.

:mod:`service.protomap` maps a game's dataclasses onto its messages by name
and finds a mismatch only for a value it maps. This module compares the two
*shapes*, without a value: every dataclass field against its message's field
and back (names, types, repeated or not, optional or not, enum members, the
classes of a ``oneof`` wrapper), recursively. :func:`differences` lists each
place where they differ, by path (``Event.die_rolled.value: int in the
model, string in the proto``), so a drift fails its test with the field
that differs (tests/service/test_proto_drift.py, for every registered game).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any, Union, get_args, get_origin

from service.protomap import Descriptor, FieldDescriptor, enum_prefix, snake

#: Proto scalar type numbers (descriptor.proto's FieldDescriptorProto.Type)
#: each Python type may be.
_INTS = {3, 4, 5, 6, 7, 13, 15, 16, 17, 18}  # (s|u)int32/64, (s)fixed32/64
_SCALARS: dict[type, set[int]] = {
    bool: {8},
    int: _INTS,
    float: {1, 2},
    str: {9},
    bytes: {12},
}
_TYPE_NAMES = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64",
    7: "fixed32", 8: "bool", 9: "string", 11: "message", 12: "bytes",
    13: "uint32", 14: "enum", 15: "sfixed32", 16: "sfixed64", 17: "sint32",
    18: "sint64",
}  # fmt: skip


def differences(tp: Any, descriptor: Descriptor, path: str = "") -> list[str]:
    """Every difference between the model type ``tp`` (a dataclass, or a
    union or tuple of dataclasses for a wrapper message) and the message
    ``descriptor``; empty when they match."""
    path = path or descriptor.name
    classes = _classes(tp)
    if _is_wrapper(descriptor):
        return _wrapper_differences(classes, descriptor, path)
    if len(classes) != 1 or not dataclasses.is_dataclass(classes[0]):
        return [f"{path}: {_name(tp)} in the model, message {descriptor.name}"]
    cls: Any = classes[0]
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    found = [
        f"{path}.{field.name}: in the proto, not in the model ({cls.__name__})"
        for field in descriptor.fields
        if field.name not in names
    ]
    for f in dataclasses.fields(cls):
        field = descriptor.fields_by_name.get(f.name)
        if field is None:
            found.append(f"{path}.{f.name}: in the model, not in the proto")
        else:
            found += _field_differences(hints[f.name], field, f"{path}.{f.name}")
    return found


def _wrapper_differences(
    classes: tuple[Any, ...], descriptor: Descriptor, path: str
) -> list[str]:
    """A oneof wrapper holds one field per class, named like it in snake case."""
    by_field = {snake(c.__name__): c for c in classes}
    found = [
        f"{path}.{name}: {cls.__name__} in the model, not in the proto's oneof"
        for name, cls in by_field.items()
        if name not in descriptor.fields_by_name
    ]
    for field in descriptor.fields:
        cls = by_field.get(field.name)
        if cls is None:
            found.append(f"{path}.{field.name}: in the proto's oneof, not in the model")
        elif field.message_type is None:
            found.append(f"{path}.{field.name}: a scalar in the proto's oneof")
        else:
            found += differences(cls, field.message_type, f"{path}.{field.name}")
    return found


def _field_differences(tp: Any, field: FieldDescriptor, path: str) -> list[str]:
    inner = _optional_of(tp)
    if inner is not None:
        tp = inner
        # proto3 `optional` (a synthetic oneof) or a message: has presence.
        if field.message_type is None and not _has_presence(field):
            return [f"{path}: optional in the model, not in the proto"]
    elif field.message_type is None and _has_presence(field):
        return [f"{path}: optional in the proto, not in the model"]
    if _is_map(field):
        if get_origin(tp) is not dict:
            return [f"{path}: {_name(tp)} in the model, a map in the proto"]
        key_type, value_type = get_args(tp)
        entry = field.message_type
        return _single(key_type, entry.fields_by_name["key"], f"{path}.key") + (
            _single(value_type, entry.fields_by_name["value"], f"{path}[]")
        )
    if bool(field.is_repeated):
        if get_origin(tp) not in (tuple, list, frozenset):
            return [f"{path}: {_name(tp)} in the model, repeated in the proto"]
        return _single(get_args(tp)[0], field, f"{path}[]")
    if get_origin(tp) in (tuple, list, frozenset, dict):
        return [f"{path}: {_name(tp)} in the model, not repeated in the proto"]
    return _single(tp, field, path)


def _single(tp: Any, field: FieldDescriptor, path: str) -> list[str]:
    """One value of model type ``tp`` against the field's element type."""
    if field.message_type is not None:
        return differences(tp, field.message_type, path)
    if field.enum_type is not None:
        if not (isinstance(tp, type) and issubclass(tp, enum.Enum)):
            return [f"{path}: {_name(tp)} in the model, enum {field.enum_type.name}"]
        return _enum_differences(tp, field.enum_type, path)
    allowed = _SCALARS.get(tp) if isinstance(tp, type) else None
    if allowed is None or field.type not in allowed:
        proto = _TYPE_NAMES.get(field.type, str(field.type))
        return [f"{path}: {_name(tp)} in the model, {proto} in the proto"]
    return []


def _enum_differences(tp: type[enum.Enum], descriptor: Any, path: str) -> list[str]:
    prefix = enum_prefix(descriptor)
    proto = {v.name.removeprefix(prefix) for v in descriptor.values if v.number}
    model = {m.name for m in tp}
    zero = [v.name for v in descriptor.values if v.number == 0]
    found = [] if zero == [f"{prefix}UNSPECIFIED"] else [
        f"{path}: enum {descriptor.name}'s 0 is not {prefix}UNSPECIFIED"
    ]  # fmt: skip
    found += [f"{path}: {tp.__name__}.{n} not in the proto" for n in model - proto]
    found += [f"{path}: {prefix}{n} not in the model" for n in proto - model]
    return sorted(found)


def _classes(tp: Any) -> tuple[Any, ...]:
    if get_origin(tp) in (Union, types.UnionType):
        return get_args(tp)
    if isinstance(tp, tuple):
        return tp
    return (tp,)


def _optional_of(tp: Any) -> Any:
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) < len(get_args(tp)):
            return args[0] if len(args) == 1 else Union[tuple(args)]  # noqa: UP007
    return None


def _is_wrapper(descriptor: Descriptor) -> bool:
    real = [o for o in descriptor.oneofs if not o.name.startswith("_")]
    return len(real) == 1 and len(real[0].fields) == len(descriptor.fields) > 0


def _has_presence(field: FieldDescriptor) -> bool:
    oneof = field.containing_oneof
    return oneof is not None and oneof.name.startswith("_")


def _is_map(field: FieldDescriptor) -> bool:
    return (
        bool(field.is_repeated)
        and field.message_type is not None
        and field.message_type.GetOptions().map_entry
    )


def _name(tp: Any) -> str:
    if get_args(tp):  # tuple[int, ...], dict[int, str], X | Y
        return str(tp).replace("typing.", "")
    return getattr(tp, "__name__", None) or str(tp)
