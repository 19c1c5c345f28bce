"""The strong bot plays from its seat's view alone (:mod:`domain.search`),
and judges a duel at the start of the next round
(:mod:`domain.happy_little_dinosaurs.search`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from domain import search
from domain.chance import Rng
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.model import (
    PassInstant,
    Phase,
    PlayerPosition,
    PlayPointCard,
    PlayScoreBooster,
    PlayScoreSapper,
    Position,
    Scenario,
    State,
)
from domain.happy_little_dinosaurs.search import SEARCH
from domain.rules import Viewer
from tests.gamekit import new_game
from tests.games.happy_little_dinosaurs.helpers import act
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


# -- what the search judges and decides in a duel ----------------------------

HEURISTIC = RULES.bots["heuristic"]
DUEL_BUDGET = search.Budget(samples=8, candidates=6)


def _duel(
    hands: tuple[tuple[str, ...], tuple[str, ...]],
    disasters: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
    face_up: str = "meteor_1",
) -> State:
    """A duel at the start of a round: Nervous Rex (seat 0) and Bad Luck
    Bronto (seat 1) holding ``hands`` and ``disasters``, ``face_up`` the
    round's Disaster, every other card shuffled."""
    position = Position(
        players=tuple(
            PlayerPosition(hand, area)
            for hand, area in zip(hands, disasters, strict=True)
        ),
        rounds_played=3,
        disaster_deck=(face_up,),
        shuffle_rest=True,
    )
    state, _ = new_game(RULES, 2, "duel", scenario=Scenario(position=position))
    game: State = state.game
    return game


PLAIN = ("cool_stick_1", "handy_pan_1", "grave_maker_1", "bonehead_1", "bonehead_2")
RIVAL = ("cool_stick_2", "handy_pan_2", "grave_maker_2", "bonehead_3", "bow_and_dino_1")
THIRD = ("cool_stick_3", "handy_pan_3", "grave_maker_3", "run_home_bat_1", "pet_rock_1")
#: Nervous Rex holding a Natural and a Predatory Disaster: an Emotional one
#: would be its third type.
TWO_TYPES = ("natural_1", "predatory_1")


def test_a_duel_is_resting_at_the_start_of_a_round_only() -> None:
    state = _duel((PLAIN, RIVAL))
    assert SEARCH.resting(state)
    committed, _ = act(state, 0, PlayPointCard("bonehead_1"))
    assert not SEARCH.resting(committed)


def test_a_game_of_three_is_never_resting_so_its_playouts_run_to_the_end() -> None:
    position = Position(
        players=(
            PlayerPosition(PLAIN),
            PlayerPosition(RIVAL),
            PlayerPosition(THIRD),
        ),
        shuffle_rest=True,
    )
    state, _ = new_game(RULES, 3, "three", scenario=Scenario(position=position))
    assert state.game.phase is Phase.COMMIT and not SEARCH.resting(state.game)


def test_a_face_up_disaster_that_would_eliminate_me_lowers_my_chance() -> None:
    harmless = _duel((PLAIN, RIVAL), (TWO_TYPES, ()), face_up="natural_2")
    lethal = _duel((PLAIN, RIVAL), (TWO_TYPES, ()), face_up="emotional_1")
    assert SEARCH.evaluate(lethal, 0) < SEARCH.evaluate(harmless, 0) < 0.5
    assert SEARCH.evaluate(lethal, 1) == pytest.approx(1 - SEARCH.evaluate(lethal, 0))


def test_a_disaster_redirect_in_hand_raises_my_chance() -> None:
    plain = _duel((PLAIN, RIVAL))
    redirect = _duel((("disaster_redirect_1", *PLAIN[1:]), RIVAL))
    assert SEARCH.evaluate(redirect, 0) > SEARCH.evaluate(plain, 0)


def test_given_a_lethal_disaster_when_four_behind_the_strong_bot_plays_an_instant() -> (
    None
):
    # Given: Nervous Rex's third Disaster type face up (Emotional: -1 for
    # Rex), Rex scoring 2 (Grave Maker) against Bronto's 6 (Bow and Dino),
    # a Score Booster and a Score Sapper in Rex's hand: either alone leaves
    # Rex lowest, both together tie the scores and the Disaster goes to the
    # bottom.
    hand = ("grave_maker_1", "score_booster_1", "score_sapper_1", "cool_stick_1")
    state = _duel(
        ((*hand, "handy_pan_1"), RIVAL), (TWO_TYPES, ()), face_up="emotional_1"
    )
    state, _ = act(state, 0, PlayPointCard("grave_maker_1"))
    state, _ = act(state, 1, PlayPointCard("bow_and_dino_1"))
    assert state.phase is Phase.SCORING and state.scores == {0: 2, 1: 6}
    legal = tuple(RULES.legal_actions(state, 0))
    view = RULES.view(state, Viewer.player(0))
    assert HEURISTIC(view, legal, Rng("h", 0)) == PassInstant()
    # When the strong bot chooses, then it plays one of them, whatever its
    # generator.
    for n in range(3):
        move, _ = search.think(
            RULES, state, 0, legal, HEURISTIC, Rng("s", n), DUEL_BUDGET
        )
        assert move in (
            PlayScoreBooster("score_booster_1", 0),
            PlayScoreSapper("score_sapper_1", 1),
        )
