"""Every game has one shape: the same files, and its whole contract declared
on its rules class (nothing found by import paths or ``getattr``)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from domain import registry
from domain.rules import GameConfig
from tests.gamekit import game_folder, game_package

ROOT = Path(__file__).resolve().parents[2]
GAME_TYPES = registry.game_types()

#: The files of every game folder (besides its JSON data): see
#: docs/ADDING_A_GAME.md. A long rules module may be split into parts
#: (Escaping Extinction's readings, positions, legality and fold): each
#: part is a module its rules.py imports.
GAME_FILES = {
    "__init__.py",
    "rules.py",
    "model.py",
    "content.py",
    "bots.py",
    "search.py",
    "README.md",
}


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_every_game_folder_holds_the_same_files(game_type: str) -> None:
    folder = game_folder(game_type)
    files = {
        p.name
        for p in folder.iterdir()
        if p.is_file() and p.suffix != ".json" and p.name != "py.typed"
    }
    assert files >= GAME_FILES
    extra = {f"{part}.py" for part in rules_parts(game_type)}
    if not game_package(game_type).startswith("domain."):
        # A game from outside (tests/extra_games.py) carries its proto.
        extra.add(f"{game_type}.proto")
    assert files - GAME_FILES <= extra


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }


def rules_parts(game_type: str) -> set[str]:
    """The modules of the game's folder its rules.py imports (its parts)."""
    prefix = f"{game_package(game_type)}."
    own = {"model", "content", "bots", "search"}
    imported = imports_of(game_folder(game_type) / "rules.py")
    return {m.removeprefix(prefix) for m in imported if m.startswith(prefix)} - own


@pytest.mark.parametrize(
    ("game_type", "module"),
    [(t, m) for t in GAME_TYPES for m in ("bots.py", "search.py")],
)
def test_the_bots_import_no_rules(game_type: str, module: str) -> None:
    # A bot sees what a player sees: the shapes and the printed content (the
    # strong bot's adapter too: it deals secrets again, it does not decide).
    imported = imports_of(game_folder(game_type) / module)
    for part in ("rules", *rules_parts(game_type)):
        assert f"{game_package(game_type)}.{part}" not in imported
    assert "domain.session" not in imported


def test_no_game_imports_another_directly_or_not() -> None:
    """The games are independent (what import-linter's independence
    contract checks, here over the registry's games: a new game is held to
    it with no list to edit)."""
    import grimp

    packages = {game_type: game_package(game_type) for game_type in GAME_TYPES}
    roots = sorted({package.partition(".")[0] for package in packages.values()})
    graph = grimp.build_graph(*roots, cache_dir=None)
    chains = {
        (importer, imported): graph.find_shortest_chain(
            packages[importer], packages[imported], as_packages=True
        )
        for importer in GAME_TYPES
        for imported in GAME_TYPES
        if importer != imported
    }
    assert {pair: chain for pair, chain in chains.items() if chain} == {}


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_the_rules_class_declares_the_whole_contract(game_type: str) -> None:
    rules = registry.rules_for(game_type)
    assert set(rules.bots) == {"heuristic"}
    assert rules.search is not None and rules.search.horizon > 0
    assert isinstance(rules.cooperative, bool)
    assert all(
        name in {t.__name__ for t in rules.event_types} and version >= 1
        for name, version in rules.upcasters
    )
    assert rules.cooperative == (game_type == "escaping_extinction")


def test_nothing_in_the_domain_is_found_by_its_import_path() -> None:
    # Data files are read with importlib.resources; modules are imported.
    # The one exception is the registry's STRATA_EXTRA_GAMES: packages an
    # operator names (tests/extra_games.py), imported by those names.
    offenders = []
    for path in (ROOT / "domain").rglob("*.py"):
        if path == ROOT / "domain" / "registry.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import) and any(
                a.name == "importlib" for a in node.names
            ):
                offenders.append(str(path.relative_to(ROOT)))
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "importlib"
                and {a.name for a in node.names} != {"resources"}
            ):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_no_evolve_raises_or_asserts(game_type: str) -> None:
    # A fold applies facts: a decision in disguise (a check that raises, an
    # assert) belongs in decide.
    tree = ast.parse((game_folder(game_type) / "rules.py").read_text())
    folds = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "evolve"
    ]
    assert folds
    for fold in folds:
        assert not [
            n for n in ast.walk(fold) if isinstance(n, ast.Raise | ast.Assert)
        ], f"{game_type}: evolve raises or asserts"


@pytest.mark.parametrize(
    ("game_type", "rules_version"),
    [(t, v) for t in GAME_TYPES for v in registry.rules_versions(t)],
)
def test_an_event_evolve_has_nothing_to_do_with_leaves_the_state_as_is(
    game_type: str, rules_version: str
) -> None:
    rules = registry.rules_for(game_type, rules_version)
    config: GameConfig[Any] = GameConfig(
        rules.min_players, "x", rules.options_type(), None
    )
    state = rules.initial_state(config)
    assert rules.evolve(state, object()) == state
