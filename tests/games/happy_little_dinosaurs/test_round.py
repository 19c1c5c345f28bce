"""A round without effects: commit, reveal, score, Disaster, end of round."""

from __future__ import annotations

import dataclasses

import pytest

from domain.errors import RuleViolation
from domain.happy_little_dinosaurs import RULES, RULES_V2
from domain.happy_little_dinosaurs.content import Dinosaur
from domain.happy_little_dinosaurs.model import (
    BottomReason,
    CardsDrawn,
    DisasterDiscardChosen,
    DisasterFaced,
    DisasterFlipped,
    DisasterSentToBottom,
    DisasterTaken,
    DiscardCard,
    EscapeMoved,
    GameWon,
    KeepHand,
    MainDeckReshuffled,
    Phase,
    PlayerEliminated,
    PlayPointCard,
    PointCardCommitted,
    PointCardsRevealed,
    PointsCollected,
    ScoresTallied,
    State,
    TableCleared,
    TakeDisaster,
)
from domain.rules import Viewer
from tests.gamekit import when

from .helpers import act, commit, deal, of_type, pass_all, redacted, table


def test_each_living_player_commits_a_point_card_face_down() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]))
    assert state.phase is Phase.COMMIT
    assert RULES.active_seats(state) == {0, 1}
    state, events = act(state, 0, PlayPointCard("meteor_cannon_1"))
    assert events == [PointCardCommitted(seat=0, card="meteor_cannon_1")]
    assert RULES.active_seats(state) == {1}
    assert "meteor_cannon_1" not in state.players[0].hand


def test_nothing_is_revealed_until_everyone_has_committed() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]))
    state, _ = act(state, 0, PlayPointCard("meteor_cannon_1"))
    assert state.played == {}
    other = RULES.view(state, Viewer.player(1))
    assert other.players[0].committed and other.players[0].commitment is None
    assert other.players[0].played is None
    own = RULES.view(state, Viewer.player(0))
    assert own.players[0].commitment == "meteor_cannon_1"
    hidden = redacted(PointCardCommitted(0, "meteor_cannon_1"), Viewer.player(1))
    assert hidden == PointCardCommitted(0, None)


def test_cards_are_revealed_at_once_after_the_last_commitment() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]))
    state, events = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    assert PointCardsRevealed(cards={0: "meteor_cannon_1", 1: "cool_stick_1"}) in events
    assert state.played == {0: "meteor_cannon_1", 1: "cool_stick_1"}


def test_an_instant_cannot_be_committed() -> None:
    state = table(deal(["score_booster_1"], []))
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayPointCard("score_booster_1"))
    assert error.value.reason == "NOT_A_POINT_CARD"


def test_a_card_not_in_the_hand_cannot_be_committed() -> None:
    state = table(deal([], []))
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayPointCard("meteor_cannon_3"))
    assert error.value.reason == "CARD_NOT_IN_HAND"


def test_a_player_cannot_commit_twice() -> None:
    state = table(deal(["meteor_cannon_1", "cool_stick_1"], []))
    state, _ = act(state, 0, PlayPointCard("meteor_cannon_1"))
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PlayPointCard("cool_stick_1"))
    assert error.value.reason == "ALREADY_COMMITTED"


def test_a_hand_without_point_cards_is_discarded_and_redrawn_until_it_has_one() -> None:
    instants = [f"score_booster_{i}" for i in range(1, 6)]
    more = [f"score_sapper_{i}" for i in range(1, 6)]
    state = table([instants, deal([])[0]], deck=[*more, "cool_stick_1", "iced_ptea_1"])
    # The deal already happened: seat 0 discarded twice and drew until it held a
    # Point card.
    assert "cool_stick_1" in state.players[0].hand
    assert all(c in state.discard for c in instants + more)
    assert state.phase is Phase.COMMIT
    assert state.players[0].hand[:2] == ("cool_stick_1", "iced_ptea_1")
    assert PlayPointCard("cool_stick_1") in RULES.legal_actions(state, 0)


def test_highest_score_collects_its_score_and_lowest_faces_the_disaster() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]))
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    assert state.phase is Phase.SCORING
    state, events = pass_all(state)
    assert PointsCollected(points={0: 9}) in events
    assert DisasterFaced(seat=1) in events
    assert state.players[0].escape == 9
    assert state.phase is Phase.DISASTER and state.taker == 1


def test_a_trait_adds_to_the_score_when_its_disaster_type_is_face_up() -> None:
    # Nervous Rex (+1 Predatory) with 3 against Bad Luck Bronto (-1) with 4.
    state = table(deal(["grave_maker_1"], ["bonehead_1"]), disasters=["predatory_1"])
    state, events = commit(state, {0: "grave_maker_1", 1: "bonehead_1"})
    assert of_type(events, ScoresTallied) == [ScoresTallied(scores={0: 4, 1: 3})]


def test_a_trait_subtracts_from_the_score_against_its_weak_type() -> None:
    # Cry Ceratops -1 against Natural, Bad Luck Bronto +1.
    state = table(
        deal(["bonehead_1"], ["bonehead_2"], ["bonehead_3"]), disasters=["natural_1"]
    )
    state, events = commit(state, {0: "bonehead_1", 1: "bonehead_2", 2: "bonehead_3"})
    assert of_type(events, ScoresTallied) == [ScoresTallied(scores={0: 4, 1: 5, 2: 3})]


def test_against_a_meteor_only_stego_trait_applies() -> None:
    state = table(
        deal(["bonehead_1"], ["bonehead_2"], ["bonehead_3"], ["bonehead_4"]),
        disasters=["meteor_2"],
    )
    state, events = commit(
        state, {0: "bonehead_1", 1: "bonehead_2", 2: "bonehead_3", 3: "bonehead_4"}
    )
    assert of_type(events, ScoresTallied) == [
        ScoresTallied(scores={0: 4, 1: 4, 2: 4, 3: 5})
    ]


def test_dinosaurs_can_be_chosen_per_seat() -> None:
    state = table(
        deal(["bonehead_1"], ["bonehead_2"]),
        disasters=["meteor_2"],
        dinosaurs=[Dinosaur.STEGO, Dinosaur.CRY_CERATOPS],
    )
    assert RULES.characters(state) == {0: "Stego", 1: "Cry Ceratops"}
    state, events = commit(state, {0: "bonehead_1", 1: "bonehead_2"})
    assert of_type(events, ScoresTallied) == [ScoresTallied(scores={0: 5, 1: 4})]


def test_seats_play_the_dinosaurs_in_a_fixed_order_by_default() -> None:
    state = table(deal([], [], [], []))
    assert RULES.characters(state) == {
        0: "Nervous Rex",
        1: "Bad Luck Bronto",
        2: "Cry Ceratops",
        3: "Stego",
    }


def test_ties_for_highest_all_collect() -> None:
    state = table(deal(["meteor_cannon_1"], ["meteor_cannon_2"], ["cool_stick_1"]))
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "meteor_cannon_2", 2: "cool_stick_1"}
    )
    state, events = pass_all(state)
    assert PointsCollected(points={0: 9, 1: 9}) in events
    assert DisasterFaced(seat=2) in events


def test_everyone_tied_sends_the_disaster_to_the_bottom_and_nobody_collects() -> None:
    state = table(deal(["bonehead_1"], ["bonehead_2"]), disasters=["meteor_1"])
    state, _ = commit(state, {0: "bonehead_1", 1: "bonehead_2"})
    state, events = pass_all(state)
    assert DisasterSentToBottom("meteor_1", BottomReason.ALL_TIED) in events
    assert not of_type(events, PointsCollected)
    assert state.disaster_deck[-1] == "meteor_1"
    # The round-end steps still run: a new round begins.
    assert of_type(events, EscapeMoved) == [EscapeMoved(moves={0: 0, 1: 0})]
    assert state.round == 2 and state.phase is Phase.COMMIT


def test_taking_the_disaster_adds_it_and_offers_an_optional_discard() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, events = act(state, 1, TakeDisaster())
    assert events[0] == DisasterTaken(seat=1, card="natural_1")
    assert state.players[1].disasters == ("natural_1",)
    assert state.phase is Phase.DISCARD
    card = state.players[1].hand[0]
    assert DiscardCard(card) in RULES.legal_actions(state, 1)
    assert KeepHand() in RULES.legal_actions(state, 1)
    state, events = act(state, 1, DiscardCard(card))
    assert events[0] == DisasterDiscardChosen(seat=1, card=card)
    assert card in state.discard


def test_keeping_the_hand_discards_nothing() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, _ = act(state, 1, TakeDisaster())
    state, events = act(state, 1, KeepHand())
    assert events[0] == DisasterDiscardChosen(seat=1, card=None)
    assert of_type(events, CardsDrawn)[0] == CardsDrawn(
        seat=0, cards=of_type(events, CardsDrawn)[0].cards, count=1
    )


def test_a_player_without_cards_takes_the_disaster_without_a_window() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    empty = dataclasses.replace(state.players[1], hand=())
    state = dataclasses.replace(state, players=(state.players[0], empty))
    state, events = pass_all(state)
    assert DisasterTaken(seat=1, card="natural_1") in events
    assert state.round == 2


def test_escape_movement_is_one_space_per_disaster_at_round_end() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state = dataclasses.replace(
        state,
        players=(
            dataclasses.replace(state.players[0], disasters=("emotional_1",)),
            state.players[1],
        ),
    )
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, _ = act(state, 1, TakeDisaster())
    state, events = act(state, 1, KeepHand())
    assert of_type(events, EscapeMoved) == [EscapeMoved(moves={0: 1, 1: 1})]
    assert state.players[0].escape == 9 + 1
    assert state.players[1].escape == 1


def test_hands_are_refilled_to_five_before_the_table_is_cleared() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, _ = act(state, 1, TakeDisaster())
    state, events = act(state, 1, KeepHand())
    kinds = [type(e) for e in events]
    assert kinds.index(TableCleared) > max(
        i for i, k in enumerate(kinds) if k is CardsDrawn
    )
    assert TableCleared(cards=("meteor_cannon_1", "cool_stick_1")) in events
    assert all(len(p.hand) == 5 for p in state.players)
    assert of_type(events, DisasterFlipped)[0].round == 2


def test_an_empty_main_deck_is_refilled_from_the_shuffled_discard_pile() -> None:
    state = table(
        deal(["meteor_cannon_1"], ["cool_stick_1"]),
        disasters=["natural_1"],
        reshuffles=[["iced_ptea_2"]],
    )
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, _ = act(state, 1, TakeDisaster())
    rest = state.main_deck
    state = dataclasses.replace(state, main_deck=(), discard=(*state.discard, *rest))
    state, events = act(state, 1, KeepHand())
    reshuffled = of_type(events, MainDeckReshuffled)
    assert len(reshuffled) == 1
    # The table is cleared after the refill: its cards are not reshuffled.
    assert "meteor_cannon_1" not in reshuffled[0].cards
    assert reshuffled[0].cards[0] == "iced_ptea_2"  # the scenario's reshuffle
    assert of_type(events, CardsDrawn)[0].cards == ("iced_ptea_2",)


def two_cards_left_before_the_refill() -> State:
    """The end of a round: seat 1 took the Disaster and may discard; both
    hands hold four, and the Main deck the two cards the refill will take
    (every other Main card not in a hand or on the table is discarded)."""
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, _ = act(state, 1, TakeDisaster())
    top, rest = state.main_deck[:2], state.main_deck[2:]
    return dataclasses.replace(state, main_deck=top, discard=(*state.discard, *rest))


def test_a_refill_taking_the_last_card_rebuilds_the_main_deck_at_once() -> None:
    # "If at any time the Main deck has no remaining cards, shuffle the
    # discard pile to form a new Main deck": at once, not at the next draw.
    state = two_cards_left_before_the_refill()
    pile, top = state.discard, state.main_deck

    state, events = act(state, 1, KeepHand())

    assert [type(e) for e in events[-5:]] == [
        CardsDrawn,
        CardsDrawn,
        MainDeckReshuffled,
        TableCleared,
        DisasterFlipped,
    ]
    assert of_type(events, CardsDrawn) == [
        CardsDrawn(0, top[:1], 1),
        CardsDrawn(1, top[1:], 1),
    ]
    rebuilt = of_type(events, MainDeckReshuffled)[0]
    # The pile as it stood when the deck emptied: this round's cards are
    # cleared after it, onto the new discard pile.
    assert sorted(rebuilt.cards) == sorted(pile) and rebuilt.count == len(pile)
    assert state.main_deck == rebuilt.cards
    assert state.discard == ("meteor_cannon_1", "cool_stick_1")
    assert state.reshuffles_used == 1


def test_rules_version_two_left_an_emptied_main_deck_empty_until_the_next_draw() -> (
    None
):
    state = two_cards_left_before_the_refill()
    pile = state.discard

    events = when(RULES_V2, state, 1, KeepHand())
    for event in events:
        state = RULES_V2.evolve(state, event)

    assert not of_type(events, MainDeckReshuffled)
    assert state.main_deck == ()
    assert state.discard == (*pile, "meteor_cannon_1", "cool_stick_1")


def test_with_main_deck_and_discard_pile_empty_hands_stay_short() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, _ = act(state, 1, TakeDisaster())
    state = dataclasses.replace(state, main_deck=(), discard=())
    state, events = act(state, 1, KeepHand())
    assert not of_type(events, CardsDrawn)
    assert len(state.players[0].hand) == 4 and state.round == 2


def test_three_disasters_of_one_type_eliminate_and_the_hand_is_discarded() -> None:
    state = table(
        deal(["meteor_cannon_1"], ["cool_stick_1"], ["meteor_cannon_2"]),
        disasters=["natural_1"],
    )
    area = dataclasses.replace(state.players[1], disasters=("natural_2", "natural_3"))
    state = dataclasses.replace(
        state, players=(state.players[0], area, state.players[2])
    )
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "cool_stick_1", 2: "meteor_cannon_2"}
    )
    state, _ = pass_all(state)
    hand = state.players[1].hand
    state, events = act(state, 1, TakeDisaster())
    assert PlayerEliminated(seat=1, discarded=hand) in events
    assert state.players[1].eliminated and state.players[1].hand == ()
    assert all(c in state.discard for c in hand)
    # Eliminated: no escape movement, no refill, no commitment next round.
    assert 1 not in of_type(events, EscapeMoved)[0].moves
    assert not [e for e in of_type(events, CardsDrawn) if e.seat == 1]
    assert RULES.active_seats(state) == {0, 2}
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 1, PlayPointCard("cool_stick_2"))
    assert error.value.reason == "ELIMINATED"


def test_the_last_dinosaur_standing_wins() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    area = dataclasses.replace(state.players[1], disasters=("emotional_1", "meteor_2"))
    state = dataclasses.replace(state, players=(state.players[0], area))
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, events = act(state, 1, TakeDisaster())
    assert of_type(events, PlayerEliminated)
    assert RULES.is_terminal(state)
    assert RULES.outcome(state).winners == (0,)
    assert RULES.outcome(state).result == "last_standing"


def test_reaching_fifty_wins_at_once() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    state = dataclasses.replace(
        state,
        players=(
            dataclasses.replace(state.players[0], escape=41),
            state.players[1],
        ),
    )
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, events = pass_all(state)
    assert events[-2:] == [
        PointsCollected(points={0: 9}),
        GameWon(winners=(0,), result="escaped"),
    ]
    assert RULES.is_terminal(state)
    assert RULES.outcome(state).winners == (0,)
    assert RULES.outcome(state).result == "escaped"


def test_when_several_pass_fifty_at_once_the_highest_total_wins() -> None:
    state = table(
        deal(["meteor_cannon_1"], ["meteor_cannon_2"], ["cool_stick_1"]),
        disasters=["meteor_1"],
    )
    players = list(state.players)
    players[0] = dataclasses.replace(players[0], escape=45)
    players[1] = dataclasses.replace(players[1], escape=44)
    state = dataclasses.replace(state, players=tuple(players))
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "meteor_cannon_2", 2: "cool_stick_1"}
    )
    state, _ = pass_all(state)
    assert RULES.outcome(state).winners == (0,)


def test_equal_totals_past_fifty_share_the_win() -> None:
    state = table(
        deal(["meteor_cannon_1"], ["meteor_cannon_2"], ["cool_stick_1"]),
        disasters=["meteor_1"],
    )
    players = list(state.players)
    players[0] = dataclasses.replace(players[0], escape=45)
    players[1] = dataclasses.replace(players[1], escape=45)
    state = dataclasses.replace(state, players=tuple(players))
    state, _ = commit(
        state, {0: "meteor_cannon_1", 1: "meteor_cannon_2", 2: "cool_stick_1"}
    )
    state, _ = pass_all(state)
    assert RULES.outcome(state).winners == (0, 1)


def test_escape_movement_reaching_fifty_ends_the_game_before_the_refill() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]), disasters=["natural_1"])
    players = list(state.players)
    players[1] = dataclasses.replace(players[1], escape=48, disasters=("natural_2",))
    state = dataclasses.replace(state, players=tuple(players))
    state, _ = commit(state, {0: "meteor_cannon_1", 1: "cool_stick_1"})
    state, _ = pass_all(state)
    state, _ = act(state, 1, TakeDisaster())
    state, events = act(state, 1, KeepHand())
    assert events[-2:] == [
        EscapeMoved(moves={0: 0, 1: 2}),
        GameWon(winners=(1,), result="escaped"),
    ]
    assert RULES.outcome(state).winners == (1,)
