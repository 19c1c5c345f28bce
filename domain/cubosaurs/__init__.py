"""Cubosaurs: take the packet or pass it on, and score the best collection.

``RULES`` is the game's :class:`~domain.rules.GameRules` (``RULES_V1``, rules
version 1, for the games created under it); the rules read top-down in
:mod:`.rules`, the shapes in :mod:`.model`, the cards, tiles and their scoring
in :mod:`.content`, the heuristic player in :mod:`.bots`.
"""

from domain.cubosaurs.rules import RULES, RULES_V1, CubosaursRules

__all__ = ["RULES", "RULES_V1", "CubosaursRules"]
