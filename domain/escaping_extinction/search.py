"""What the strong bot (:mod:`domain.search`) needs of Escaping Extinction:
a deal of what the team cannot see, and a judge of an unfinished game.

The face-down World tiles, the order of the Meteor, Rocket Docket and
Exploration decks and a scenario's scripted chance are secret (the
Meteor deck's special shuffle is not kept: the cards left are shuffled
evenly). The judge weighs the Launchpad's progress against the Meteor's.
"""

from __future__ import annotations

from dataclasses import replace

from domain.chance import Rng
from domain.escaping_extinction.model import State
from domain.search import shuffled_into

#: What the Launchpad needs for the win (README: 5 Rocket Parts, 8 Wood).
PARTS, WOOD = 5, 8


class EscapingExtinctionSearch:
    """The adapter (:class:`domain.rules.Search`)."""

    #: A few turns; a whole game's playout costs too much for a move.
    horizon = 12

    def determinise(self, state: State, seat: int, rng: Rng) -> State:
        down = [i for i, p in enumerate(state.places) if p.tile and not p.revealed]
        (tiles,) = shuffled_into([state.places[i].tile for i in down], [len(down)], rng)
        places = list(state.places)
        for i, tile in zip(down, tiles, strict=True):
            places[i] = replace(places[i], tile=tile)

        def deck(cards: tuple[str, ...]) -> tuple[str, ...]:
            return shuffled_into(cards, [len(cards)], rng)[0]

        return replace(
            state,
            places=tuple(places),
            meteor_deck=deck(state.meteor_deck),
            docket_deck=deck(state.docket_deck),
            exploration_deck=deck(state.exploration_deck),
            scenario=None,
        )

    def resting(self, state: State) -> bool:
        return False  # judged at the horizon or the end only

    def evaluate(self, state: State, seat: int) -> float:
        built = (
            min(state.launchpad_parts, PARTS) / PARTS
            + min(state.launchpad_wood, WOOD) / WOOD
        ) / 2
        danger = state.meteor / state.earth
        return min(max(0.5 + (built - danger) / 2, 0.0), 1.0)


SEARCH = EscapingExtinctionSearch()
