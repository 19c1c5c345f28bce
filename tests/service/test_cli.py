"""The `strata` command against a real `strata serve` process, on SQLite and
on PostgreSQL: what a newcomer runs from the README."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from clients import cli
from domain import registry
from tests.extra_games import python_path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_serving(
    target: str, process: subprocess.Popen[bytes], seconds: float = 30
) -> None:
    deadline = time.monotonic() + seconds
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"strata serve exited with {process.returncode}")
            try:
                status = stub.Check(health_pb2.HealthCheckRequest(), timeout=1).status
                if status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                time.sleep(0.2)
    raise AssertionError("strata serve did not become healthy")


class Served(NamedTuple):
    """A ``strata serve`` process's gRPC target and HTTP listener."""

    grpc: str
    http: str


def serve(database_url: str, tmp_path: Path) -> Generator[Served, None, None]:
    """``strata serve`` in a process, until the generator is closed."""
    port, http_port = free_port(), free_port()
    env = {
        **os.environ,
        "STRATA_DATABASE_URL": database_url,
        "STRATA_PORT": str(port),
        "STRATA_HTTP_PORT": str(http_port),
        "STRATA_HOST": "127.0.0.1",
        "STRATA_ADMIN_TOKEN": "cli-admin",
    }
    # The log goes to a file: a pipe nobody reads would fill and stall it.
    log = (tmp_path / f"serve-{port}.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "serve"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": python_path(ROOT, ROOT / "protos")},
        stderr=log,
    )
    target = f"127.0.0.1:{port}"
    try:
        wait_serving(target, process, seconds=90)
        yield Served(target, f"http://127.0.0.1:{http_port}")
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        finally:
            log.close()
        tail = (tmp_path / f"serve-{port}.log").read_text()[-2000:]
        assert process.returncode == 0, tail


@pytest.fixture(autouse=True)
def admin_token_for_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    """The admin token the services below run with, as an operator's shell
    would hold it: `autoplay --seed` needs it (a chosen seed is admin-only)."""
    monkeypatch.setenv("STRATA_ADMIN_TOKEN", "cli-admin")


# One server a module for each database: starting `strata serve` costs
# seconds, and every test here plays its own games.
@pytest.fixture(scope="module")
def sqlite_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp_path = tmp_path_factory.mktemp("cli")
    yield from serve(f"sqlite:///{tmp_path / 'cli.sqlite3'}", tmp_path)


@pytest.fixture
def sqlite_target(sqlite_served: Served) -> str:
    return sqlite_served.grpc


@pytest.fixture(scope="module")
def postgres_target(
    postgres_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    from eventstore import migrate

    url = postgres_server.create_schema()
    assert cli.main(["migrate", "--database-url", url]) == 0
    assert migrate.check(url).ok
    for served in serve(url, tmp_path_factory.mktemp("cli-pg")):
        yield served.grpc


def autoplay(
    target: str,
    players: int,
    seed: str,
    capsys: pytest.CaptureFixture[str],
    game: str = "dinosaurs_extinct",
    transport: str = "grpc",
) -> dict[str, Any]:
    code = cli.main(
        [
            "autoplay",
            "--game",
            game,
            "--players",
            str(players),
            "--seed",
            seed,
            "--target",
            target,
            "--transport",
            transport,
        ]
    )
    assert code == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    summary: dict[str, Any] = json.loads(last)
    return summary


@pytest.mark.parametrize("players", [2, 3, 4])
def test_autoplay_finishes_games_on_sqlite(sqlite_target, players, capsys):
    summary = autoplay(sqlite_target, players, f"cli-{players}", capsys)
    assert summary["game_type"] == "dinosaurs_extinct"
    assert len(summary["winner"]) == 1 and 0 <= summary["winner"][0] < players
    assert summary["outcome"] and summary["version"] > players + 2


@pytest.mark.parametrize("game", registry.game_types())
def test_autoplay_finishes_every_game_type(sqlite_target, game, capsys):
    rules = registry.rules_for(game)
    for players in sorted({rules.min_players, rules.max_players}):
        summary = autoplay(sqlite_target, players, f"every-{players}", capsys, game)
        assert summary["game_type"] == game
        assert summary["outcome"]
        assert all(0 <= seat < players for seat in summary["winner"])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_autoplay_finishes_games_on_postgres(postgres_target, players, capsys):
    summary = autoplay(postgres_target, players, f"cli-{players}", capsys)
    assert len(summary["winner"]) == 1


@pytest.mark.parametrize("transport", ["connect", "grpc-web"])
def test_the_command_line_plays_over_the_http_listener(
    sqlite_served: Served, transport: str, capsys
):
    """`--transport` speaks Connect or gRPC-Web to the HTTP listener, and
    the same seed plays the same game as over gRPC."""
    over_http = autoplay(
        sqlite_served.http, 2, "over-http", capsys, transport=transport
    )
    over_grpc = autoplay(sqlite_served.grpc, 2, "over-http", capsys)
    assert over_http["game_id"] != over_grpc["game_id"]
    assert over_http["version"] > 2 and over_http["winner"]
    for key in ("seed", "winner", "outcome", "version", "commands"):
        assert over_http[key] == over_grpc[key], key


def test_the_same_seed_plays_the_same_game(sqlite_target, capsys):
    first = autoplay(sqlite_target, 3, "same", capsys)
    second = autoplay(sqlite_target, 3, "same", capsys)
    assert first["game_id"] != second["game_id"]
    for key in ("winner", "outcome", "version", "commands"):
        assert first[key] == second[key]
    exports = []
    for summary in (first, second):
        assert cli.main(["events", summary["game_id"], "--target", sqlite_target]) == 0
        lines = capsys.readouterr().out.strip().splitlines()
        events = [json.loads(line) for line in lines]
        for event in events:
            for key in ("gameId", "recordedAt", "position"):
                event.pop(key, None)
            # Each game commits to its seed with a salt of its own.
            for body in ("gameCreated", "seedRevealed"):
                for key in ("salt", "commitment"):
                    event.get(body, {}).pop(key, None)
        exports.append(events)
    assert exports[0] == exports[1]


def test_hot_seat_play_in_the_terminal_reaches_the_end(
    sqlite_target, capsys, monkeypatch
):
    answers = iter(["x", "99"] + ["0"] * 2000)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    code = cli.main(
        [
            "play",
            "--game",
            "dinosaurs_extinct",
            "--players",
            "2",
            "--seed",
            "tty",
            "--target",
            sqlite_target,
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "hot-seat game" in out and "choose one of the numbers" in out
    # The web table's words: the actions' labels, the events as sentences,
    # the outcome; not the API's names nor the raw view.
    # (hot seat: each choice after its seat's player)
    assert re.search(r"\[0\] player[12]: Roll the die\n", out) and "RollDie" not in out
    assert "rolled a" in out and "What happened:" in out
    assert "Game over. " in out and "won (Reached 21st century)." in out
    assert "dinos {" not in out and "lifeCardOverlays" not in out


def test_create_join_start_act_and_show_from_the_command_line(sqlite_target, capsys):
    def run(*args: str) -> str:
        assert cli.main([*args, "--target", sqlite_target]) == 0
        out: str = capsys.readouterr().out
        return out.strip()

    game_id = run("create", "--game", "dinosaurs_extinct", "--players", "2")
    ada = run("join", game_id, "--name", "Ada")
    run("join", game_id, "--name", "Bob")
    assert run("start", game_id, "--token", ada).startswith("version")
    actions = run("actions", game_id, "--token", ada)
    assert actions.startswith("[0] seat 0: RollDie")
    assert "DieRolled" in run("act", game_id, "0", "--token", ada)
    shown = run("show", game_id, "--token", ada)
    assert "seat 0: Ada (you)" in shown


def test_a_seed_needs_the_admin_token_on_the_command_line(
    sqlite_target, capsys, monkeypatch
):
    monkeypatch.delenv("STRATA_ADMIN_TOKEN")
    with pytest.raises(SystemExit) as refused:
        cli.main(
            [
                *("autoplay", "--game", "dinosaurs_extinct", "--players", "2"),
                *("--seed", "mine", "--target", sqlite_target),
            ]
        )
    assert "--seed needs the admin token" in str(refused.value)


def test_a_token_beginning_with_a_dash_is_read_as_the_value_of_token():
    # Seat tokens issued before the `st_` prefix begin with "-" one time in 64.
    args = cli.build_parser().parse_args(
        cli.glue_option_values(["show", "g1", "--token", "-Ab3_x", "--json"])
    )
    assert args.token == "-Ab3_x" and args.game_id == "g1"
    args = cli.build_parser().parse_args(
        cli.glue_option_values(["show", "g1", "--token=-Ab3_x"])
    )
    assert args.token == "-Ab3_x"


def test_a_legacy_dash_token_works_on_the_command_line(sqlite_target, capsys):
    game_id = _run(
        sqlite_target, capsys, "create", "--game", "dinosaurs_extinct", "--players", "2"
    )
    # An unknown token is a spectator: what matters is that it parses.
    shown = _run(sqlite_target, capsys, "show", game_id, "--token", "-nobody")
    assert "seat 0" in shown


def _run(target: str, capsys: Any, *args: str) -> str:
    assert cli.main([*args, "--target", target]) == 0
    out: str = capsys.readouterr().out
    return out.strip()


def test_autoplay_plays_cubosaurs_in_advanced_mode(sqlite_target, capsys):
    code = cli.main(
        [
            "autoplay",
            "--game",
            "cubosaurs",
            "--players",
            "3",
            "--seed",
            "dna",
            "--advanced",
            "--target",
            sqlite_target,
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["outcome"]
    assert cli.main(["events", summary["game_id"], "--target", sqlite_target]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[0]["gameCreated"]["options"]["cubosaurs"]["advanced"] is True
    assert any(
        "tileBought" in json.dumps(e) or "dnaTokensGained" in json.dumps(e)
        for e in events
    )


def test_a_choice_overtaken_by_another_move_is_played_at_the_new_version(
    sqlite_target, capsys, monkeypatch
):
    """Happy Little Dinosaurs, both seats in the terminal: while the person
    chooses seat 1's card, seat 2's card is played elsewhere; the choice,
    still legal, is submitted again at the new version instead of refused."""
    from clients.client import StrataClient

    printed: list[str] = []
    chosen: list[str] = []
    overtaken_at: list[int] = []

    def answer(prompt: str = "") -> str:
        printed.append(capsys.readouterr().out)
        if chosen:
            return "q"
        token = "".join(printed).split("every seat's token: ")[1].split()[0]
        game_id = "".join(printed).split("hot-seat game ")[1].split(";")[0]
        with StrataClient(sqlite_target, token=token) as other:
            legal = other.list_legal_actions(game_id)
            seat_2 = next(a for a in legal.actions if a.seat == 1)
            done = other.submit_command(game_id, seat_2.seat, seat_2.command)
        overtaken_at.append(done.version)
        chosen.append(game_id)
        return "0"

    monkeypatch.setattr("builtins.input", answer)
    code = cli.main(
        [
            "play",
            "--game",
            "happy_little_dinosaurs",
            "--players",
            "2",
            "--target",
            sqlite_target,
        ]
    )
    assert code == 0
    out = "".join(printed) + capsys.readouterr().out
    assert "your choice still holds" in out
    assert "refused" not in out
    assert re.search(CARD_ID, out) is None
    # Seat 1's choice was played after seat 2's move, at the new version.
    token = out.split("every seat's token: ")[1].split()[0]
    with StrataClient(sqlite_target, token=token) as me:
        game = me.get_game(chosen[0])
        played = [
            e
            for e in me.watch_game(chosen[0], follow=False)
            if e.version > overtaken_at[0]
        ]
    assert game.version > overtaken_at[0]
    assert played


#: A card id of Happy Little Dinosaurs as the API has it (``pet_rock_3``).
CARD_ID = r"\b[a-z]+(_[a-z]+)+_\d+\b"


@pytest.fixture
def slow_bots_target(tmp_path: Path) -> Iterator[str]:
    """A real server whose bots make at most one move in two seconds (after
    a burst of two), so that a person's choice can be overtaken by one."""
    from dataclasses import replace

    from eventstore import migrate
    from eventstore.factory import open_store
    from service.server import create_server
    from tests.service.conftest import NO_RATE_LIMITS

    url = f"sqlite:///{tmp_path / 'slow-bots.sqlite3'}"
    migrate.upgrade(url)
    store = open_store(url)
    running = create_server(
        store,
        admin_token="cli-admin",
        port=0,
        limits=replace(NO_RATE_LIMITS, bot_moves_per_second=0.5),
    )
    try:
        yield f"127.0.0.1:{running.port}"
    finally:
        running.stop(grace=0.5)
        store.close()


def test_a_choice_made_while_a_bot_moves_is_retried_not_refused(
    slow_bots_target, capsys, monkeypatch
):
    """Happy Little Dinosaurs against the service's bot: at a prompt, the
    person answers only once the bot has moved since the choices were
    listed (the choice is pinned to an older version). It is sent again at
    the new version, or said to be gone, never refused; and the screen
    shows the game's words, not card ids."""
    from clients.client import StrataClient

    printed: list[str] = []
    overtaken: list[int] = []
    prompts = []

    def answer(prompt: str = "") -> str:
        printed.append(capsys.readouterr().out)
        screen = "".join(printed)
        prompts.append(prompt)
        if overtaken or len(prompts) > 40:
            return "q"
        listed = int(re.findall(r"Your choices \(at version (\d+)\)", screen)[-1])
        game_id = screen.split("hot-seat game ")[1].split(";")[0]
        with StrataClient(slow_bots_target) as spectator:
            deadline = time.monotonic() + 6
            while time.monotonic() < deadline:
                if spectator.get_game(game_id).version > listed:
                    overtaken.append(listed)
                    break
                time.sleep(0.05)
        return "0"

    monkeypatch.setattr("builtins.input", answer)
    code = cli.main(
        [
            *("play", "--game", "happy_little_dinosaurs", "--players", "2"),
            *("--bot", "1=random", "--target", slow_bots_target),
        ]
    )
    assert code == 0
    out = "".join(printed) + capsys.readouterr().out
    assert overtaken, out[-3000:]
    after = out.split(f"Your choices (at version {overtaken[0]})")[-1]
    assert "the game moved on" in after
    assert "refused" not in out
    assert "Your choices" in out and "[0] Play " in out
    assert "What happened:" in out and "random bot (seat 2)" in out
    assert re.search(CARD_ID, out) is None, re.search(CARD_ID, out)
