"""Happy Little Dinosaurs: 2-4 dinosaurs dodge disasters on the way to 50.

``RULES`` is the game's :class:`~domain.rules.GameRules`; the rules read
top-down in :mod:`.rules`, the shapes in :mod:`.model`, the cards in
``cards.json`` and ``dinosaurs.json`` (see :mod:`.cards`).
"""

from domain.happy_little_dinosaurs.rules import RULES, HappyLittleDinosaursRules

__all__ = ["RULES", "HappyLittleDinosaursRules"]
