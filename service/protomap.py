"""Map domain dataclasses onto a game's protobuf messages, field by field.

The per-game ``.proto`` files mirror the domain: a dataclass ``RollDie``
is the message ``RollDie`` with fields of the same names; a Python enum
``Space`` with member ``FOOTPRINT`` is the proto enum ``Space`` with value
``SPACE_FOOTPRINT`` (value 0 is ``SPACE_UNSPECIFIED``, never valid); a
tuple is a ``repeated`` field; ``X | None`` is an ``optional`` scalar or an
unset message; ``dict[int, X]`` is a ``map``. A "oneof" wrapper message
(``Command``, ``Event``) holds one dataclass in the field named like its
class in snake case (``RollDie`` -> ``roll_die``).

So the service needs no hand-written mapping per game, and a mismatch
between a game's dataclasses and its protos is caught by one generic test.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
import types
import typing
from typing import Any, Union, get_args, get_origin

from google.protobuf.message import Message

from domain.errors import InvalidCommand

# Descriptors are typed loosely: the C (upb) and Python implementations differ.
Descriptor = Any
EnumDescriptor = Any
FieldDescriptor = Any


class MappingError(TypeError):
    """A dataclass and its message do not match (a programming error)."""


@functools.cache
def snake(name: str) -> str:
    """``RollDie`` -> ``roll_die``."""
    return re.sub(
        r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])", r"_\1\2", name
    ).lower()


@functools.cache
def enum_prefix(descriptor: EnumDescriptor) -> str:
    return snake(descriptor.name).upper() + "_"


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


@functools.cache
def _is_map(field: FieldDescriptor) -> bool:
    return (
        _is_repeated(field)
        and field.message_type is not None
        and field.message_type.GetOptions().map_entry
    )


# -- domain -> proto ----------------------------------------------------------

# How a field is filled; planned once per (dataclass, message) pair.
_SCALAR, _ENUM, _MESSAGE, _REPEATED, _REPEATED_MESSAGE, _MAP = range(6)


def to_proto(value: Any, message: Message) -> Message:
    """Fill ``message`` from the dataclass ``value``; returns ``message``."""
    descriptor = message.DESCRIPTOR
    if _is_wrapper(descriptor):
        # A wrapper: one field per class.
        name = snake(type(value).__name__)
        if name not in descriptor.fields_by_name:
            raise MappingError(f"{descriptor.full_name} has no field {name!r}")
        to_proto(value, getattr(message, name))
        return message
    plan = _plans.get((type(value), descriptor))
    if plan is None:
        plan = _plans[type(value), descriptor] = _plan(type(value), descriptor)
    for name, field, kind in plan:
        item = getattr(value, name)
        if item is None:
            continue
        if kind == _SCALAR:
            setattr(message, name, item)
        elif kind == _MESSAGE:
            to_proto(item, getattr(message, name))
        elif kind == _ENUM:
            setattr(message, name, _enum_number(field, item))
        elif kind == _REPEATED_MESSAGE:
            target = getattr(message, name)
            for element in item:
                to_proto(element, target.add())
        elif kind == _REPEATED:
            getattr(message, name).extend(
                [_scalar_to_proto(field, element) for element in item]
            )
        else:
            _set_map(getattr(message, name), field, item)
    # Mark the message present even when every field holds its default (an
    # empty event in a oneof, an optional message of defaults).
    message.SetInParent()
    return message


_Plan = tuple[tuple[str, Any, int], ...]
_plans: dict[tuple[type, Descriptor], _Plan] = {}


def _plan(cls: type, descriptor: Descriptor) -> _Plan:
    """(field name, field descriptor, how to fill it) for each field of the
    dataclass ``cls``, checked against ``descriptor`` once."""
    if not dataclasses.is_dataclass(cls):
        raise MappingError(f"{descriptor.full_name} needs a dataclass, got {cls!r}")
    fields = descriptor.fields_by_name
    plan = []
    for f in dataclasses.fields(cls):
        if f.name not in fields:
            raise MappingError(f"{descriptor.full_name} has no field {f.name!r}")
        field = fields[f.name]
        if _is_map(field):
            kind = _MAP
        elif _is_repeated(field):
            kind = _REPEATED_MESSAGE if field.message_type is not None else _REPEATED
        elif field.message_type is not None:
            kind = _MESSAGE
        elif field.enum_type is not None:
            kind = _ENUM
        else:
            kind = _SCALAR
        plan.append((f.name, field, kind))
    return tuple(plan)


def _set_map(target: Any, field: FieldDescriptor, value: Any) -> None:
    value_field = field.message_type.fields_by_name["value"]
    for k, v in value.items():
        if value_field.message_type is not None:
            to_proto(v, target[k])
        else:
            target[k] = _scalar_to_proto(value_field, v)


def _scalar_to_proto(field: FieldDescriptor, value: Any) -> Any:
    if field.enum_type is not None:
        return _enum_number(field, value)
    return value


def _enum_number(field: FieldDescriptor, value: Any) -> int:
    if not isinstance(value, enum.Enum):
        raise MappingError(f"{field.full_name} needs an enum member, got {value!r}")
    return _enum_numbers(field.enum_type)[value.name]


@functools.cache
def _enum_numbers(descriptor: EnumDescriptor) -> dict[str, int]:
    """Python member name -> proto number (``FOOTPRINT`` -> ``SPACE_FOOTPRINT``'s)."""
    prefix = enum_prefix(descriptor)
    return {
        value.name.removeprefix(prefix): value.number for value in descriptor.values
    }


# -- proto -> domain ----------------------------------------------------------


def from_proto(message: Message, tp: Any, path: str = "") -> Any:
    """The value of dataclass type ``tp`` that ``message`` holds.

    Raises :class:`InvalidCommand` (with the field path) for client input
    that does not fit: an unset oneof, an unknown or unspecified enum value.
    """
    descriptor: Descriptor = message.DESCRIPTOR
    if _is_wrapper(descriptor):
        which = message.WhichOneof(descriptor.oneofs[0].name)
        if which is None:
            raise InvalidCommand(
                "FIELD_REQUIRED", f"{path or descriptor.name}: no {descriptor.name} set"
            )
        chosen = descriptor.fields_by_name[which]
        return from_proto(
            getattr(message, which),
            _class_for(tp, chosen.message_type.name),
            f"{path}.{which}".lstrip("."),
        )
    if not dataclasses.is_dataclass(tp):
        raise MappingError(f"{tp!r} is not a dataclass")
    cls: Any = tp
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        field: FieldDescriptor = descriptor.fields_by_name.get(f.name)
        if field is None:
            raise MappingError(f"{descriptor.full_name} has no field {f.name!r}")
        kwargs[f.name] = _get_field(
            message, field, hints[f.name], f"{path}.{f.name}".lstrip(".")
        )
    return cls(**kwargs)


@functools.cache
def _is_wrapper(descriptor: Descriptor) -> bool:
    """True for a message whose fields are all one (real) oneof."""
    real = [o for o in descriptor.oneofs if not o.name.startswith("_")]
    return len(real) == 1 and len(real[0].fields) == len(descriptor.fields) > 0


def _class_for(tp: Any, name: str) -> type:
    """The class called ``name`` among the union or tuple of classes ``tp``."""
    candidates = get_args(tp) if get_origin(tp) in (Union, types.UnionType) else tp
    if isinstance(candidates, type):
        candidates = (candidates,)
    for cls in candidates:
        if cls.__name__ == name:
            return typing.cast(type, cls)
    raise MappingError(f"no class {name!r} in {tp!r}")


def _optional_of(tp: Any) -> Any:
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return None


def _get_field(message: Message, field: FieldDescriptor, tp: Any, path: str) -> Any:
    inner = _optional_of(tp)
    if inner is not None:
        if not message.HasField(field.name):
            return None
        tp = inner
    if _is_map(field):
        _, value_type = get_args(tp)
        value_field = field.message_type.fields_by_name["value"]
        return {
            k: (
                from_proto(v, value_type, f"{path}[{k}]")
                if value_field.message_type is not None
                else _scalar_from_proto(value_field, v, value_type, f"{path}[{k}]")
            )
            for k, v in getattr(message, field.name).items()
        }
    if _is_repeated(field):
        args = get_args(tp)
        item_type = args[0]
        items = getattr(message, field.name)
        if field.message_type is not None:
            out = [
                from_proto(v, item_type, f"{path}[{i}]") for i, v in enumerate(items)
            ]
        else:
            out = [
                _scalar_from_proto(field, v, item_type, f"{path}[{i}]")
                for i, v in enumerate(items)
            ]
        origin = get_origin(tp)
        if origin is frozenset:
            return frozenset(out)
        if origin is list:
            return out
        return tuple(out)
    if field.message_type is not None:
        return from_proto(getattr(message, field.name), tp, path)
    return _scalar_from_proto(field, getattr(message, field.name), tp, path)


def _scalar_from_proto(field: FieldDescriptor, value: Any, tp: Any, path: str) -> Any:
    if field.enum_type is not None:
        number_to_value = field.enum_type.values_by_number
        if value == 0 or value not in number_to_value:
            raise InvalidCommand(
                "ENUM_VALUE_INVALID",
                f"{path}: {value} is not a valid {field.enum_type.name}",
            )
        name = number_to_value[value].name.removeprefix(enum_prefix(field.enum_type))
        try:
            return tp[name]
        except KeyError:
            raise MappingError(f"{tp!r} has no member {name!r}") from None
    return value
