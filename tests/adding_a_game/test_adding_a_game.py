"""docs/ADDING_A_GAME.md is true: every registered game is where the doc
says in the service's protos, and a toy game (Egg Race, in this folder)
added by exactly the doc's steps plays, replays, maps onto its protos,
passes buf's lint, is asked for by the service's `oneof`s, and has bots the
balance lab runs.

The real protos and registry stay as they are: the toy's proto and the
service's `oneof` entries are written into a copy of protos/ (then linted
and compiled from there), and its registry entry is patched in for the
test's duration. Under ``./dev test`` the toy is registered for the whole
run instead (tests/extra_games.py): then every generic test of the suite
plays it too, and these tests check the same steps against that.
"""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc_tools
import pytest
import strata.games
from google.protobuf import descriptor_pb2, descriptor_pool
from strata.v1 import admin_service_pb2, game_service_pb2, integration_service_pb2

from clients import cli
from domain import bots, registry
from domain.chance import Rng
from domain.errors import RuleViolation
from domain.rules import GameRules, Viewer
from domain.session import Session
from service import protomap
from service.answers import game_module
from service.protoshape import differences
from tests import extra_games, gamekit
from tests.adding_a_game import egg_race
from tests.adding_a_game.egg_race.model import (
    DieRolled,
    Hold,
    NestDrawn,
    Options,
    RacerLeft,
    RaceWon,
    RollDie,
    Scenario,
    TurnPassed,
)
from tests.adding_a_game.oneofs import (
    add_to_oneofs,
    game_proto_file,
    oneof_problems,
)

ROOT = Path(__file__).resolve().parents[2]
TOY = Path(egg_race.__file__).parent
GAME_TYPE = "egg_race"
RULES = egg_race.RULES
SERVICE_FILES = [
    game_service_pb2.DESCRIPTOR,
    admin_service_pb2.DESCRIPTOR,
    integration_service_pb2.DESCRIPTOR,
]
PROTOC_INCLUDE = Path(grpc_tools.__file__).parent / "_proto"
#: Whether the suite runs with the toy registered throughout (``./dev test``
#: does: tests/extra_games.py), or only inside this module's tests.
SUITE_WIDE = GAME_TYPE in extra_games.game_types()


# -- the four games -------------------------------------------------------------------


def test_every_registered_game_is_in_every_oneof_of_the_service():
    assert oneof_problems(SERVICE_FILES, registry.game_types()) == []


@pytest.mark.parametrize("game_type", registry.game_types())
def test_every_registered_game_has_its_messages_where_the_doc_says(game_type):
    module = game_module(game_type)
    assert module.DESCRIPTOR.name == game_proto_file(game_type)
    assert module.DESCRIPTOR.package == f"strata.games.{game_type}.v1"
    rules = registry.rules_for(game_type)
    for wrapper, oneof, types in (
        (module.Command, "command", rules.command_types),
        (module.Event, "event", rules.event_types),
    ):
        fields = wrapper.DESCRIPTOR.oneofs_by_name[oneof].fields
        assert {f.name: f.message_type.name for f in fields} == {
            protomap.snake(t.__name__): t.__name__ for t in types
        }
    for kind in ("Options", "Scenario", "View"):
        assert kind in module.DESCRIPTOR.message_types_by_name


# -- a fifth game, by the doc's steps -------------------------------------------------


@dataclass(frozen=True)
class Added:
    """The toy game, added: its generated module, the copy of protos/ with
    the doc's proto steps done, and that copy's compiled descriptors."""

    module: ModuleType
    protos: Path
    service_files: list[Any]


def protoc(*args: str | Path) -> None:
    from grpc_tools import protoc as compiler

    assert compiler.main(["protoc", f"-I{PROTOC_INCLUDE}", *map(str, args)]) == 0


@pytest.fixture(scope="module")
def added(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Added]:
    tmp = tmp_path_factory.mktemp(GAME_TYPE)
    protos = tmp / "protos"
    shutil.copytree(
        ROOT / "protos",
        protos,
        ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.pyi", "py.typed"),
    )
    # "The protos": the game's file at strata/games/<game_type>/v1/.
    proto = protos / game_proto_file(GAME_TYPE)
    proto.parent.mkdir(parents=True)
    shutil.copy(TOY / "egg_race.proto", proto)
    # "The service's oneofs": an entry in each oneof of game_service.proto.
    service = protos / "strata" / "v1" / "game_service.proto"
    service.write_text(add_to_oneofs(service.read_text(), GAME_TYPE, RULES.title))
    # "Regenerate": here only the game's module, into a folder of its own.
    generated = tmp / "generated"
    generated.mkdir()
    protoc(f"-I{protos}", f"--python_out={generated}", proto.relative_to(protos))
    for package in ("strata/games/egg_race", "strata/games/egg_race/v1"):
        (generated / package / "__init__.py").touch()
    # The whole edited contract, compiled apart from the real one.
    descriptors = tmp / "descriptors.pb"
    protoc(
        f"-I{protos}",
        "--include_imports",
        f"--descriptor_set_out={descriptors}",
        "strata/v1/game_service.proto",
    )
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(
        descriptors.read_bytes()
    ).file:
        pool.AddSerializedFile(file.SerializeToString())
    service_files = [pool.FindFileByName("strata/v1/game_service.proto")]

    if SUITE_WIDE:
        # Registered for the whole run (tests/extra_games.py), its code
        # compiled with the service's: nothing to patch in.
        yield Added(game_module(GAME_TYPE), protos, service_files)
        return
    with pytest.MonkeyPatch.context() as patch:
        # "Register the game in domain/registry.py".
        registry.game_types()
        patch.setitem(registry._CURRENT, GAME_TYPE, RULES)
        patch.setitem(registry._VERSIONS, (GAME_TYPE, RULES.rules_version), RULES)
        # Its generated module where the service imports it from.
        patch.setattr(
            strata.games,
            "__path__",
            [*strata.games.__path__, str(generated / "strata/games")],
        )
        importlib.invalidate_caches()
        try:
            yield Added(game_module(GAME_TYPE), protos, service_files)
        finally:
            game_module.cache_clear()
            for name in [
                m for m in sys.modules if m.startswith("strata.games.egg_race")
            ]:
                del sys.modules[name]


def test_the_toy_declares_the_whole_rules_contract(added):
    assert isinstance(RULES, GameRules)
    for attribute in (
        "game_type", "title", "rules_version", "min_players", "max_players",
        "options_type", "scenario_type", "state_type", "view_type",
        "command_types", "event_types",
    ):  # fmt: skip
        assert getattr(RULES, attribute), attribute
    assert GAME_TYPE in registry.game_types()
    assert registry.rules_for(GAME_TYPE) is RULES


def test_the_toys_code_imports_only_the_standard_library_and_domain():
    allowed = set(sys.stdlib_module_names) | {"domain", "__future__"}
    for path in TOY.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                # Its own package stands where domain/egg_race/ would be.
                if not name.startswith("tests.adding_a_game.egg_race"):
                    assert name.partition(".")[0] in allowed, (path.name, name)


def test_the_toys_rules_given_when_then(added):
    state = gamekit.given(RULES, 2, [NestDrawn(0, 2), NestDrawn(1, 3)])
    with pytest.raises(RuleViolation) as refused:
        gamekit.when(RULES, state, 0, Hold())
    assert refused.value.reason == "ROLL_FIRST"
    with pytest.raises(RuleViolation) as refused:
        gamekit.when(RULES, state, 1, RollDie())
    assert refused.value.reason == "NOT_YOUR_TURN"
    state = gamekit.given(
        RULES,
        2,
        [NestDrawn(0, 2), DieRolled(0, 6)],
        Options(target=8),
        Scenario((6, 4)),
    )
    assert gamekit.when(RULES, state, 0, RollDie()) == [DieRolled(0, 4), RaceWon(0)]


@pytest.mark.parametrize("players", [2, 3])
def test_random_toy_games_replay_and_map_to_their_protos(added, players):
    assert added.module.DESCRIPTOR.name == game_proto_file(GAME_TYPE)
    for seed in range(100):
        played = gamekit.play_random(RULES, players, f"toy-{seed}")
        gamekit.assert_replays(RULES, played)
        gamekit.assert_replays_deterministically(RULES, played, f"toy-{seed}")
        gamekit.assert_maps_to_proto(RULES, added.module, played)


def test_the_toys_model_has_the_shape_of_its_proto(added):
    module = added.module
    assert differences(tuple(RULES.command_types), module.Command.DESCRIPTOR) == []
    assert differences(tuple(RULES.event_types), module.Event.DESCRIPTOR) == []
    for kind in ("Options", "Scenario", "View"):
        model = getattr(RULES, f"{kind.lower()}_type")
        assert differences(model, getattr(module, kind).DESCRIPTOR) == []


def test_no_player_sees_another_players_nest(added):
    played = gamekit.play_random(RULES, 3, "secrets")
    for seat in range(3):
        viewer = Viewer.player(seat)
        assert set(RULES.view(played.state.game, viewer).nests) == {seat}
        for event in played.events:
            if isinstance(event, NestDrawn) and event.seat != seat:
                assert RULES.redact(event, viewer) == NestDrawn(event.seat, None)


def test_the_toys_proto_passes_buf_lint_format_and_breaking(added):
    buf = shutil.which("buf") or shutil.which(
        "buf", path=str(Path(sys.executable).parent)
    )
    assert buf, "buf is in the dev extra (PyPI's buf-bin)"
    protos = str(added.protos)
    for args in (
        ["lint", protos],
        ["format", protos, "--diff", "--exit-code"],
        # Adding a game breaks nothing: there is nothing to declare.
        ["breaking", protos, "--against", str(ROOT / "protos")],
    ):
        result = subprocess.run([buf, *args], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_service_oneofs_want_the_toy_until_the_doc_step_adds_it(added):
    missing = oneof_problems(SERVICE_FILES, registry.game_types())
    if SUITE_WIDE:  # the service's code was compiled with the step done
        assert missing == []
    else:
        assert len(missing) == 5 and all(GAME_TYPE in line for line in missing)
    assert oneof_problems(added.service_files, registry.game_types()) == []


def test_the_toys_bots_play_whole_games_and_the_lab_reports_them(added, capsys):
    assert bots.bot_kinds(GAME_TYPE) == ["heuristic", "random", "strong"]
    heuristic = bots.bot_for(GAME_TYPE, "heuristic").play
    for seed in range(50):
        game = bots.play_bot_game(RULES, f"bots-{seed}", [heuristic, bots.random_bot])
        assert len(game.winners) == 1
    args = ["simulate", "--game", GAME_TYPE, "--players", "3", "--games", "20",
            "--bots", "heuristic,random", "--processes", "1", "--quiet"]  # fmt: skip
    assert cli.main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["game_type"] == GAME_TYPE and report["games"] == 20


def test_a_toy_game_is_created_and_played_through_the_lifecycle(added):
    session = Session(RULES)
    state = session.fold([session.create(2, "life", Options(target=10))])
    assert state.game.target == 10
    with pytest.raises(Exception, match="target"):
        session.create(2, "life", Options(target=99))


def test_a_seat_that_leaves_is_out_of_the_race_and_its_turns_are_skipped():
    # Given three racers, seat 0 to roll
    state = gamekit.given(RULES, 3, [NestDrawn(0, 2), NestDrawn(1, 3), NestDrawn(2, 1)])
    # When seat 0 leaves on its turn, the turn passes on at once
    assert RULES.leave(state, 0, (1, 2)) == [RacerLeft(0), TurnPassed(1)]
    # And later, seat 2's turn ends past seat 0 to seat 1
    out = RULES.evolve(state, RacerLeft(0))
    out = RULES.evolve(out, TurnPassed(2))
    events = RULES.decide(RULES.evolve(out, DieRolled(2, 3)), 2, Hold(), Rng("x", 0))
    assert events == [TurnPassed(1)]
    # And a seat that leaves off its turn passes nothing
    assert RULES.leave(state, 2, (0, 1)) == [RacerLeft(2)]


@pytest.mark.parametrize(
    ("packages", "message"),
    [
        ("no_such_package_here", "is no game package"),
        ("tests.adding_a_game", "is no game package"),  # no RULES
        ("domain.cubosaurs", "already registered"),
    ],
)
def test_a_wrong_extra_game_is_refused_naming_the_variable(
    monkeypatch, packages, message
):
    monkeypatch.setenv("STRATA_EXTRA_GAMES", packages)
    monkeypatch.setattr(registry, "_CURRENT", {})
    monkeypatch.setattr(registry, "_VERSIONS", {})
    with pytest.raises(RuntimeError, match=f"STRATA_EXTRA_GAMES: .*{message}"):
        registry.game_types()
