"""The strong bot plays from its seat's view alone (:mod:`domain.search`)."""

from __future__ import annotations

from dataclasses import replace

from domain.escaping_extinction import RULES
from domain.escaping_extinction.model import State
from tests.searchkit import assert_search_is_blind


def _scramble(state: State, seat: int) -> State | None:
    """Two face-down World tiles swapped, the decks in another order:
    nothing the team may see."""
    down = [i for i, p in enumerate(state.places) if p.tile and not p.revealed]
    if len(down) < 2:
        return None
    places = list(state.places)
    a, b = down[0], down[-1]
    places[a] = replace(places[a], tile=state.places[b].tile)
    places[b] = replace(places[b], tile=state.places[a].tile)
    return replace(
        state,
        places=tuple(places),
        meteor_deck=state.meteor_deck[::-1],
        docket_deck=state.docket_deck[::-1],
        exploration_deck=state.exploration_deck[::-1],
    )


def test_two_states_a_seat_cannot_tell_apart_get_the_same_move() -> None:
    assert assert_search_is_blind(RULES, 2, _scramble, every=7) >= 8
