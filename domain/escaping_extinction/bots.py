"""The heuristic player of Escaping Extinction, behind the shared bot
protocol (:mod:`domain.bots`): the game's own heuristic
(:func:`domain.escaping_extinction.bot.choose`, which reads the seat's view
only and plays for the Dino whose turn it is). It needs no chance, so the
generator is unused.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.chance import Rng
from domain.escaping_extinction.bot import choose
from domain.escaping_extinction.model import Command, View


def heuristic_bot(view: View, legal: Sequence[Command], rng: Rng) -> Command:
    """The game's heuristic player's choice among ``legal``."""
    return choose(view, legal)
