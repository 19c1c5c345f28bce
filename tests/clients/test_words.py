"""The terminal's words (clients/words) are the web table's: games of every
type are played through a real server, and the page's own modules
(service/web, run in Node) and the Python client say the same of each
game's status, each legal action and each event."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from clients.words import GAMES, TableWords, as_json
from clients.words.content import content
from domain import registry
from service.server import Running
from tests.service.conftest import serve

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None, reason="the web table's words run in `node` (Node 20)"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    from eventstore import migrate

    url = f"sqlite:///{tmp_path_factory.mktemp('words') / 'words.sqlite3'}"
    migrate.upgrade(url)
    yield from serve(url)


def play(target: str, game_type: str, seats: int, moves: int) -> list[dict[str, Any]]:
    """A game of ``game_type`` whose first ``seats`` seats one person plays
    (hot seat) by random choices against the service's random bots: each
    view with its legal actions, as the API's JSON, and the events."""
    rules = registry.rules_for(game_type)
    players = rules.min_players if rules.min_players > 1 else 2
    players = max(players, seats + 1)
    chooser = random.Random(f"words-{game_type}")
    with StrataClient(target) as anyone:
        bots = {seat: "random" for seat in range(seats, players)}
        game_id = anyone.create_game(game_type, players, bots=bots).game_id
        token = ""
        for seat in range(seats):
            token = (
                anyone.with_token(token)
                .join_game(game_id, player_name=f"P{seat + 1}", seat=seat)
                .seat_token
            )
        me = anyone.with_token(token)
        me.start_game(game_id)
        cases = []
        for _ in range(moves):
            game = me.get_game(game_id)
            legal = me.list_legal_actions(game_id)
            if game.status == pb.GAME_STATUS_FINISHED or game.version != legal.version:
                if game.status == pb.GAME_STATUS_FINISHED:
                    break
                continue
            cases.append(
                {
                    "game": as_json(game),
                    "actions": [as_json(a) for a in legal.actions],
                }
            )
            if not legal.actions:
                continue
            action = chooser.choice(list(legal.actions))
            try:
                me.submit_command(
                    game_id, action.seat, action.command, expected_version=legal.version
                )
            except StrataError as error:
                assert error.code == grpc.StatusCode.ABORTED
        events = [as_json(e) for e in me.watch_game(game_id, follow=False)]
        final = {"game": as_json(me.get_game(game_id)), "actions": [], "events": events}
    for case in [*cases, final]:
        case["content"] = content(game_type)
    return [*cases, final]


def the_pages_words(cases: list[dict[str, Any]], tmp_path: Path) -> list[Any]:
    """What the web table's modules say of the cases, run in Node."""
    web = tmp_path / "web"
    shutil.copytree(ROOT / "service" / "web", web)
    # Node loads the page's .js files as the browser does: as ES modules.
    (web / "package.json").write_text('{"type": "module"}')
    given = tmp_path / "cases.json"
    given.write_text(json.dumps(cases))
    assert NODE is not None
    done = subprocess.run(
        [
            NODE,
            str(ROOT / "tests" / "clients" / "table_words.mjs"),
            str(web),
            str(given),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    said: list[Any] = json.loads(done.stdout)
    return said


def the_terminals_words(cases: list[dict[str, Any]]) -> list[Any]:
    said = []
    for case in cases:
        table = TableWords(case["game"])
        said.append(
            {
                "status": table.status(),
                "labels": [table.label(a, case["actions"]) for a in case["actions"]],
                "events": [table.describe(e) for e in case.get("events", [])],
            }
        )
    return said


@pytest.mark.parametrize("seats", [1, 2])
@pytest.mark.parametrize("game_type", registry.game_types())
def test_the_terminal_says_what_the_web_table_says(
    server: Running, game_type: str, seats: int, tmp_path: Path
) -> None:
    cases = play(f"127.0.0.1:{server.port}", game_type, seats, moves=80)
    page, terminal = the_pages_words(cases, tmp_path), the_terminals_words(cases)
    assert len(page) == len(terminal) == len(cases)
    for case, theirs, ours in zip(cases, page, terminal, strict=True):
        assert ours == theirs, f"at version {case['game'].get('version')}"
    said = [text for case in terminal for text in case["events"]]
    labels = [label for case in terminal for label in case["labels"]]
    assert labels and said
    if game_type in GAMES:
        # The game's own words, never the API's names or a card's id.
        assert all(text is not None for text in said), said
        descriptions = {a["description"] for case in cases for a in case["actions"]}
        assert not descriptions & set(labels)
        shown = " ".join([*said, *labels])
        for card in _card_ids(cases):
            assert card not in shown


def _card_ids(cases: list[dict[str, Any]]) -> set[str]:
    """The card ids (``pet_rock_3``) the views held."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and "_" in value and value[-1].isdigit():
            found.add(value)

    for case in cases:
        walk(case["game"].get("view"))
    return found
