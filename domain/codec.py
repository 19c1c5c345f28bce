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
from collections.abc import Callable
from typing import Any, TypeVar, Union, get_args, get_origin

T = TypeVar("T")


class CodecError(ValueError):
    """The data does not fit the type."""


#: Types that encode as themselves (the exact types: a subclass, an
#: ``IntEnum`` say, goes through :func:`_encoder`).
_PLAIN = frozenset({type(None), bool, int, str, float})

Encoder = Callable[[Any], Any]


def encode(value: Any) -> Any:
    """A JSON-compatible form of ``value``."""
    cls: Any = type(value)
    if cls in _PLAIN:
        return value
    return _encoder(cls)(value)


@functools.cache
def _encoder(cls: type) -> Encoder:
    """The function encoding values of class ``cls``, chosen once per class
    (everything below depends on the class only)."""
    if cls is type(None) or issubclass(cls, bool | int | str | float):
        return _same
    if issubclass(cls, enum.Enum):
        return _enum_name
    if dataclasses.is_dataclass(cls):
        names = tuple(f.name for f in _fields(cls))

        def encode_dataclass(value: Any) -> Any:
            return {name: encode(getattr(value, name)) for name in names}

        return encode_dataclass
    if issubclass(cls, tuple | list):
        return _encode_sequence
    if issubclass(cls, frozenset | set):
        return _encode_set
    if issubclass(cls, dict):
        return _encode_dict

    def refuse(value: Any) -> Any:
        raise CodecError(f"cannot encode {cls.__name__}")

    return refuse


def _same(value: Any) -> Any:
    return value


def _enum_name(value: enum.Enum) -> str:
    return value.name


def _encode_sequence(value: Any) -> list[Any]:
    plain = _PLAIN
    return [v if type(v) in plain else encode(v) for v in value]


def _encode_set(value: Any) -> list[Any]:
    return sorted((encode(v) for v in value), key=_sort_key)


def _encode_dict(value: Any) -> dict[str, Any]:
    return {str(encode(k)): encode(v) for k, v in value.items()}


def _sort_key(value: Any) -> tuple[str, str]:
    return (type(value).__name__, repr(value))


def decode(tp: type[T], data: Any) -> T:
    """The value of type ``tp`` that ``data`` encodes."""
    return typing.cast(T, _decoder(typing.cast(Any, tp))(data))


@functools.cache
def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(cls)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


Decoder = Callable[[Any], Any]


@functools.cache
def _decoder(tp: Any) -> Decoder:
    """A function decoding data of type ``tp``, built once per type."""
    if tp is Any or tp is object:
        return lambda data: data
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return _union_decoder(tp)
    if origin is tuple:
        return _tuple_decoder(tp)
    if origin in (list, frozenset, set):
        return _collection_decoder(tp, origin)
    if origin is dict:
        return _dict_decoder(tp)
    if origin is typing.Literal:
        return _literal_decoder(tp)
    if isinstance(tp, type):
        return _class_decoder(tp)
    raise CodecError(f"cannot decode type {tp!r}")


def _union_decoder(tp: Any) -> Decoder:
    args = get_args(tp)
    optional = type(None) in args
    choices = [_decoder(a) for a in args if a is not type(None)]
    if len(choices) == 1:
        (only,) = choices

        def decode_optional(data: Any) -> Any:
            return None if data is None and optional else only(data)

        return decode_optional

    def decode_union(data: Any) -> Any:
        if data is None and optional:
            return None
        for choice in choices:
            try:
                return choice(data)
            except (CodecError, TypeError, ValueError, KeyError):
                continue
        raise CodecError(f"{data!r} fits none of {tp}")

    return decode_union


def _tuple_decoder(tp: Any) -> Decoder:
    args = get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:
        item = _decoder(args[0])
        # What decodes as itself (the int or str items of most tuples) is
        # checked by type only.
        plain = args[0] if args[0] in (int, str) else None

        def decode_tuple(data: Any) -> Any:
            _expect(data, list, tp)
            if plain is not None and all(type(v) is plain for v in data):
                return tuple(data)
            return tuple([item(v) for v in data])

        return decode_tuple
    items = [_decoder(a) for a in args]

    def decode_fixed_tuple(data: Any) -> Any:
        _expect(data, list, tp)
        if len(items) != len(data):
            raise CodecError(f"{tp} needs {len(items)} items, got {len(data)}")
        return tuple(d(v) for d, v in zip(items, data, strict=True))

    return decode_fixed_tuple


def _collection_decoder(tp: Any, origin: Any) -> Decoder:
    item = _decoder(get_args(tp)[0])
    build: Callable[[list[Any]], Any] = list if origin is list else frozenset

    def decode_collection(data: Any) -> Any:
        _expect(data, list, tp)
        return build([item(v) for v in data])

    return decode_collection


def _dict_decoder(tp: Any) -> Decoder:
    key_type, value_type = get_args(tp)
    key = int if key_type is int else _decoder(key_type)
    value = _decoder(value_type)

    def decode_dict(data: Any) -> Any:
        _expect(data, dict, tp)
        return {key(k): value(v) for k, v in data.items()}

    return decode_dict


def _literal_decoder(tp: Any) -> Decoder:
    allowed = get_args(tp)

    def decode_literal(data: Any) -> Any:
        if data not in allowed:
            raise CodecError(f"{data!r} is not one of {allowed}")
        return data

    return decode_literal


def _class_decoder(tp: type) -> Decoder:
    if issubclass(tp, enum.Enum):
        return _enum_decoder(tp)
    if dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    scalar = _SCALAR_DECODERS.get(tp)
    if scalar is None:
        raise CodecError(f"cannot decode type {tp!r}")
    return scalar


def _enum_decoder(tp: type[enum.Enum]) -> Decoder:
    members = tp.__members__

    def decode_enum(data: Any) -> Any:
        if not isinstance(data, str) or data not in members:
            raise CodecError(f"{data!r} is not a {tp.__name__}")
        return members[data]

    return decode_enum


def _decode_bool(data: Any) -> Any:
    _expect(data, bool, bool)
    return data


def _decode_int(data: Any) -> Any:
    if isinstance(data, bool) or not isinstance(data, int):
        raise CodecError(f"{data!r} is not an int")
    return data


def _decode_float(data: Any) -> Any:
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise CodecError(f"{data!r} is not a number")
    return float(data)


def _decode_str(data: Any) -> Any:
    _expect(data, str, str)
    return data


_SCALAR_DECODERS: dict[type, Decoder] = {
    bool: _decode_bool,
    int: _decode_int,
    float: _decode_float,
    str: _decode_str,
}


def _dataclass_decoder(cls: type) -> Decoder:
    hints = _hints(cls)
    specs = [
        (
            f.name,
            hints[f.name],
            f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING,
        )
        for f in _fields(cls)
    ]
    # The fields' decoders are built on first use: types may refer to each
    # other, and this one's decoder must be cached before theirs are built.
    fields: list[tuple[str, Decoder, bool]] | None = None

    def decode_dataclass(data: Any) -> Any:
        nonlocal fields
        _expect(data, dict, cls)
        if fields is None:
            fields = [(name, _decoder(tp), required) for name, tp, required in specs]
        kwargs = {}
        for name, decoder, required in fields:
            if name in data:
                kwargs[name] = decoder(data[name])
            elif required:
                raise CodecError(f"{cls.__name__} needs field {name!r}")
        return cls(**kwargs)

    return decode_dataclass


def _expect(data: Any, kind: type, tp: Any) -> None:
    if not isinstance(data, kind):
        raise CodecError(f"{tp} expects {kind.__name__}, got {type(data).__name__}")
