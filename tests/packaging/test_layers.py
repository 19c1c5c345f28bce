"""The layers around the entry points (README, "Design decisions"): the one
`strata` command is joined by the ``strata.commands`` entry point group
instead of an import (the imports between layers are import-linter's
contracts in pyproject.toml, checked by `./dev test`)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_server_adds_its_commands_through_the_entry_point_group():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"strata": "clients.cli:main"}
    assert project["entry-points"]["strata.commands"] == {
        "server": "service.cli:register"
    }
