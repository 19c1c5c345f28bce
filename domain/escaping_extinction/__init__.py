"""Escaping Extinction: the cooperative hex-map race against the Meteor.

``RULES`` is the game's :class:`~domain.rules.GameRules` (``RULES_V3``,
``RULES_V2`` and ``RULES_V1``, rules versions 3, 2 and 1, for the games
created under them). The
rules live in :mod:`domain.escaping_extinction.rules`, the typed shapes in
:mod:`~domain.escaping_extinction.model`, the printed content (JSON data
beside this file) in :mod:`~domain.escaping_extinction.content`, the
heuristic player in :mod:`~domain.escaping_extinction.bots`.
"""

from domain.escaping_extinction.rules import (
    RULES,
    RULES_V1,
    RULES_V2,
    RULES_V3,
    EscapingExtinctionRules,
)

__all__ = ["RULES", "RULES_V1", "RULES_V2", "RULES_V3", "EscapingExtinctionRules"]
