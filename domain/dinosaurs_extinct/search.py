"""What the strong bot (:mod:`domain.search`) needs of Dinosaurs Extinct?:
the Earth Event stack dealt again (its order is the one secret; a
scenario's scripted dice and stack go too), and a judge of an unfinished
race."""

from __future__ import annotations

from dataclasses import replace

from domain.chance import Rng
from domain.dinosaurs_extinct.model import State
from domain.search import shuffled_into


class DinosaursExtinctSearch:
    """The adapter (:class:`domain.rules.Search`)."""

    #: Playouts are cheap: to the end of the race.
    horizon = 400

    def determinise(self, state: State, seat: int, rng: Rng) -> State:
        (deck,) = shuffled_into(state.earth_deck, (len(state.earth_deck),), rng)
        return replace(
            state, earth_deck=deck, scripted_dice=(), dice_used=0, scripted_deck=()
        )

    def resting(self, state: State) -> bool:
        return False  # judged at the horizon or the end only

    def evaluate(self, state: State, seat: int) -> float:
        me = state.dinos[seat]
        rival = max(
            (d.step for s, d in enumerate(state.dinos) if s != seat and not d.out),
            default=0,
        )
        return min(max(0.5 + (me.step - rival) / 40, 0.0), 1.0)


SEARCH = DinosaursExtinctSearch()
