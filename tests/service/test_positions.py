"""Games that start from a position (README, "Start from a position"),
end to end through a real server: each game's README example, created with
`strata create --position FILE`, starts from that position; players see it
only as their seat could; a broken position is refused naming its field,
and nothing is stored; such games verify, replay and export."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients import cli
from clients.client import StrataClient, StrataError, position_scenario
from domain import codec, registry
from domain.errors import InvalidCommand
from domain.rules import Viewer
from service.server import Running
from tests.gamekit import game_folder
from tests.service.conftest import (
    ADMIN_TOKEN,
    TRANSPORTS,
    client_for,
    play_first_actions,
)

GAMES = [g for g in registry.game_types() if registry.rules_for(g).position_type]


def readme_position(game_type: str) -> dict[str, Any]:
    """The example position in the game's README (the JSON block of its
    "Starting from a position" section)."""
    text = (game_folder(game_type) / "README.md").read_text()
    section = text.split("## Starting from a position", 1)[1]
    block = re.search(r"```json\n(.*?)\n```", section, re.S)
    assert block, f"{game_type}'s README shows no example position"
    data: dict[str, Any] = json.loads(block.group(1))
    return data


def domain_position(game_type: str, data: dict[str, Any]) -> Any:
    """The README's position as the game's domain dataclass."""
    from service import protomap

    rules = registry.rules_for(game_type)
    scenario = position_scenario(game_type, data)
    return protomap.from_proto(
        getattr(scenario, game_type), rules.scenario_type
    ).position


def players_for(game_type: str, data: dict[str, Any]) -> int:
    """The player count the example position is for (the one the game
    accepts it with)."""
    rules = registry.rules_for(game_type)
    session = registry.session_for(game_type)
    scenario = rules.scenario_type(position=domain_position(game_type, data))
    for players in range(rules.min_players, rules.max_players + 1):
        try:
            session.create(players, "seed", None, scenario)
        except InvalidCommand:
            continue
        return players
    raise AssertionError(f"{game_type}'s README example fits no player count")


def seat_everyone(client: StrataClient, game_id: str, players: int) -> list[str]:
    tokens = [
        client.join_game(game_id, f"p{seat}", seat).seat_token
        for seat in range(players)
    ]
    client.with_token(tokens[0]).start_game(game_id)
    return tokens


@pytest.mark.parametrize("game_type", GAMES)
def test_the_readme_example_starts_a_game_from_its_position(
    server: Running,
    client: StrataClient,
    game_type: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rules = registry.rules_for(game_type)
    data = readme_position(game_type)
    position = domain_position(game_type, data)
    players = players_for(game_type, data)
    path = tmp_path / "position.json"
    path.write_text(json.dumps(data))
    target = f"127.0.0.1:{server.port}"
    monkeypatch.setenv("STRATA_ADMIN_TOKEN", ADMIN_TOKEN)
    args = ["create", "--game", game_type, "--players", str(players)]
    assert cli.main([*args, "--position", str(path), "--target", target]) == 0
    game_id = capsys.readouterr().out.strip()
    tokens = seat_everyone(client, game_id, players)

    # The game is where the position put it: the admin's view of the game
    # equals the game's own view of the state made from the position.
    admin = client.with_token(ADMIN_TOKEN)
    game = admin.get_game(game_id)
    assert game.status == pb.GAME_STATUS_ACTIVE
    assert list_actions(admin, game_id), "nobody may act"

    # Each seat sees the position as its seat could, in GameCreated.
    for seat, token in enumerate(tokens):
        created = next(client.with_token(token).watch_game(game_id, follow=False))
        shown = created.game_created.scenario
        expected = rules.redact_position(position, Viewer.player(seat))
        assert domain_of(game_type, shown) == expected
        assert not created.game_created.seed
    spectator = next(client.watch_game(game_id, follow=False)).game_created
    assert domain_of(game_type, spectator.scenario) == rules.redact_position(
        position, Viewer.spectator()
    )
    admin_created = next(admin.watch_game(game_id, follow=False)).game_created
    assert domain_of(game_type, admin_created.scenario) == position

    # A few moves, then the game verifies and replays from its position.
    me = client.with_token(tokens[0])
    play_first_actions(client, game_id, tokens, 3)
    verdict = admin.verify_game(game_id)
    assert verdict.verdict == admin_pb.VERDICT_VERIFIED, verdict.message
    steps = list(me.replay_game(game_id))
    assert steps[-1].game == me.get_game(game_id)
    # Time travel: the game at any version is the replay's step there (the
    # position included, before and after the start).
    for step in steps[:: max(1, len(steps) // 4)]:
        back = me.get_game(game_id, at_version=step.event.version)
        assert back.view == step.game.view, step.event.version
    # Exported and imported under another id, it verifies there too.
    document = admin.export_game(game_id).document
    copy = admin.import_game(document, game_id=f"{game_id}-copy").game_id
    verdict = admin.verify_game(copy)
    assert verdict.verdict == admin_pb.VERDICT_VERIFIED, verdict.message
    assert admin.get_game(copy).view == admin.get_game(game_id).view


def list_actions(client: StrataClient, game_id: str) -> list[Any]:
    return list(client.list_legal_actions(game_id).actions)


def domain_of(game_type: str, scenario: pb.GameScenario) -> Any:
    from service import protomap

    rules = registry.rules_for(game_type)
    return protomap.from_proto(
        getattr(scenario, game_type), rules.scenario_type
    ).position


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("game_type", GAMES)
def test_a_broken_position_is_refused_naming_its_field_and_nothing_is_stored(
    server: Running, transport: str, game_type: str
) -> None:
    data = readme_position(game_type)
    broken = json.loads(json.dumps(data))
    broken_field = break_position(game_type, broken)
    players = players_for(game_type, data)
    with client_for(server, transport) as client:
        admin = client.with_token(ADMIN_TOKEN)
        before = [g.game_id for g in admin.all_games()]
        with pytest.raises(StrataError) as refused:
            admin.create_game(game_type, players, position=broken)
        assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.reason == "POSITION_INVALID"
        assert refused.value.field == f"scenario.{game_type}.position.{broken_field}"
        assert [g.game_id for g in admin.all_games()] == before
        # Only the admin may start a game from a position.
        with pytest.raises(StrataError) as denied:
            client.create_game(game_type, players, position=data)
        assert denied.value.code == grpc.StatusCode.PERMISSION_DENIED
        assert [g.game_id for g in admin.all_games()] == before


def break_position(game_type: str, data: dict[str, Any]) -> str:
    """Break the README example of ``game_type`` in one field (as the
    game's own position tests say: ``break_readme_example``); its path."""
    tests = importlib.import_module(f"tests.games.{game_type}.test_positions")
    field: str = tests.break_readme_example(data)
    return field


def test_the_cli_says_what_is_wrong_with_a_position_file(
    server: Running,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    game_type = GAMES[0]
    target = f"127.0.0.1:{server.port}"
    monkeypatch.setenv("STRATA_ADMIN_TOKEN", ADMIN_TOKEN)
    players = str(players_for(game_type, readme_position(game_type)))
    args = ["create", "--game", game_type, "--players", players, "--target", target]
    path = tmp_path / "p.json"
    path.write_text("{not json")
    with pytest.raises(SystemExit) as bad:
        cli.main([*args, "--position", str(path)])
    assert str(path) in str(bad.value.code)
    path.write_text(json.dumps({"no_such_field": 1}))
    with pytest.raises(SystemExit) as bad:
        cli.main([*args, "--position", str(path)])
    assert f"not a {game_type} position" in str(bad.value.code)
    data = readme_position(game_type)
    field = break_position(game_type, data)
    path.write_text(json.dumps(data))
    assert cli.main([*args, "--position", str(path)]) == 1
    err = capsys.readouterr().err
    assert "POSITION_INVALID" in err and f"position.{field}" in err


def test_positions_survive_the_proto_json_form() -> None:
    for game_type in GAMES:
        data = readme_position(game_type)
        scenario = position_scenario(game_type, data)
        again = json_format.MessageToDict(getattr(scenario, game_type).position)
        assert position_scenario(game_type, again) == scenario
        assert codec.encode(domain_position(game_type, data))
