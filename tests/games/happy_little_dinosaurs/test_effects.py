"""Point card effects: their order, each card, and the Flaming Chainsaw."""

from __future__ import annotations

import dataclasses

import pytest

from domain.errors import InvalidCommand, RuleViolation
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.model import (
    AddPointCardValue,
    CardTaken,
    DiscardCards,
    EffectCardsDiscarded,
    EffectPassed,
    EffectWindowOpened,
    HandLookedAt,
    KeepCard,
    LookAtHand,
    LookAtTopCards,
    MainDeckReshuffled,
    MouthTrapSprung,
    PassEffect,
    PassInstant,
    Phase,
    PlayedCardsSwapped,
    PlayScoreBooster,
    PointCardValueAdded,
    ScoreBoosterPlayed,
    ScoresSwapped,
    ScoresTallied,
    SwapPlayedCards,
    SwapWithNeighbour,
    TakeCard,
    TopCardKept,
    TopCardsLookedAt,
)
from domain.rules import Viewer
from tests.gamekit import when

from .helpers import act, commit, deal, of_type, redacted, table

# -- order -----------------------------------------------------------------


def test_effects_are_used_from_the_lowest_card_value_up() -> None:
    state = table(deal(["treenoculars_1"], ["pet_rock_1"], ["fire_spray_1"]))
    state, events = commit(
        state, {0: "treenoculars_1", 1: "pet_rock_1", 2: "fire_spray_1"}
    )
    assert of_type(events, EffectWindowOpened) == [EffectWindowOpened(1, "pet_rock_1")]
    state, events = act(state, 1, PassEffect())
    assert of_type(events, EffectWindowOpened) == [
        EffectWindowOpened(2, "fire_spray_1")
    ]
    state, events = act(state, 2, PassEffect())
    assert of_type(events, EffectWindowOpened) == [
        EffectWindowOpened(0, "treenoculars_1")
    ]
    state, events = act(state, 0, PassEffect())
    assert of_type(events, ScoresTallied)


def test_equal_values_go_first_to_the_fewest_escape_points() -> None:
    state = table(deal(["pet_rock_1"], ["pet_rock_2"]))
    ahead = dataclasses.replace(state.players[0], escape=5)
    state = dataclasses.replace(state, players=(ahead, state.players[1]))
    state, events = commit(state, {0: "pet_rock_1", 1: "pet_rock_2"})
    assert of_type(events, EffectWindowOpened) == [EffectWindowOpened(1, "pet_rock_2")]


def test_equal_values_and_escape_points_go_first_to_the_earlier_seat() -> None:
    state = table(deal(["pet_rock_1"], ["pet_rock_2"]))
    state, events = commit(state, {1: "pet_rock_2", 0: "pet_rock_1"})
    assert of_type(events, EffectWindowOpened) == [EffectWindowOpened(0, "pet_rock_1")]


def test_only_the_holder_of_the_open_effect_may_act() -> None:
    state = table(deal(["pet_rock_1"], ["cool_stick_1"]))
    state, _ = commit(state, {0: "pet_rock_1", 1: "cool_stick_1"})
    assert RULES.active_seats(state) == {0}
    assert RULES.legal_actions(state, 1) == []
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 1, PassEffect())
    assert error.value.reason == "NOT_YOUR_EFFECT"


def test_a_command_of_another_effect_is_refused() -> None:
    state = table(deal(["pet_rock_1"], ["cool_stick_1"]))
    state, _ = commit(state, {0: "pet_rock_1", 1: "cool_stick_1"})
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, LookAtHand(1))
    assert error.value.reason == "WRONG_EFFECT"


def test_flaming_chainsaw_silences_every_other_effect() -> None:
    state = table(
        deal(
            ["flaming_chainsaw_1", "score_booster_1"], ["pet_rock_1"], ["mouth_trap_1"]
        )
    )
    state, events = commit(
        state, {0: "flaming_chainsaw_1", 1: "pet_rock_1", 2: "mouth_trap_1"}
    )
    assert not of_type(events, EffectWindowOpened)
    assert not of_type(events, MouthTrapSprung)
    assert of_type(events, ScoresTallied) == [ScoresTallied({0: 9, 1: 0, 2: 5})]


def test_flaming_chainsaw_also_silences_the_star_fruit() -> None:
    state = table(
        deal(["flaming_chainsaw_1", "score_booster_1"], ["special_star_fruit_1"])
    )
    state, _ = commit(state, {0: "flaming_chainsaw_1", 1: "special_star_fruit_1"})
    state, events = act(state, 0, PlayScoreBooster("score_booster_1", 0))
    assert events[0].amount == 2


# -- Pet Rock and "Delicious" Smoothie ---------------------------------------


def test_pet_rock_discards_a_point_card_and_adds_its_value() -> None:
    state = table(deal(["pet_rock_1", "iced_ptea_1", "score_booster_1"], []))
    state, _ = commit(state, {0: "pet_rock_1", 1: state.players[1].hand[0]})
    actions = RULES.legal_actions(state, 0)
    assert AddPointCardValue("iced_ptea_1") in actions
    assert AddPointCardValue("score_booster_1") not in actions
    assert PassEffect() in actions
    state, events = act(state, 0, AddPointCardValue("iced_ptea_1"))
    assert events[0] == PointCardValueAdded(0, "pet_rock_1", "iced_ptea_1", 8)
    assert "iced_ptea_1" in state.discard
    assert of_type(events, ScoresTallied)[0].scores[0] == 8


def test_pet_rock_cannot_discard_an_instant() -> None:
    state = table(deal(["pet_rock_1", "score_booster_1"], []))
    state, _ = commit(state, {0: "pet_rock_1", 1: state.players[1].hand[0]})
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, AddPointCardValue("score_booster_1"))
    assert error.value.reason == "CARD_NOT_ALLOWED"


def test_an_effect_may_be_passed() -> None:
    state = table(deal(["pet_rock_1"], []))
    state, _ = commit(state, {0: "pet_rock_1", 1: state.players[1].hand[0]})
    state, events = act(state, 0, PassEffect())
    assert events[0] == EffectPassed(0, "pet_rock_1")
    assert of_type(events, ScoresTallied)[0].scores[0] == 0


def test_an_effect_window_opens_on_public_grounds_even_with_nothing_to_use() -> None:
    hand = ["pet_rock_1", *(f"score_sapper_{i}" for i in range(1, 5))]
    state = table([hand, deal([])[0]])
    state, events = commit(state, {0: "pet_rock_1", 1: state.players[1].hand[0]})
    # Opening only when a Point card is held would tell everyone it is not.
    assert EffectWindowOpened(0, "pet_rock_1") in events
    assert RULES.legal_actions(state, 0) == [PassEffect()]


def test_smoothie_only_adds_a_point_card_that_has_an_effect() -> None:
    state = table(deal(["delicious_smoothie_1", "fire_spray_1", "iced_ptea_1"], []))
    state, _ = commit(state, {0: "delicious_smoothie_1", 1: state.players[1].hand[0]})
    actions = RULES.legal_actions(state, 0)
    assert AddPointCardValue("fire_spray_1") in actions
    assert AddPointCardValue("iced_ptea_1") not in actions
    with pytest.raises(RuleViolation):
        when(RULES, state, 0, AddPointCardValue("iced_ptea_1"))
    state, events = act(state, 0, AddPointCardValue("fire_spray_1"))
    assert of_type(events, ScoresTallied)[0].scores[0] == 3 + 4


# -- Dino Grabber -------------------------------------------------------------


def test_dino_grabber_looks_at_a_hand_and_takes_one_card() -> None:
    state = table(deal(["dino_grabber_1"], ["meteor_cannon_1"], ["iced_ptea_1"]))
    state, _ = commit(
        state, {0: "dino_grabber_1", 1: "meteor_cannon_1", 2: "iced_ptea_1"}
    )
    assert RULES.legal_actions(state, 0) == [LookAtHand(1), LookAtHand(2), PassEffect()]
    target_hand = state.players[1].hand
    state, events = act(state, 0, LookAtHand(1))
    assert events == [HandLookedAt(0, 1, target_hand, 4)]
    # Only the grabber (and the hand's owner) see the hand.
    assert RULES.view(state, Viewer.player(0)).looked_at == target_hand
    assert RULES.view(state, Viewer.player(2)).looked_at == ()
    assert redacted(events[0], Viewer.player(2)).hand == ()
    assert redacted(events[0], Viewer.spectator()).hand == ()
    assert RULES.legal_actions(state, 0) == [TakeCard(c) for c in target_hand]
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PassEffect())
    assert error.value.reason == "EFFECT_UNDER_WAY"
    taken = target_hand[0]
    state, events = act(state, 0, TakeCard(taken))
    assert events[0] == CardTaken(0, 1, taken)
    assert redacted(events[0], Viewer.player(2)).card is None
    assert redacted(events[0], Viewer.player(1)).card == taken
    assert taken in state.players[0].hand and taken not in state.players[1].hand


def test_dino_grabber_cannot_look_at_its_own_hand() -> None:
    state = table(deal(["dino_grabber_1"], []))
    state, _ = commit(state, {0: "dino_grabber_1", 1: state.players[1].hand[0]})
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, LookAtHand(0))
    assert error.value.reason == "TARGET_IS_YOU"
    with pytest.raises(InvalidCommand):
        when(RULES, state, 0, LookAtHand(7))


# -- Grappling Snake ----------------------------------------------------------


def test_grappling_snake_swaps_with_a_neighbours_card_without_effect() -> None:
    state = table(
        deal(
            ["grappling_snake_1"], ["bonehead_1"], ["iced_ptea_1"], ["meteor_cannon_1"]
        )
    )
    state, _ = commit(
        state,
        {
            0: "grappling_snake_1",
            1: "bonehead_1",
            2: "iced_ptea_1",
            3: "meteor_cannon_1",
        },
    )
    assert RULES.legal_actions(state, 0) == [
        SwapWithNeighbour(1),
        SwapWithNeighbour(3),
        PassEffect(),
    ]
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, SwapWithNeighbour(2))
    assert error.value.reason == "NOT_A_NEIGHBOUR"
    state, events = act(state, 0, SwapWithNeighbour(3))
    assert events[0] == PlayedCardsSwapped(0, "grappling_snake_1", 0, 3)
    assert state.played[0] == "meteor_cannon_1"
    assert state.played[3] == "grappling_snake_1"
    # The snake's effect was used: its new holder gets no window.
    assert not of_type(events, EffectWindowOpened)
    scores = of_type(events, ScoresTallied)[0].scores
    assert scores[0] == 9 and scores[3] == 2 + 1  # Stego +1 against a Meteor


def test_grappling_snake_cannot_take_a_card_with_an_effect() -> None:
    state = table(deal(["grappling_snake_1"], ["pet_rock_1"], ["bonehead_1"]))
    state, _ = commit(state, {0: "grappling_snake_1", 1: "pet_rock_1", 2: "bonehead_1"})
    state, _ = act(state, 1, PassEffect())  # the Pet Rock goes first
    assert RULES.legal_actions(state, 0) == [SwapWithNeighbour(2), PassEffect()]
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, SwapWithNeighbour(1))
    assert error.value.reason == "CARD_HAS_EFFECT"


def test_grappling_snake_without_a_plain_card_next_to_it_gets_no_window() -> None:
    state = table(deal(["grappling_snake_1"], ["grappling_snake_2"]))
    state, events = commit(state, {0: "grappling_snake_1", 1: "grappling_snake_2"})
    assert of_type(events, EffectPassed) == [
        EffectPassed(0, "grappling_snake_1"),
        EffectPassed(1, "grappling_snake_2"),
    ]


def test_neighbours_skip_eliminated_players() -> None:
    state = table(deal([], [], [], []))
    out = dataclasses.replace(state.players[1], eliminated=True, hand=())
    state = dataclasses.replace(
        state, players=(state.players[0], out, *state.players[2:])
    )
    assert RULES.neighbours(state, 0) == (2, 3)
    assert RULES.neighbours(state, 2) == (0, 3)


def test_with_two_players_both_neighbours_are_the_same_player() -> None:
    state = table(deal([], []))
    assert RULES.neighbours(state, 0) == (1,)


# -- Fire Spray -----------------------------------------------------------------


def test_fire_spray_discards_up_to_three_cards() -> None:
    state = table(deal(["fire_spray_1"], []))
    state, _ = commit(state, {0: "fire_spray_1", 1: state.players[1].hand[0]})
    hand = state.players[0].hand
    actions = RULES.legal_actions(state, 0)
    assert len(actions) == 4 + 6 + 4 + 1
    with pytest.raises(InvalidCommand):
        when(RULES, state, 0, DiscardCards(hand))
    state, events = act(state, 0, DiscardCards(hand[:3]))
    assert events[0] == EffectCardsDiscarded(0, "fire_spray_1", hand[:3])
    assert state.players[0].hand == hand[3:]
    assert state.discard[-3:] == hand[:3]


# -- Treenoculars -------------------------------------------------------------


def test_treenoculars_look_at_two_cards_keep_one_and_discard_the_other() -> None:
    state = table(deal(["treenoculars_1"], []), deck=["iced_ptea_2", "score_booster_1"])
    state, _ = commit(state, {0: "treenoculars_1", 1: state.players[1].hand[0]})
    assert RULES.legal_actions(state, 0) == [LookAtTopCards(), PassEffect()]
    state, events = act(state, 0, LookAtTopCards())
    assert events == [TopCardsLookedAt(0, ("iced_ptea_2", "score_booster_1"), 2)]
    assert redacted(events[0], Viewer.player(1)).cards == ()
    assert RULES.view(state, Viewer.player(0)).peeked == (
        "iced_ptea_2",
        "score_booster_1",
    )
    other = RULES.view(state, Viewer.player(1))
    assert other.peeked == () and other.peeked_count == 2
    assert RULES.legal_actions(state, 0) == [
        KeepCard("iced_ptea_2"),
        KeepCard("score_booster_1"),
    ]
    state, events = act(state, 0, KeepCard("score_booster_1"))
    assert events[0] == TopCardKept(0, "score_booster_1", ("iced_ptea_2",))
    assert redacted(events[0], Viewer.player(1)) == TopCardKept(
        0, None, ("iced_ptea_2",)
    )
    assert "score_booster_1" in state.players[0].hand
    assert state.discard[-1] == "iced_ptea_2"


def test_treenoculars_reshuffle_the_discard_pile_when_the_deck_runs_out() -> None:
    state = table(deal(["treenoculars_1"], []), deck=["iced_ptea_2"])
    state, _ = commit(state, {0: "treenoculars_1", 1: state.players[1].hand[0]})
    rest = state.main_deck[1:]
    state = dataclasses.replace(
        state, main_deck=("iced_ptea_2",), discard=(*state.discard, *rest)
    )
    state, events = act(state, 0, LookAtTopCards())
    assert [type(e) for e in events] == [
        TopCardsLookedAt,
        MainDeckReshuffled,
        TopCardsLookedAt,
    ]
    assert len(state.peeked) == 2 and state.peeked[0] == "iced_ptea_2"


def test_treenoculars_taking_the_last_two_cards_rebuild_the_main_deck_at_once() -> None:
    state = table(deal(["treenoculars_1"], []), deck=["iced_ptea_2", "bonehead_3"])
    state, _ = commit(state, {0: "treenoculars_1", 1: state.players[1].hand[0]})
    top, rest = state.main_deck[:2], state.main_deck[2:]
    state = dataclasses.replace(state, main_deck=top, discard=(*state.discard, *rest))
    pile = state.discard

    state, events = act(state, 0, LookAtTopCards())

    assert events[0] == TopCardsLookedAt(0, ("iced_ptea_2", "bonehead_3"), 2)
    assert type(events[1]) is MainDeckReshuffled
    assert sorted(state.main_deck) == sorted(pile) and state.discard == ()
    # The card not kept starts the new discard pile.
    state, _ = act(state, 0, KeepCard("iced_ptea_2"))
    assert state.discard == ("bonehead_3",)


# -- Hungry Plant -------------------------------------------------------------


def test_hungry_plant_swaps_the_played_cards_of_two_other_players() -> None:
    state = table(deal(["hungry_plant_1"], ["meteor_cannon_1"], ["cool_stick_1"]))
    state, _ = commit(
        state, {0: "hungry_plant_1", 1: "meteor_cannon_1", 2: "cool_stick_1"}
    )
    assert RULES.legal_actions(state, 0) == [SwapPlayedCards(1, 2), PassEffect()]
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, SwapPlayedCards(0, 1))
    assert error.value.reason == "TARGET_IS_YOU"
    state, events = act(state, 0, SwapPlayedCards(1, 2))
    assert events[0] == PlayedCardsSwapped(0, "hungry_plant_1", 1, 2)
    assert of_type(events, ScoresTallied)[0].scores == {0: 8, 1: 1, 2: 9}


def test_hungry_plant_with_one_other_player_gets_no_window() -> None:
    state = table(deal(["hungry_plant_1"], []))
    state, events = commit(state, {0: "hungry_plant_1", 1: state.players[1].hand[0]})
    assert EffectPassed(0, "hungry_plant_1") in events


# -- during scoring: Mouth Trap and Special Star Fruit ----------------------


def test_mouth_trap_swaps_the_highest_and_lowest_scores_before_instants() -> None:
    state = table(
        deal(["mouth_trap_1"], ["meteor_cannon_1", "score_booster_1"], ["cool_stick_1"])
    )
    state, events = commit(
        state, {0: "mouth_trap_1", 1: "meteor_cannon_1", 2: "cool_stick_1"}
    )
    assert events[-3:] == [
        ScoresTallied({0: 5, 1: 9, 2: 1}),
        MouthTrapSprung(0, "mouth_trap_1"),
        ScoresSwapped({1: 1, 2: 9}),
    ]
    assert state.scores == {0: 5, 1: 1, 2: 9}
    assert state.phase is Phase.SCORING
    state, events = act(state, 1, PlayScoreBooster("score_booster_1", 1))
    assert state.scores == {0: 5, 1: 3, 2: 9}


def test_two_mouth_traps_apply_in_turn() -> None:
    state = table(deal(["mouth_trap_1"], ["mouth_trap_2"], ["cool_stick_1"]))
    state, events = commit(
        state, {0: "mouth_trap_1", 1: "mouth_trap_2", 2: "cool_stick_1"}
    )
    assert len(of_type(events, MouthTrapSprung)) == 2
    # 5, 5, 1: both fives fall to 1, the 1 rises to 5; then back again.
    assert of_type(events, ScoresSwapped) == [
        ScoresSwapped({0: 1, 1: 1, 2: 5}),
        ScoresSwapped({0: 5, 1: 5, 2: 1}),
    ]
    assert state.scores == {0: 5, 1: 5, 2: 1}


def test_special_star_fruit_doubles_boosters_and_sappers() -> None:
    state = table(
        deal(
            ["special_star_fruit_1"],
            ["bonehead_1", "score_booster_1", "score_sapper_1"],
        )
    )
    state, _ = commit(state, {0: "special_star_fruit_1", 1: "bonehead_1"})
    state, events = act(state, 1, PlayScoreBooster("score_booster_1", 1))
    assert events[0] == ScoreBoosterPlayed(1, "score_booster_1", 1, 4)
    assert state.scores == {0: 6, 1: 8}
    state, events = act(state, 0, PassInstant())
    state, events = act(state, 1, PassInstant())
    assert RULES.is_terminal(state) is False
    assert state.players[1].escape == 8


@pytest.mark.parametrize(
    ("card", "value"),
    [
        ("cool_stick_1", 1),
        ("handy_pan_1", 2),
        ("grave_maker_1", 3),
        ("bonehead_1", 4),
        ("run_home_bat_1", 5),
        ("bow_and_dino_1", 6),
        ("sting_stabber_1", 7),
        ("iced_ptea_1", 8),
        ("meteor_cannon_1", 9),
    ],
)
def test_a_point_card_without_effect_scores_its_face_value(
    card: str, value: int
) -> None:
    state = table(deal([card], ["pet_rock_1"]))
    state, _ = commit(state, {0: card, 1: "pet_rock_1"})
    state, events = act(state, 1, PassEffect())
    assert of_type(events, ScoresTallied)[0].scores == {0: value, 1: 0}


def test_treenoculars_with_one_card_left_anywhere_keep_it() -> None:
    state = table(deal(["treenoculars_1"], []), deck=["iced_ptea_2"])
    state, _ = commit(state, {0: "treenoculars_1", 1: state.players[1].hand[0]})
    state = dataclasses.replace(state, main_deck=("iced_ptea_2",), discard=())
    state, events = act(state, 0, LookAtTopCards())
    assert events == [TopCardsLookedAt(0, ("iced_ptea_2",), 1)]
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, PassEffect())
    assert error.value.reason == "EFFECT_UNDER_WAY"
    state, events = act(state, 0, KeepCard("iced_ptea_2"))
    assert events[0] == TopCardKept(0, "iced_ptea_2", ())


def test_dino_grabber_cannot_look_at_an_empty_hand() -> None:
    state = table(deal(["dino_grabber_1"], [], []))
    state, _ = commit(
        state,
        {0: "dino_grabber_1", 1: state.players[1].hand[0], 2: state.players[2].hand[0]},
    )
    empty = dataclasses.replace(state.players[2], hand=())
    state = dataclasses.replace(state, players=(*state.players[:2], empty))
    assert RULES.legal_actions(state, 0) == [LookAtHand(1), PassEffect()]
    with pytest.raises(RuleViolation) as error:
        when(RULES, state, 0, LookAtHand(2))
    assert error.value.reason == "HAND_EMPTY"
