"""The Python distribution ships no part of the TypeScript client: its
folders (sources, node_modules, dist) would otherwise be found as namespace
packages under ``clients`` and their ``*.js`` taken as package data."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_finds_no_package_in_the_typescript_client() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    find = config["tool"]["setuptools"]["packages"]["find"]
    packages = find_namespace_packages(
        where=str(ROOT), include=find["include"], exclude=find.get("exclude", ())
    )
    assert "clients" in packages
    assert not [p for p in packages if p.startswith("clients.typescript")]
