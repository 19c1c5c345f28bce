"""``evolve`` consults nothing but the event and the state, in every game.

A fold that reads the printed content (a tile's resource, a turn's number
of actions, a card's value) or works out a decision from it refolds stored
events differently once a data file or a rule changes. So every game's
random games are folded again with the game's content withheld: each name
of its modules bound to the content (what ``content.py`` loads and
computes, and every module-level value derived from it, found in the
modules' source) and each attribute of its rules object stands for a
:class:`Withheld` that raises on any use. The fold must give the very
states it gives with the content there, from the true stream and from the
stream each viewer is sent. Only ``initial_state`` (the set-up, before any
event) may read the content.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import pkgutil
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from domain import registry
from domain.rules import GameRules, Viewer
from domain.session import Session
from tests.gamekit import fold_each, game_package, option_sets, play_random

SEEDS = 2  # random games per player count and options


class ContentRead(AssertionError):
    """The fold used something it may not read."""


def _refuse(self: Withheld, *args: Any, **kwargs: Any) -> Any:
    raise ContentRead(f"the fold read {object.__getattribute__(self, '_name')}")


class Withheld:
    """Stands for a piece of content during the refold: using it in any
    way (an attribute, a call, an item, a comparison, truth, iteration)
    raises :class:`ContentRead` naming it."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __repr__(self) -> str:
        return f"<withheld {object.__getattribute__(self, '_name')}>"


for _dunder in (
    "__getattr__",
    "__setattr__",
    "__call__",
    "__getitem__",
    "__iter__",
    "__len__",
    "__contains__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__bool__",
    "__int__",
    "__index__",
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__neg__",
    "__or__",
    "__and__",
    "__format__",
):
    setattr(Withheld, _dunder, _refuse)


def _is_vocabulary(value: Any) -> bool:
    """Code the fold may use: modules, classes (the events' and states'
    shapes, the content's enums) and type aliases."""
    return isinstance(value, types.ModuleType | type) or type(value).__module__ in (
        "typing",
        "types",
        "__future__",
    )


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _assignments(body: list[ast.stmt]) -> Iterator[tuple[str, ast.AST]]:
    """(name, value) of every plain assignment among ``body``'s statements."""
    for node in body:
        if isinstance(node, ast.Assign) and node.value is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value
        elif (
            isinstance(node, ast.AnnAssign)
            and node.value is not None
            and isinstance(node.target, ast.Name)
        ):
            yield node.target.id, node.value


def content_bindings(game_type: str) -> dict[types.ModuleType, set[str]]:
    """Every name of the game's modules bound to its content: what
    ``content.py`` defines (its data and its functions, not its classes),
    those names where other modules import them, and every module-level
    value computed from them."""
    package = importlib.import_module(game_package(game_type))
    content = importlib.import_module(f"{package.__name__}.content")
    tree = ast.parse(inspect.getsource(content))
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    defined |= {name for name, _ in _assignments(tree.body)}
    roots = {
        name
        for name in defined
        if not name.startswith("__") and not _is_vocabulary(vars(content)[name])
    }
    bound: dict[types.ModuleType, set[str]] = {content: roots}
    modules = [package] + [
        importlib.import_module(f"{package.__name__}.{m.name}")
        for m in pkgutil.iter_modules(package.__path__)
    ]
    trees = {module: ast.parse(inspect.getsource(module)) for module in modules}
    for module in modules:
        if module is not content:
            for node in trees[module].body:
                # The content module itself, by name, would hide what is read.
                imported = (
                    {f"{node.module}.{a.name}" for a in node.names}
                    if isinstance(node, ast.ImportFrom)
                    else {a.name for a in node.names}
                    if isinstance(node, ast.Import)
                    else set()
                )
                assert content.__name__ not in imported, module.__name__
            bound[module] = set()
    # To a fixed point over the game's modules: names imported from a module
    # where they are content (``content.py``, or a part of the rules that
    # computed them), and values computed from such names.
    changed = True
    while changed:
        changed = False
        for module in modules:
            if module is content:
                continue
            names = bound[module]
            before = len(names)
            for node in trees[module].body:
                if isinstance(node, ast.ImportFrom):
                    source = sys.modules.get(node.module or "")
                    if source in bound:
                        names |= {
                            a.asname or a.name
                            for a in node.names
                            if a.name in bound[source]
                        }
            for name, value in _assignments(trees[module].body):
                if (
                    name not in names
                    and _names(value) & names
                    and not _is_vocabulary(vars(module)[name])
                ):
                    names.add(name)
            changed |= len(names) != before
    return bound


def _class_content(rules: GameRules[Any, Any, Any, Any], bound: set[str]) -> set[str]:
    """Class attributes of the rules' classes computed from the content."""
    found: set[str] = set()
    for cls in type(rules).__mro__:
        if not cls.__module__.startswith(game_package(rules.game_type)):
            continue
        tree = ast.parse(inspect.getsource(cls))
        for name, value in _assignments(tree.body[0].body):  # type: ignore[attr-defined]
            if _names(value) & bound:
                found.add(name)
    return found


def blind(
    rules: GameRules[Any, Any, Any, Any], monkeypatch: pytest.MonkeyPatch
) -> GameRules[Any, Any, Any, Any]:
    """A copy of ``rules`` whose content is withheld, its modules' content
    too (until ``monkeypatch`` undoes it)."""
    bound = content_bindings(rules.game_type)
    everything: set[str] = set()
    for module, names in bound.items():
        everything |= names
        for name in names:
            monkeypatch.setattr(module, name, Withheld(f"{module.__name__}.{name}"))
    blinded = copy.copy(rules)
    kind = type(rules).__name__
    for name in [*vars(rules), *_class_content(rules, everything)]:
        object.__setattr__(blinded, name, Withheld(f"{kind}.{name}"))
    return blinded


def streams(
    rules: GameRules[Any, Any, Any, Any], players: int, seed: str, options: Any
) -> list[Any]:
    """A random game's events, and as each seat and a spectator is sent them."""
    session = Session(rules)
    events = play_random(rules, players, seed, options).events
    viewers = [Viewer.player(s) for s in range(players)] + [Viewer.spectator()]
    return [events] + [[session.redact(e, v) for e in events] for v in viewers]


@pytest.mark.parametrize("game_type", registry.game_types())
def test_the_fold_consults_nothing_but_the_event_and_the_state(
    game_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = registry.rules_for(game_type)
    session = Session(rules)
    games = [
        (stream, fold_each(session, stream))
        for options in option_sets(rules)
        for players in range(rules.min_players, rules.max_players + 1)
        for n in range(SEEDS)
        for stream in streams(rules, players, f"pure-{players}-{n}", options)
    ]

    sightless = Session(blind(rules, monkeypatch))

    for stream, states in games:
        # The set-up (GameCreated) may read the content: it is not a fold.
        state = states[0]
        for event, expected in zip(stream[1:], states[1:], strict=True):
            state = sightless.evolve(state, event)
            assert state == expected, type(event).__name__


def test_withholding_finds_each_games_content() -> None:
    # The test above is only as good as what it withholds: each game's
    # content object (or loader) is among it, and so is a value computed
    # from it at import (Escaping Extinction's sorted neighbours).
    found = {g: content_bindings(g) for g in registry.game_types()}

    def names(game_type: str, module: str) -> set[str]:
        wanted = importlib.import_module(f"{game_package(game_type)}.{module}")
        return found[game_type][wanted]

    assert {"CONTENT", "SORTED_NEIGHBOURS", "KEEP_CARDS"} <= names(
        "escaping_extinction", "readings"
    )
    # A value computed from the content in one part of the rules is content
    # where another part imports it too.
    assert "SORTED_NEIGHBOURS" in names("escaping_extinction", "legality")
    assert "CONTENT" in names("escaping_extinction", "rules")
    assert "load" in names("dinosaurs_extinct", "rules")
    assert {"TILES", "CARDS"} <= names("cubosaurs", "rules")
    assert "catalogue" in names("happy_little_dinosaurs", "rules")
    assert "catalogue" in names("happy_little_dinosaurs", "model")
    # Classes (the content's enums) are vocabulary, not content.
    assert "Resource" not in names("escaping_extinction", "rules")
