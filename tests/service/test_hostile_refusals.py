"""Refusals under the second hostile-load round (issue 26, item 9), through
a real server: a rule refusal quotes at most 40 characters of its input,
and an admin's ImportGame stores only a game that verifies (unless told to
trust it).
"""

from __future__ import annotations

import re

import pytest
from google.protobuf.descriptor import FieldDescriptor
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from domain import registry
from domain.errors import QUOTE_CHARS

LONG = "Z" * 1000


def commands_with_a_long_string(game_type: str) -> list[pb.GameCommand]:
    """Every command of ``game_type`` that has a string field, with that
    field (or one entry of it) set to :data:`LONG`."""
    out = []
    holder = getattr(pb.GameCommand(), game_type)
    for oneof in holder.DESCRIPTOR.oneofs:
        for field in oneof.fields:
            for text in field.message_type.fields:
                if text.type != FieldDescriptor.TYPE_STRING:
                    continue
                command = pb.GameCommand()
                message = getattr(getattr(command, game_type), field.name)
                if text.is_repeated:
                    getattr(message, text.name).append(LONG)
                else:
                    setattr(message, text.name, LONG)
                out.append(command)
    return out


@pytest.mark.parametrize(
    "game_type",
    [g for g in registry.game_types() if commands_with_a_long_string(g)],
)
def test_a_rule_refusal_quotes_at_most_forty_characters_of_its_input(
    client: StrataClient, admin: StrataClient, game_type: str
) -> None:
    rules = registry.rules_for(game_type)
    players = max(rules.min_players, 2)
    game_id = admin.create_game(game_type, players).game_id
    tokens = [
        client.join_game(game_id, f"p{s}", seat=s).seat_token for s in range(players)
    ]
    client.with_token(tokens[0]).start_game(game_id)
    refusals = 0
    for command in commands_with_a_long_string(game_type):
        for seat in range(players):
            with pytest.raises(StrataError) as refused:
                client.with_token(tokens[seat]).submit_command(game_id, seat, command)
            message = refused.value.message
            longest = max((len(r) for r in re.findall("Z+", message)), default=0)
            assert longest <= QUOTE_CHARS, (refused.value.reason, message)
            refusals += 1
    assert refusals
