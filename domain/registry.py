"""The games Strata runs, by game type id and rules version.

A new game is created under its game type's current rules. A stored game is
loaded, verified and continued with the rules version it was created under
(``GameCreated.rules_version``), as long as that version is shipped: keeping
an old version alive is one entry in ``_OLDER`` below (its rules object),
not a copy of the service. A version no longer listed cannot be run.

Games from outside ``domain/`` join the list through ``STRATA_EXTRA_GAMES``:
comma-separated Python packages, each with a ``RULES`` (its current rules)
and optionally ``OLDER_RULES``. Their messages must be compiled into the
service's protos like a real game's (docs/ADDING_A_GAME.md); the test suite
registers a toy game this way for a whole run (``tests/extra_games.py``).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from domain.rules import GameRules
from domain.session import Session

Rules = GameRules[Any, Any, Any, Any]

_CURRENT: dict[str, Rules] = {}
_VERSIONS: dict[tuple[str, str], Rules] = {}


def _load() -> None:
    if _CURRENT:
        return
    from domain import (
        cubosaurs,
        dinosaurs_extinct,
        escaping_extinction,
        happy_little_dinosaurs,
    )

    current: tuple[Rules, ...] = (
        cubosaurs.RULES,
        dinosaurs_extinct.RULES,
        escaping_extinction.RULES,
        happy_little_dinosaurs.RULES,
    )
    # Older rules versions still shipped, for the games created under them.
    older: tuple[Rules, ...] = (
        cubosaurs.RULES_V1,
        cubosaurs.RULES_V2,
        dinosaurs_extinct.RULES_V1,
        escaping_extinction.RULES_V1,
        escaping_extinction.RULES_V2,
        escaping_extinction.RULES_V3,
        happy_little_dinosaurs.RULES_V1,
        happy_little_dinosaurs.RULES_V2,
    )
    current += tuple(_extra_rules(current))
    for package in _extra_packages():
        older += tuple(getattr(importlib.import_module(package), "OLDER_RULES", ()))
    versions = {(r.game_type, r.rules_version): r for r in (*current, *older)}
    _VERSIONS.update(versions)
    _CURRENT.update({r.game_type: r for r in current})


def _extra_rules(built_in: tuple[Rules, ...]) -> list[Rules]:
    """The current rules of the ``STRATA_EXTRA_GAMES`` packages; a
    RuntimeError naming the variable for a package that is missing, has no
    ``RULES`` or reuses a game type."""
    taken = {r.game_type for r in built_in}
    found: list[Rules] = []
    for package in _extra_packages():
        try:
            rules = importlib.import_module(package).RULES
        except (ImportError, AttributeError) as error:
            raise RuntimeError(
                f"STRATA_EXTRA_GAMES: {package} is no game package ({error})"
            ) from error
        if rules.game_type in taken:
            raise RuntimeError(
                f"STRATA_EXTRA_GAMES: {package}'s game type "
                f"{rules.game_type!r} is already registered"
            )
        taken.add(rules.game_type)
        found.append(rules)
    return found


def _extra_packages() -> list[str]:
    """The packages named by ``STRATA_EXTRA_GAMES``, in order."""
    names = os.environ.get("STRATA_EXTRA_GAMES", "").split(",")
    return [name.strip() for name in names if name.strip()]


def game_types() -> list[str]:
    """Every game type id, sorted."""
    _load()
    return sorted(_CURRENT)


def rules_versions(game_type: str) -> list[str]:
    """The rules versions of ``game_type`` this code runs, sorted (empty when
    the game type is unknown)."""
    _load()
    return sorted(v for t, v in _VERSIONS if t == game_type)


def rules_for(game_type: str, rules_version: str | None = None) -> Rules:
    """The rules of ``game_type``: its current version, or ``rules_version``.
    KeyError when the game type is unknown or that version is not shipped."""
    _load()
    if rules_version is None:
        return _CURRENT[game_type]
    return _VERSIONS[(game_type, rules_version)]


def session_for(game_type: str, rules_version: str | None = None) -> Session[Any]:
    """A lifecycle session around the rules of ``game_type`` (its current
    version, or ``rules_version``); KeyError as :func:`rules_for`."""
    return Session(rules_for(game_type, rules_version))
