"""The strong bot plays from its seat's view alone (:mod:`domain.search`)."""

from __future__ import annotations

from dataclasses import replace

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.model import State
from tests.searchkit import assert_search_is_blind


def _scramble(state: State, seat: int) -> State | None:
    """The Earth Event stack in another order: nothing a player may see."""
    if len(set(state.earth_deck)) < 2:
        return None
    deck = state.earth_deck
    shifted = (*deck[1:], deck[0])
    return replace(state, earth_deck=shifted if shifted != deck else deck[::-1])


def test_two_states_a_seat_cannot_tell_apart_get_the_same_move() -> None:
    # A Dino Switch is the game's only choice: many games to meet a few.
    assert assert_search_is_blind(RULES, 4, _scramble, seeds=20, every=1) >= 3
