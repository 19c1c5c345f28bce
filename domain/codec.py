"""Encode domain dataclasses to JSON-compatible values and back.

Events, commands and snapshots of state are stored as JSON. The encoding
follows the type hints of the dataclass: enums by member name, tuples and
lists as arrays, frozensets as sorted arrays, dicts with ``str`` or ``int``
keys as objects (int keys written as strings), nested dataclasses as
objects. ``encode`` then ``decode`` gives back an equal value.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from typing import Any, TypeVar, Union, get_args, get_origin

T = TypeVar("T")


class CodecError(ValueError):
    """The data does not fit the type."""


def encode(value: Any) -> Any:
    """A JSON-compatible form of ``value``."""
    if value is None or isinstance(value, bool | int | str | float):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in _fields(type(value))}
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted((encode(v) for v in value), key=_sort_key)
    if isinstance(value, dict):
        return {str(encode(k)): encode(v) for k, v in value.items()}
    raise CodecError(f"cannot encode {type(value).__name__}")


def _sort_key(value: Any) -> tuple[str, str]:
    return (type(value).__name__, repr(value))


def decode(tp: type[T], data: Any) -> T:
    """The value of type ``tp`` that ``data`` encodes."""
    return typing.cast(T, _decode(tp, data))


@functools.cache
def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(cls)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, data: Any) -> Any:
    if tp is Any or tp is object:
        return data
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        args = get_args(tp)
        if data is None and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1:
            return _decode(non_none[0], data)
        for arg in non_none:
            try:
                return _decode(arg, data)
            except (CodecError, TypeError, ValueError, KeyError):
                continue
        raise CodecError(f"{data!r} fits none of {tp}")
    if origin is tuple:
        args = get_args(tp)
        _expect(data, list, tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in data)
        if len(args) != len(data):
            raise CodecError(f"{tp} needs {len(args)} items, got {len(data)}")
        return tuple(_decode(a, v) for a, v in zip(args, data, strict=True))
    if origin is list:
        _expect(data, list, tp)
        (arg,) = get_args(tp)
        return [_decode(arg, v) for v in data]
    if origin is frozenset or origin is set:
        _expect(data, list, tp)
        (arg,) = get_args(tp)
        return frozenset(_decode(arg, v) for v in data)
    if origin is dict:
        _expect(data, dict, tp)
        key_type, value_type = get_args(tp)
        return {
            (int(k) if key_type is int else _decode(key_type, k)): _decode(
                value_type, v
            )
            for k, v in data.items()
        }
    if origin is typing.Literal:
        if data not in get_args(tp):
            raise CodecError(f"{data!r} is not one of {get_args(tp)}")
        return data
    if isinstance(tp, type):
        if issubclass(tp, enum.Enum):
            if not isinstance(data, str) or data not in tp.__members__:
                raise CodecError(f"{data!r} is not a {tp.__name__}")
            return tp[data]
        if dataclasses.is_dataclass(tp):
            _expect(data, dict, tp)
            hints = _hints(tp)
            kwargs = {}
            for f in _fields(tp):
                if f.name in data:
                    kwargs[f.name] = _decode(hints[f.name], data[f.name])
                elif (
                    f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING
                ):
                    raise CodecError(f"{tp.__name__} needs field {f.name!r}")
            return tp(**kwargs)
        if tp is bool:
            _expect(data, bool, tp)
            return data
        if tp is int:
            if isinstance(data, bool) or not isinstance(data, int):
                raise CodecError(f"{data!r} is not an int")
            return data
        if tp is float:
            if isinstance(data, bool) or not isinstance(data, int | float):
                raise CodecError(f"{data!r} is not a number")
            return float(data)
        if tp is str:
            _expect(data, str, tp)
            return data
    raise CodecError(f"cannot decode type {tp!r}")


def _expect(data: Any, kind: type, tp: Any) -> None:
    if not isinstance(data, kind):
        raise CodecError(f"{tp} expects {kind.__name__}, got {type(data).__name__}")
