"""The cards as data, the options, the scenario and the start of a game."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest

from domain.errors import InvalidCommand
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.content import (
    CardDataError,
    Dinosaur,
    DisasterType,
    Kind,
    build_catalogue,
    catalogue,
    eliminates,
)
from domain.happy_little_dinosaurs.model import (
    CardsDrawn,
    DeckOrder,
    DisasterFlipped,
    GameSetUp,
    Hand,
    Options,
    Phase,
    Scenario,
)
from domain.session import Session
from tests.gamekit import new_game

N, P, E, M = (
    DisasterType.NATURAL,
    DisasterType.PREDATORY,
    DisasterType.EMOTIONAL,
    DisasterType.METEOR,
)


def data() -> tuple[Any, Any]:
    package = resources.files("domain.happy_little_dinosaurs")
    cards = json.loads((package / "cards.json").read_text())
    dinosaurs = json.loads((package / "dinosaurs.json").read_text())
    return cards, dinosaurs


def test_the_catalogue_has_53_point_16_instant_and_28_disaster_cards() -> None:
    cards = catalogue().cards.values()
    assert sum(c.kind is Kind.POINT for c in cards) == 53
    assert sum(c.kind is Kind.INSTANT for c in cards) == 16
    assert sum(c.kind is Kind.DISASTER for c in cards) == 28
    assert len(catalogue().main) == 69
    assert sum(c.disaster is M for c in cards) == 4


def test_card_ids_number_the_copies() -> None:
    assert [c for c in catalogue().main if c.startswith("pet_rock")] == [
        "pet_rock_1",
        "pet_rock_2",
        "pet_rock_3",
        "pet_rock_4",
    ]
    assert catalogue().cards["flaming_chainsaw_1"].value == 9


def test_card_data_with_the_wrong_totals_is_refused() -> None:
    cards, dinosaurs = data()
    broken = copy.deepcopy(cards)
    broken["point"][0]["copies"] = 5
    with pytest.raises(CardDataError, match="point cards"):
        build_catalogue(broken, dinosaurs)


def test_an_effect_with_a_timing_the_rules_do_not_implement_is_refused() -> None:
    cards, dinosaurs = data()
    broken = copy.deepcopy(cards)
    broken["point"][0]["timing"] = "DURING_SCORING"
    with pytest.raises(CardDataError, match="effect"):
        build_catalogue(broken, dinosaurs)


def test_malformed_card_data_is_refused() -> None:
    cards, dinosaurs = data()
    broken = copy.deepcopy(cards)
    del broken["instant"][0]["amount"]
    with pytest.raises(CardDataError):
        build_catalogue(broken, dinosaurs)
    broken = copy.deepcopy(cards)
    broken["point"][1]["value"] = 12
    with pytest.raises(CardDataError):
        build_catalogue(broken, dinosaurs)


def test_every_dinosaur_needs_one_player_board() -> None:
    cards, dinosaurs = data()
    broken = copy.deepcopy(dinosaurs)
    broken["dinosaurs"].pop()
    with pytest.raises(CardDataError, match="dinosaur"):
        build_catalogue(cards, broken)


def test_traits_are_read_from_the_player_boards() -> None:
    cat = catalogue()
    assert cat.trait(Dinosaur.NERVOUS_REX, P) == 1
    assert cat.trait(Dinosaur.NERVOUS_REX, E) == -1
    assert cat.trait(Dinosaur.BAD_LUCK_BRONTO, N) == 1
    assert cat.trait(Dinosaur.BAD_LUCK_BRONTO, P) == -1
    assert cat.trait(Dinosaur.CRY_CERATOPS, E) == 1
    assert cat.trait(Dinosaur.CRY_CERATOPS, N) == -1
    assert cat.trait(Dinosaur.STEGO, M) == 1
    assert [cat.trait(d, M) for d in Dinosaur] == [0, 0, 0, 1]


@pytest.mark.parametrize(
    ("area", "out"),
    [
        ((N, N), False),
        ((N, N, N), True),
        ((N, P, E), True),
        ((N, N, P), False),
        ((N, N, P, P), False),
        ((N, N, P, P, E), True),
        ((N, N, M), True),
        ((N, P, M), True),
        ((M, M), False),
        ((M, M, M), True),
        ((N, M), False),
    ],
)
def test_three_of_a_type_or_three_types_eliminate_with_meteors_wild(
    area: tuple[DisasterType, ...], out: bool
) -> None:
    assert eliminates(area) is out


def test_options_must_give_one_distinct_dinosaur_per_seat() -> None:
    session = Session(RULES)
    with pytest.raises(InvalidCommand) as error:
        session.create(3, "s", Options((Dinosaur.STEGO, Dinosaur.NERVOUS_REX)))
    assert error.value.reason == "DINOSAURS_DO_NOT_MATCH_SEATS"
    with pytest.raises(InvalidCommand) as error:
        session.create(2, "s", Options((Dinosaur.STEGO, Dinosaur.STEGO)))
    assert error.value.reason == "DINOSAUR_CHOSEN_TWICE"
    with pytest.raises(InvalidCommand):
        session.create(5, "s")


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        (Scenario(main_deck=("no_such_card",)), "SCENARIO_CARD_UNKNOWN"),
        (Scenario(main_deck=("meteor_1",)), "SCENARIO_CARD_UNKNOWN"),
        (Scenario(disaster_deck=("pet_rock_1",)), "SCENARIO_CARD_UNKNOWN"),
        (
            Scenario(hands=(Hand(("pet_rock_1",)),)),
            "SCENARIO_HAND_SIZE",
        ),
        (
            Scenario(
                hands=(
                    Hand(
                        (
                            "pet_rock_1",
                            "pet_rock_2",
                            "pet_rock_3",
                            "cool_stick_1",
                            "pet_rock_4",
                        )
                    ),
                ),
                main_deck=("cool_stick_1",),
            ),
            "SCENARIO_CARD_REPEATED",
        ),
        (Scenario(hands=(Hand(), Hand(), Hand())), "SCENARIO_TOO_MANY_HANDS"),
        (Scenario(reshuffles=(DeckOrder(("nope",)),)), "SCENARIO_CARD_UNKNOWN"),
    ],
)
def test_a_bad_scenario_is_refused(scenario: Scenario, reason: str) -> None:
    with pytest.raises(InvalidCommand) as error:
        Session(RULES).create(2, "s", None, scenario)
    assert error.value.reason == reason


def test_the_game_starts_with_five_cards_each_and_a_disaster_face_up() -> None:
    state, events = new_game(RULES, 3, "start")
    game = state.game
    assert [len(p.hand) for p in game.players] == [5, 5, 5]
    assert len(game.main_deck) == 69 - 15
    assert game.disaster is not None and len(game.disaster_deck) == 27
    assert game.phase is Phase.COMMIT and game.round == 1
    kinds = [type(e) for e in events]
    assert kinds.count(GameSetUp) == 1 and kinds.count(DisasterFlipped) == 1


def test_the_scenario_fixes_the_deal_and_both_deck_tops() -> None:
    hands = (
        Hand(
            ("pet_rock_1", "cool_stick_1", "handy_pan_1", "bonehead_1", "iced_ptea_1")
        ),
        Hand(),
    )
    scenario = Scenario(
        hands=hands,
        main_deck=("flaming_chainsaw_1", "mouth_trap_2"),
        disaster_deck=("emotional_3", "meteor_4"),
    )
    state, events = new_game(RULES, 2, "scenario", None, scenario)
    game = state.game
    assert game.players[0].hand == hands[0].cards
    assert len(game.players[1].hand) == 5
    assert game.main_deck[:2] == ("flaming_chainsaw_1", "mouth_trap_2")
    assert game.disaster == "emotional_3"
    assert game.disaster_deck[0] == "meteor_4"
    drawn = [e for e in events if isinstance(e, CardsDrawn)]
    assert drawn[0] == CardsDrawn(0, hands[0].cards, 5)


def test_without_a_scenario_the_seed_decides_the_shuffle() -> None:
    one, _ = new_game(RULES, 2, "seed-a")
    two, _ = new_game(RULES, 2, "seed-a")
    three, _ = new_game(RULES, 2, "seed-b")
    assert one.game == two.game
    assert one.game.main_deck != three.game.main_deck
