"""The typed protobuf messages mirror the game's dataclasses."""

from __future__ import annotations

import pytest
from strata.games.dinosaurs_extinct.v1 import dinosaurs_extinct_pb2 as pb

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.model import (
    Command,
    Heading,
    RollDie,
    Scenario,
    SwitchWith,
)
from domain.errors import InvalidCommand
from service import protomap
from tests.games.dinosaurs_extinct.helpers import DECK


def test_a_scenario_maps_to_its_message_and_back() -> None:
    scenario = Scenario(dice=(6, 1, 3), earth_events=DECK)

    message = pb.Scenario()
    protomap.to_proto(scenario, message)

    assert list(message.dice) == [6, 1, 3]
    assert protomap.from_proto(message, Scenario) == scenario


@pytest.mark.parametrize("command", [RollDie(), SwitchWith(target_seat=2)])
def test_every_command_maps_to_its_message_and_back(command: Command) -> None:
    message = protomap.to_proto(command, pb.Command())

    wire = pb.Command.FromString(message.SerializeToString())
    assert protomap.from_proto(wire, RULES.command_types) == command


def test_an_empty_command_is_refused_as_malformed() -> None:
    with pytest.raises(InvalidCommand) as refused:
        protomap.from_proto(pb.Command(), RULES.command_types)

    assert refused.value.reason == "FIELD_REQUIRED"


def test_enum_values_follow_the_proto_naming() -> None:
    assert pb.HEADING_BACKWARD == 2
    assert pb.SPACE_TWENTY_FIRST_CENTURY == 7
    assert [h.name for h in Heading] == ["FORWARD", "BACKWARD"]
