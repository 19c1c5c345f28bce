"""Options and proto3's zeros: every option's zero (0, false, empty) is the
rulebook's value, so a client that sets one option (sending zeros for the
rest) gets the rulebook's for the others; an option the game refuses is
named at ``options.<game_type>.<field>``, the field's path in the request.

For every registered game, the options' defaults are the proto's zeros and
the zero options create the rulebook's game; through a real server, over
every transport, one option set alone and a refused option's field.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, get_args, get_origin

import grpc
import pytest
from strata.games.cubosaurs.v1 import cubosaurs_pb2
from strata.games.happy_little_dinosaurs.v1 import happy_little_dinosaurs_pb2 as hld
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from domain import registry
from domain.session import Session
from tests.service.conftest import TRANSPORTS


def zero_of(tp: Any) -> Any:
    """The value proto3 decodes an unset field of model type ``tp`` as."""
    origin = get_origin(tp)
    if origin in (tuple, list, frozenset):
        return origin()
    if origin is dict:
        return {}
    if type(None) in get_args(tp):
        return None
    return {int: 0, bool: False, str: "", float: 0.0, bytes: b""}.get(tp)


@pytest.mark.parametrize("game_type", registry.game_types())
def test_every_options_default_is_the_protos_zero(game_type: str) -> None:
    options_type = registry.rules_for(game_type).options_type
    hints = typing.get_type_hints(options_type)
    defaults = options_type()
    for field in dataclasses.fields(options_type):
        zero = zero_of(hints[field.name])
        assert zero is not None or type(None) in get_args(hints[field.name]), field
        assert getattr(defaults, field.name) == zero, (
            f"{game_type} options.{field.name}: the default is not the proto's zero"
        )


@pytest.mark.parametrize("game_type", registry.game_types())
def test_the_zero_options_create_the_rulebooks_game(game_type: str) -> None:
    rules = registry.rules_for(game_type)
    for players in (rules.min_players, rules.max_players):
        session = Session(rules)
        created = session.create(players, "zeros", rules.options_type())
        assert session.fold([created]).config.options == rules.options_type()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_one_option_set_alone_keeps_the_rulebooks_others(
    client: StrataClient, transport: str
) -> None:
    """Three rounds of Cubosaurs, the advanced mode left at its zero: the
    rulebook's (basic) game."""
    options = pb.GameOptions(cubosaurs=cubosaurs_pb2.Options(rounds=3))
    game_id = client.create_game("cubosaurs", 2, options=options).game_id
    first = next(client.watch_game(game_id, follow=False))
    created = first.game_created.options.cubosaurs
    assert first.game_created.options.HasField("cubosaurs")
    assert created.rounds == 3 and created.advanced is False


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("game_type", "options", "reason", "field"),
    [
        (
            "cubosaurs",
            pb.GameOptions(cubosaurs=cubosaurs_pb2.Options(rounds=99)),
            "ROUNDS_OUT_OF_RANGE",
            "options.cubosaurs.rounds",
        ),
        (
            "happy_little_dinosaurs",
            pb.GameOptions(
                happy_little_dinosaurs=hld.Options(dinosaurs=[hld.DINOSAUR_NERVOUS_REX])
            ),
            "DINOSAURS_DO_NOT_MATCH_SEATS",
            "options.happy_little_dinosaurs.dinosaurs",
        ),
    ],
)
def test_a_refused_option_is_named_at_its_path_in_the_request(
    client: StrataClient,
    transport: str,
    game_type: str,
    options: pb.GameOptions,
    reason: str,
    field: str,
) -> None:
    with pytest.raises(StrataError) as refused:
        client.create_game(game_type, 2, options=options)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == reason
    assert refused.value.field == field


# A scenario's fields keep their paths within the scenario
# (scenario.<game_type>.position.<field>): tests/service/test_positions.py.
