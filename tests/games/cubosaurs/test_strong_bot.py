"""The strong bot plays from its seat's view alone (:mod:`domain.search`)."""

from __future__ import annotations

from dataclasses import replace

from domain.cubosaurs import RULES
from domain.cubosaurs.model import CubosaursState
from tests.searchkit import assert_search_is_blind


def _scramble(state: CubosaursState, seat: int) -> CubosaursState | None:
    """The deck in another order, one of its cards swapped with a card out
    of play, the box in another order: nothing a player may see."""
    if len(set(state.deck)) < 2:
        return None
    deck = list(reversed(state.deck))
    out = list(state.out_of_play)
    if out and deck[0] != out[0]:
        deck[0], out[0] = out[0], deck[0]
    return replace(state, deck=tuple(deck), out_of_play=tuple(out), box=state.box[::-1])


def test_two_states_a_seat_cannot_tell_apart_get_the_same_move() -> None:
    assert assert_search_is_blind(RULES, 3, _scramble) >= 8
