"""The games Strata runs, by game type id."""

from __future__ import annotations

from typing import Any

from domain.rules import GameRules
from domain.session import Session

_GAMES: dict[str, GameRules[Any, Any, Any, Any]] = {}


def _load() -> None:
    if _GAMES:
        return
    from domain.cubosaurs import RULES as cubosaurs
    from domain.dinosaurs_extinct import RULES as dinosaurs_extinct
    from domain.escaping_extinction import RULES as escaping_extinction
    from domain.happy_little_dinosaurs import RULES as happy_little_dinosaurs

    for rules in (
        cubosaurs,
        dinosaurs_extinct,
        escaping_extinction,
        happy_little_dinosaurs,
    ):
        _GAMES[rules.game_type] = rules


def game_types() -> list[str]:
    """Every game type id, sorted."""
    _load()
    return sorted(_GAMES)


def rules_for(game_type: str) -> GameRules[Any, Any, Any, Any]:
    """The rules of ``game_type``; KeyError when unknown."""
    _load()
    return _GAMES[game_type]


def session_for(game_type: str) -> Session[Any]:
    """A lifecycle session around the rules of ``game_type``."""
    return Session(rules_for(game_type))
