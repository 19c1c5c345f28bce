"""Happy Little Dinosaurs: 2-4 dinosaurs dodge disasters on the way to 50.

``RULES`` is the game's :class:`~domain.rules.GameRules` (``RULES_V2`` and
``RULES_V1``, rules versions 2 and 1, for the games created under them); the
rules read top-down in :mod:`.rules`, the shapes in :mod:`.model`, the cards
in ``cards.json`` and ``dinosaurs.json`` (see :mod:`.content`), the heuristic
player in :mod:`.bots`.
"""

from domain.happy_little_dinosaurs.rules import (
    RULES,
    RULES_V1,
    RULES_V2,
    HappyLittleDinosaursRules,
)

__all__ = ["RULES", "RULES_V1", "RULES_V2", "HappyLittleDinosaursRules"]
