"""A game's model and its protos cannot drift apart: for every registered
game, the commands, events, options, scenario and view are compared with
their messages field by field (names, types, repeated, optional, enum
members, the classes of each oneof), and a difference fails with its path.

The comparison itself is tested on small made-up shapes: each kind of
drift it must catch, caught.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool

from domain import registry
from service.answers import game_module
from service.protoshape import differences


@pytest.mark.parametrize("game_type", registry.game_types())
def test_every_game_model_has_the_shape_of_its_protos(game_type: str) -> None:
    module = game_module(game_type)
    rules = registry.rules_for(game_type)
    pairs: list[tuple[Any, Any]] = [
        (tuple(rules.command_types), module.Command.DESCRIPTOR),
        (tuple(rules.event_types), module.Event.DESCRIPTOR),
        (rules.options_type, module.Options.DESCRIPTOR),
        (rules.scenario_type, module.Scenario.DESCRIPTOR),
        (rules.view_type, module.View.DESCRIPTOR),
    ]
    found = [d for tp, descriptor in pairs for d in differences(tp, descriptor)]
    assert found == []


# -- the comparison catches each kind of drift --------------------------------


class Colour(enum.Enum):
    RED = 1
    BLUE = 2


@dataclass(frozen=True)
class Inner:
    label: str


@dataclass(frozen=True)
class Roll:
    value: int
    colour: Colour
    faces: tuple[int, ...]
    note: str | None
    inner: Inner
    scores: dict[int, int]


@dataclass(frozen=True)
class Pass:
    pass


PROTO: dict[str, list[tuple[Any, ...]]] = {
    "Inner": [("label", 9, 1)],
    "Roll": [
        ("value", 5, 1),
        ("colour", 14, 1, ".t.Colour"),
        ("faces", 5, 3),
        ("note", 9, 1, None, "_note"),
        ("inner", 11, 1, ".t.Inner"),
        ("scores", 11, 3, ".t.Roll.ScoresEntry"),
    ],
    "Pass": [],
    "Command": [
        ("roll", 11, 1, ".t.Roll", "command"),
        ("pass", 11, 1, ".t.Pass", "command"),
    ],
}


def compiled(
    edit: Any = None, colours: tuple[str, ...] = ("RED", "BLUE")
) -> dict[str, Any]:
    """The made-up messages (a file of package ``t``), after ``edit`` of
    their field lists; by name."""
    messages = {name: [list(f) for f in fields] for name, fields in PROTO.items()}
    if edit:
        edit(messages)
    file = descriptor_pb2.FileDescriptorProto(
        name="t.proto", package="t", syntax="proto3"
    )
    colour = file.enum_type.add(name="Colour")
    for number, name in enumerate(("UNSPECIFIED", *colours)):
        colour.value.add(name=f"COLOUR_{name}", number=number)
    for name, fields in messages.items():
        message = file.message_type.add(name=name)
        oneofs: list[str] = []
        for number, (field, kind, label, *rest) in enumerate(fields, 1):
            added = message.field.add(name=field, number=number, type=kind, label=label)
            if rest and rest[0]:
                added.type_name = rest[0]
            if len(rest) > 1:
                if rest[1] not in oneofs:
                    oneofs.append(rest[1])
                    message.oneof_decl.add(name=rest[1])
                added.oneof_index = oneofs.index(rest[1])
                added.proto3_optional = rest[1].startswith("_")
        if name == "Roll":
            entry = message.nested_type.add(name="ScoresEntry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=5, label=1)
            entry.field.add(name="value", number=2, type=5, label=1)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {n: pool.FindMessageTypeByName(f"t.{n}") for n in messages}


def field_of(messages: dict[str, Any], message: str, name: str) -> list[Any]:
    return next(f for f in messages[message] if f[0] == name)


def test_matching_shapes_have_no_difference() -> None:
    assert differences(Roll | Pass, compiled()["Command"]) == []


def retyped(messages: dict[str, Any]) -> None:
    field_of(messages, "Roll", "value")[1] = 9


def not_repeated(messages: dict[str, Any]) -> None:
    field_of(messages, "Roll", "faces")[2] = 1


def not_optional(messages: dict[str, Any]) -> None:
    del field_of(messages, "Roll", "note")[3:]


def renamed(messages: dict[str, Any]) -> None:
    field_of(messages, "Inner", "label")[0] = "title"


def dropped_from_oneof(messages: dict[str, Any]) -> None:
    messages["Command"].pop()


def map_retyped(messages: dict[str, Any]) -> None:
    field_of(messages, "Roll", "scores")[3] = ".t.Inner"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (retyped, "Command.roll.value: int in the model, string in the proto"),
        (not_repeated, "Command.roll.faces: tuple[int, ...] in the model, "),
        (not_optional, "Command.roll.note: optional in the model, not in the proto"),
        (renamed, "Command.roll.inner.title: in the proto, not in the model"),
        (dropped_from_oneof, "Command.pass: Pass in the model, not in the proto's"),
        (map_retyped, "Command.roll.scores: dict[int, int] in the model, repeated"),
    ],
)
def test_each_drift_is_reported_at_the_field_that_differs(
    edit: Any, expected: str
) -> None:
    found = differences(Roll | Pass, compiled(edit)["Command"])
    assert len(found) >= 1
    assert any(d.startswith(expected) for d in found), found


def test_an_enum_member_missing_on_either_side_is_reported() -> None:
    found = differences(Roll | Pass, compiled(colours=("RED", "GREEN"))["Command"])
    assert found == [
        "Command.roll.colour: COLOUR_GREEN not in the model",
        "Command.roll.colour: Colour.BLUE not in the proto",
    ]
