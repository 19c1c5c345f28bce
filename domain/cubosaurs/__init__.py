"""Cubosaurs: take the packet or pass it on, and score the best collection.

``RULES`` is the game's :class:`~domain.rules.GameRules` (``RULES_V2`` and
``RULES_V1``, rules versions 2 and 1, for the games created under them); the
rules read top-down in :mod:`.rules`, the shapes in :mod:`.model`, the cards,
tiles and their scoring in :mod:`.content`, the heuristic player in
:mod:`.bots`.
"""

from domain.cubosaurs.rules import RULES, RULES_V1, RULES_V2, CubosaursRules

__all__ = ["RULES", "RULES_V1", "RULES_V2", "CubosaursRules"]
