"""Given/when/then: the turn (take the packet, or add a card and pass it on)."""

from __future__ import annotations

import pytest

from domain.cubosaurs import RULES
from domain.cubosaurs.content import Kind
from domain.cubosaurs.model import (
    BuyTile,
    CardDrawn,
    CubosaursState,
    EndTurn,
    PacketPassed,
    PacketTaken,
    PassPacket,
    TakePacket,
    TurnEnded,
)
from domain.errors import InvalidCommand, RuleViolation
from tests.gamekit import when
from tests.games.cubosaurs.helpers import dealt, fold, plain, state

T_REX = plain(Kind.T_REX)
STEGO = plain(Kind.STEGOSAURUS)
BRACHIO = plain(Kind.BRACHIOSAURUS)
PTERO = plain(Kind.PTERODACTYL)
PENTA = plain(Kind.PENTACERATOPS)
GREY = plain(Kind.GREY_RAPTOR)
BLACK = plain(Kind.BLACK_RAPTOR)
T_REX_EGG = plain(Kind.T_REX_EGG)
PENTA_2 = plain(Kind.PENTACERATOPS, 1)
T_REX_2 = plain(Kind.T_REX, 1)
STEGO_2 = plain(Kind.STEGOSAURUS, 1)

SEAT_0 = (T_REX, STEGO, BRACHIO, PTERO)
SEAT_1 = (PENTA, GREY, BLACK, T_REX_EGG)
SEAT_2 = (plain(Kind.T_REX, 2), plain(Kind.STEGOSAURUS, 2), plain(Kind.PTERODACTYL, 1))
DECK = (PENTA_2, T_REX_2, STEGO_2)


def two_players_drawn() -> CubosaursState:
    """Seat 0 drew a Pentaceratops to start the round."""
    return state(2, dealt([SEAT_0, SEAT_1], DECK), CardDrawn(0, PENTA_2))


def test_taking_the_packet_adds_it_to_the_collection_and_the_next_seat_draws() -> None:
    events = when(RULES, two_players_drawn(), 0, TakePacket())
    assert events == [
        PacketTaken(0, (PENTA_2,)),
        TurnEnded(0, 1),
        CardDrawn(1, T_REX_2),
    ]
    after = fold(two_players_drawn(), events)
    assert after.seats[0].collection == (*SEAT_0, PENTA_2)
    assert after.packet == (T_REX_2,)
    assert after.deck == (STEGO_2,)


def test_passing_adds_a_card_and_hands_the_packet_to_the_next_seat() -> None:
    events = when(RULES, two_players_drawn(), 0, PassPacket(T_REX))
    assert events == [PacketPassed(0, T_REX, 1), TurnEnded(0, 1)]
    after = fold(two_players_drawn(), events)
    assert after.seats[0].collection == (STEGO, BRACHIO, PTERO)
    assert after.packet == (PENTA_2, T_REX)
    assert after.turn == 1
    assert after.deck == DECK[1:]  # no draw: the packet is not empty


def test_a_card_whose_kind_is_in_the_packet_cannot_be_added() -> None:
    given = state(
        2,
        dealt([SEAT_0, SEAT_1], DECK),
        CardDrawn(0, PENTA_2),
        PacketPassed(0, T_REX, 1),
        TurnEnded(0, 1),
    )
    with pytest.raises(RuleViolation) as refused:
        when(RULES, given, 1, PassPacket(PENTA))
    assert refused.value.reason == "KIND_ALREADY_IN_PACKET"
    assert PassPacket(PENTA) not in RULES.legal_actions(given, 1)


def test_grey_and_black_raptors_are_different_kinds_when_adding() -> None:
    given = state(
        2,
        dealt([(GREY, T_REX), SEAT_1], (BLACK + 1,)),
        CardDrawn(0, BLACK + 1),
    )
    assert when(RULES, given, 0, PassPacket(GREY))[0] == PacketPassed(0, GREY, 1)


def test_every_egg_is_a_kind_of_its_own_when_adding() -> None:
    given = state(
        2, dealt([(T_REX_EGG, STEGO), SEAT_1], (T_REX_2,)), CardDrawn(0, T_REX_2)
    )
    assert when(RULES, given, 0, PassPacket(T_REX_EGG))[0] == PacketPassed(
        0, T_REX_EGG, 1
    )
    egg_in_packet = state(
        2,
        dealt([SEAT_0, (PENTA, plain(Kind.STEGOSAURUS_EGG))], (T_REX_EGG,)),
        CardDrawn(0, T_REX_EGG),
        PacketPassed(0, T_REX, 1),
        TurnEnded(0, 1),
    )
    assert PassPacket(plain(Kind.STEGOSAURUS_EGG)) in RULES.legal_actions(
        egg_in_packet, 1
    )


def test_a_player_who_cannot_add_must_take() -> None:
    given = state(2, dealt([(T_REX,), SEAT_1], (T_REX_2,)), CardDrawn(0, T_REX_2))
    assert RULES.legal_actions(given, 0) == [TakePacket()]
    with pytest.raises(RuleViolation):
        when(RULES, given, 0, PassPacket(T_REX))


def test_a_player_with_an_empty_collection_must_take() -> None:
    given = state(2, dealt([(), SEAT_1], (T_REX_2,)), CardDrawn(0, T_REX_2))
    assert RULES.legal_actions(given, 0) == [TakePacket()]


def test_a_card_not_in_your_collection_cannot_be_added() -> None:
    with pytest.raises(RuleViolation) as refused:
        when(RULES, two_players_drawn(), 0, PassPacket(PENTA))
    assert refused.value.reason == "CARD_NOT_IN_COLLECTION"


def test_a_card_id_that_does_not_exist_is_malformed() -> None:
    with pytest.raises(InvalidCommand) as refused:
        when(RULES, two_players_drawn(), 0, PassPacket(99))
    assert refused.value.reason == "CARD_OUT_OF_RANGE"


def test_only_the_seat_to_act_may_take_or_pass() -> None:
    with pytest.raises(RuleViolation) as refused:
        when(RULES, two_players_drawn(), 1, TakePacket())
    assert refused.value.reason == "NOT_YOUR_TURN"
    assert RULES.legal_actions(two_players_drawn(), 1) == []
    assert RULES.active_seats(two_players_drawn()) == frozenset({0})


def test_the_legal_actions_are_take_and_every_addable_card() -> None:
    assert RULES.legal_actions(two_players_drawn(), 0) == [
        TakePacket(),
        PassPacket(T_REX),
        PassPacket(STEGO),
        PassPacket(BRACHIO),
        PassPacket(PTERO),
    ]


def test_the_packet_goes_round_the_table_in_the_rounds_direction() -> None:
    given = state(
        3,
        dealt([SEAT_0, SEAT_1, SEAT_2], DECK, first=1, direction=-1),
        CardDrawn(1, PENTA_2),
    )
    assert when(RULES, given, 1, PassPacket(GREY)) == [
        PacketPassed(1, GREY, 0),
        TurnEnded(1, 0),
    ]
    taken = when(RULES, given, 1, TakePacket())
    assert taken[1:] == [TurnEnded(1, 0), CardDrawn(0, T_REX_2)]


def test_a_packet_grows_with_every_pass_until_someone_takes() -> None:
    given = state(
        3,
        dealt([SEAT_0, SEAT_1, SEAT_2], DECK),
        CardDrawn(0, PENTA_2),
        PacketPassed(0, T_REX, 1),
        TurnEnded(0, 1),
        PacketPassed(1, GREY, 2),
        TurnEnded(1, 2),
    )
    assert given.packet == (PENTA_2, T_REX, GREY)
    events = when(RULES, given, 2, TakePacket())
    assert events[0] == PacketTaken(2, (PENTA_2, T_REX, GREY))
    assert events[1:] == [TurnEnded(2, 0), CardDrawn(0, T_REX_2)]


def test_end_turn_and_tiles_are_for_the_advanced_mode() -> None:
    with pytest.raises(RuleViolation) as refused:
        when(RULES, two_players_drawn(), 0, BuyTile(0))
    assert refused.value.reason == "ADVANCED_MODE_ONLY"
    with pytest.raises(RuleViolation) as refused:
        when(RULES, two_players_drawn(), 0, EndTurn())
    assert refused.value.reason == "TAKE_OR_PASS_FIRST"
