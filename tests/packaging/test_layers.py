"""The layers around the entry points (README, "Design decisions"): the
client never imports the server, and the server never imports the client;
the one `strata` command is joined by the ``strata.commands`` entry point
group instead of an import."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = {
    "clients": {"service", "eventstore"},
    "service": {"clients"},
    "eventstore": {"service", "clients"},
}


def imported_packages(package: str) -> dict[str, set[str]]:
    """Top-level packages imported anywhere (functions too) in each module."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
        found[str(path.relative_to(ROOT))] = names
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_layer_imports_none_of_the_layers_it_must_not_know(package):
    offences = {
        module: sorted(names & FORBIDDEN[package])
        for module, names in imported_packages(package).items()
        if names & FORBIDDEN[package]
    }
    assert offences == {}


def test_the_server_adds_its_commands_through_the_entry_point_group():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"strata": "clients.cli:main"}
    assert project["entry-points"]["strata.commands"] == {
        "server": "service.cli:register"
    }
