"""A heuristic player of Egg Race: roll one more time than your nest."""

from __future__ import annotations

from collections.abc import Sequence

from domain.chance import Rng
from tests.adding_a_game.egg_race.model import EggRaceCommand, EggRaceView, Hold


def heuristic_bot(
    view: EggRaceView, legal: Sequence[EggRaceCommand], rng: Rng
) -> EggRaceCommand:
    """Hold once this turn's rolls exceed the seat's nest; else roll."""
    nest = view.nests.get(view.turn, 1)
    hold = [c for c in legal if isinstance(c, Hold)]
    if hold and view.rolls_this_turn > nest:
        return hold[0]
    return legal[0]
