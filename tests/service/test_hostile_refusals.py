"""Refusals under the second hostile-load round (issue 26, item 9), through
a real server: a rule refusal quotes at most 40 characters of its input,
and an admin's ImportGame stores only a game that verifies (unless told to
trust it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import grpc
import pytest
from google.protobuf.descriptor import FieldDescriptor
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients import cli
from clients.client import StrataClient, StrataError
from domain import registry
from domain.errors import QUOTE_CHARS
from tests.service.conftest import ADMIN_TOKEN

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


def tampered(admin: StrataClient) -> tuple[str, bytes]:
    """A started game's export whose Earth Event deck was put in an order
    its seed never drew: well formed, but it does not verify."""
    game_id = admin.create_game("dinosaurs_extinct", 2, seed="import").game_id
    for seat in range(2):
        admin.join_game(game_id, f"p{seat}", seat=seat)
    admin.start_game(game_id)
    document = json.loads(admin.export_game(game_id).document)
    shuffled = document["events"][-1]
    assert shuffled["type"] == "EarthEventsShuffled"
    shuffled["data"]["order"].reverse()
    return game_id, json.dumps(document).encode()


def test_an_import_that_does_not_verify_is_refused_and_stores_nothing(
    client: StrataClient, admin: StrataClient
) -> None:
    _, document = tampered(admin)
    with pytest.raises(StrataError) as refused:
        admin.import_game(document, "forged")
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == "IMPORT_NOT_VERIFIED"
    assert refused.value.field == "document"
    assert "mismatch" in refused.value.message and "--trust" in refused.value.message
    with pytest.raises(StrataError) as absent:
        client.get_game("forged")
    assert absent.value.code == grpc.StatusCode.NOT_FOUND
    # Told to trust it, the admin stores it as it is, and is told it does
    # not verify.
    trusted = admin.import_game(document, "forged", trust=True)
    assert trusted.verification.verdict == admin_pb.VERDICT_MISMATCH
    assert client.get_game("forged").game_id == "forged"


def test_an_import_whose_events_cannot_be_read_is_refused_not_internal(
    admin: StrataClient,
) -> None:
    game_id = admin.create_game("cubosaurs", 2).game_id
    document = json.loads(admin.export_game(game_id).document)
    document["events"][0]["data"] = {"nothing": "that a game reads"}
    with pytest.raises(StrataError) as refused:
        admin.import_game(json.dumps(document).encode(), "unreadable")
    assert refused.value.reason == "IMPORT_NOT_VERIFIED", refused.value


def test_strata_import_verifies_unless_told_to_trust(
    target: str,
    admin: StrataClient,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, document = tampered(admin)
    path = tmp_path / "forged.strata.json"
    path.write_bytes(document)
    common = ["import", str(path), "--target", target, "--token", ADMIN_TOKEN]
    assert cli.main([*common, "--game-id", "cli-forged"]) != 0
    assert "IMPORT_NOT_VERIFIED" in capsys.readouterr().err
    with pytest.raises(StrataError):
        admin.get_game("cli-forged")
    # Trusted, it is stored; the exit status still says it does not verify.
    assert cli.main([*common, "--game-id", "cli-forged", "--trust"]) == 1
    assert "cli-forged version 5: mismatch" in capsys.readouterr().out
    assert admin.get_game("cli-forged").game_id == "cli-forged"
