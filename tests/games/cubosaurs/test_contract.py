"""The game's shape: its messages map onto the protos, its package imports
only the standard library and ``domain``."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from strata.games.cubosaurs.v1 import cubosaurs_pb2

from domain.cubosaurs import RULES
from domain.cubosaurs.model import CardList, Options, RoundSetup, Scenario
from service import protomap

PACKAGE = Path(__file__).resolve().parents[3] / "domain" / "cubosaurs"


def test_the_rules_declare_the_game() -> None:
    assert RULES.game_type == "cubosaurs"
    assert (RULES.min_players, RULES.max_players) == (2, 5)
    assert RULES.options_type is Options and RULES.scenario_type is Scenario


def test_a_scenario_and_options_map_onto_the_protos_and_back() -> None:
    scenario = Scenario(
        (
            RoundSetup(
                (CardList((0, 1, 2, 3)), CardList((4, 5, 6, 7))),
                tuple(range(8, 20)),
                tuple(range(10)),
            ),
        )
    )
    message = protomap.to_proto(scenario, cubosaurs_pb2.Scenario())
    wire = cubosaurs_pb2.Scenario.FromString(message.SerializeToString())
    assert protomap.from_proto(wire, Scenario) == scenario
    options = Options(advanced=True, rounds=3)
    message = protomap.to_proto(options, cubosaurs_pb2.Options())
    assert protomap.from_proto(message, Options) == options


def test_the_package_imports_only_the_standard_library_and_domain() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top == "domain" or top in sys.stdlib_module_names, (
                    path.name,
                    name,
                )
