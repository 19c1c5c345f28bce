"""The strong bot plays from its seat's view alone (:mod:`domain.search`)."""

from __future__ import annotations

from dataclasses import replace

from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.model import State
from tests.searchkit import assert_search_is_blind


def _scramble(state: State, seat: int) -> State | None:
    """Another hand for a rival (one card swapped with the Main deck's top),
    another face-down card for a rival that committed one, the decks in
    another order: nothing the seat may see."""
    effect_seat = next((s for s, c in state.played.items() if c == state.effect), None)
    looked_at = state.effect_target if effect_seat == seat else None
    rivals = [
        s for s, p in enumerate(state.players) if s not in (seat, looked_at) and p.hand
    ]
    if not rivals or not state.main_deck:
        return None
    rival = rivals[0]
    hand = list(state.players[rival].hand)
    top, *rest = state.main_deck
    hand[0], deck = top, (state.players[rival].hand[0], *rest)
    players = list(state.players)
    players[rival] = replace(players[rival], hand=tuple(hand))
    committed = dict(state.committed)
    for s, card in state.committed.items():
        swap = [
            c for c in players[s].hand if RULES.card(c).kind is RULES.card(card).kind
        ]
        if s != seat and swap:
            i = players[s].hand.index(swap[0])
            held = list(players[s].hand)
            held[i], committed[s] = card, swap[0]
            players[s] = replace(players[s], hand=tuple(held))
    return replace(
        state,
        players=tuple(players),
        committed=committed,
        main_deck=tuple(reversed(deck)),
        disaster_deck=tuple(reversed(state.disaster_deck)),
    )


def test_two_states_a_seat_cannot_tell_apart_get_the_same_move() -> None:
    assert assert_search_is_blind(RULES, 3, _scramble) >= 8


def test_the_search_never_sees_another_seats_face_down_card() -> None:
    # Two players: the second to commit faces the first's card face down.
    positions = assert_search_is_blind(RULES, 2, _scramble, every=1, seeds=1)
    assert positions >= 5
