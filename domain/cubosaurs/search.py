"""What the strong bot (:mod:`domain.search`) needs of Cubosaurs: a deal of
the cards a seat cannot see, and a judge of an unfinished game.

Every collection, the packet and the DNA tiles on offer are public; the
deck and this round's cards out of play are not (their sizes are), nor the
order of the DNA tiles in the box, nor a scenario's scripted deals. Those
are pooled and dealt again.
"""

from __future__ import annotations

from dataclasses import replace

from domain.chance import Rng
from domain.cubosaurs.content import score_round
from domain.cubosaurs.model import CubosaursState
from domain.search import shuffled_into


class CubosaursSearch:
    """The adapter (:class:`domain.rules.Search`)."""

    #: A few turns; the round's score so far judges the rest.
    horizon = 20

    def determinise(self, state: CubosaursState, seat: int, rng: Rng) -> CubosaursState:
        deck, out_of_play = shuffled_into(
            (*state.deck, *state.out_of_play),
            (len(state.deck), len(state.out_of_play)),
            rng,
        )
        (box,) = shuffled_into(state.box, (len(state.box),), rng)
        return replace(
            state, deck=deck, out_of_play=out_of_play, box=box, scenario=None
        )

    def resting(self, state: CubosaursState) -> bool:
        return False  # judged at the horizon or the end only

    def evaluate(self, state: CubosaursState, seat: int) -> float:
        now = score_round(
            [s.collection for s in state.seats],
            [s.tiles for s in state.seats],
            [s.instant for s in state.seats],
        )
        totals = [
            sum(s.scores) + now[i].total + s.tokens // 2
            for i, s in enumerate(state.seats)
        ]
        rival = max(t for i, t in enumerate(totals) if i != seat)
        return min(max(0.5 + (totals[seat] - rival) / 40, 0.0), 1.0)


SEARCH = CubosaursSearch()
