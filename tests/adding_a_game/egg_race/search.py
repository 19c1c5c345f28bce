"""What the strong bot (:mod:`domain.search`) needs of Egg Race: the other
players' nests drawn again (the one secret; a scenario's scripted rolls go
too), and a judge of an unfinished race."""

from __future__ import annotations

from domain.chance import Rng
from domain.frozen import replace
from tests.adding_a_game.egg_race.model import EggRaceState


class EggRaceSearch:
    """The adapter (:class:`domain.rules.Search`)."""

    #: Playouts are cheap: to the end of the race.
    horizon = 200

    def determinise(self, state: EggRaceState, seat: int, rng: Rng) -> EggRaceState:
        nests = {
            s: nest if s == seat else 1 + rng.below(3)
            for s, nest in sorted(state.nests.items())
        }
        return replace(state, nests=nests, scenario_rolls=(), rolls_used=0)

    def resting(self, state: EggRaceState) -> bool:
        return False  # judged at the horizon or the end only

    def evaluate(self, state: EggRaceState, seat: int) -> float:
        mine = state.scores[seat]
        rival = max((s for i, s in enumerate(state.scores) if i != seat), default=0)
        return min(max(0.5 + (mine - rival) / (2 * state.target), 0.0), 1.0)


SEARCH = EggRaceSearch()
