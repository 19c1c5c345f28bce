"""Consent between seats (rules version 3): a trade from a Dino the sending
seat does not control is an offer that the Dino's seat accepts or declines;
it lapses at the end of the turn. Rules version 2 traded at once."""

from __future__ import annotations

import pytest

from domain.errors import NotYourSeat, RuleViolation
from domain.escaping_extinction import RULES, RULES_V2
from domain.escaping_extinction.model import (
    AcceptTrade,
    CardGiven,
    DeclineTrade,
    EndTurn,
    GiveCard,
    GiveItem,
    Item,
    ItemGiven,
    Options,
    Resource,
    ResourceGained,
    ResourceReturned,
    State,
    TradeAccepted,
    TradeDeclined,
    TradeOffer,
    TradeOffered,
    TradeOfferLapsed,
    TurnEnded,
)
from domain.rules import Viewer
from tests.gamekit import given, when
from tests.games.escaping_extinction.helpers import (
    LONG_NECK,
    REX,
    SARA,
    TERRY,
    began,
    dino,
    hand,
    setup,
    table,
)

# Two seats: seat 0 plays Terry and Rex, seat 1 Sara and Long Neck; it is
# Terry's turn, everyone on the Oasis, Terry one Food short, Sara with a Wood
# and a held card.
TERRYS_TURN = [
    *setup(),
    ResourceReturned(TERRY, Resource.FOOD),
    ResourceGained(SARA, Resource.WOOD),
    hand(SARA, "trail_mix_1"),
]
ASK_FOOD = GiveItem(SARA, TERRY, Item.FOOD)
OFFERED = TradeOffered(SARA, TERRY, Item.FOOD, "")


def two_seats() -> State:
    return table(TERRYS_TURN, players=2)


def test_a_trade_from_another_seats_dino_becomes_an_offer() -> None:
    state = two_seats()
    assert when(RULES, state, 0, ASK_FOOD) == [OFFERED]
    assert when(RULES, state, 0, GiveCard(SARA, TERRY, "trail_mix_1")) == [
        TradeOffered(SARA, TERRY, None, "trail_mix_1")
    ]


def test_the_offer_moves_nothing_until_accepted() -> None:
    state = table([*TERRYS_TURN, OFFERED], players=2)
    assert state.offer == TradeOffer(SARA, TERRY, Item.FOOD, "")
    assert dino(state, SARA).food == dino(table(TERRYS_TURN, players=2), SARA).food


def test_the_giving_seat_accepts_and_the_trade_happens() -> None:
    state = table([*TERRYS_TURN, OFFERED], players=2)
    assert when(RULES, state, 1, AcceptTrade(SARA)) == [
        TradeAccepted(SARA),
        ItemGiven(SARA, TERRY, Item.FOOD),
    ]


def test_an_accepted_card_offer_hands_the_card() -> None:
    offered = TradeOffered(SARA, TERRY, None, "trail_mix_1")
    state = table([*TERRYS_TURN, offered], players=2)
    assert when(RULES, state, 1, AcceptTrade(SARA)) == [
        TradeAccepted(SARA),
        CardGiven(SARA, TERRY, "trail_mix_1"),
    ]


def test_the_giving_seat_declines_and_the_offer_is_gone() -> None:
    state = table([*TERRYS_TURN, OFFERED], players=2)
    assert when(RULES, state, 1, DeclineTrade(SARA)) == [TradeDeclined(SARA)]
    after = table([*TERRYS_TURN, OFFERED, TradeDeclined(SARA)], players=2)
    assert after.offer is None
    with pytest.raises(RuleViolation) as err:
        when(RULES, after, 1, AcceptTrade(SARA))
    assert err.value.reason == "NO_TRADE_OFFER"


def test_the_offering_seat_cannot_accept_for_the_giver() -> None:
    state = table([*TERRYS_TURN, OFFERED], players=2)
    with pytest.raises(NotYourSeat) as err:
        when(RULES, state, 0, AcceptTrade(SARA))
    assert err.value.reason == "NOT_YOUR_DINO"


def test_the_offer_lapses_at_the_end_of_the_turn() -> None:
    state = table([*TERRYS_TURN, OFFERED], players=2)
    events = when(RULES, state, 0, EndTurn(TERRY))
    assert events[:3] == [TradeOfferLapsed(SARA), TurnEnded(TERRY), began(REX, 1)]
    after = table([*TERRYS_TURN, OFFERED, *events], players=2)
    assert after.offer is None


def test_one_offer_at_a_time() -> None:
    state = table([*TERRYS_TURN, OFFERED], players=2)
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, GiveCard(SARA, TERRY, "trail_mix_1"))
    assert err.value.reason == "TRADE_OFFER_PENDING"
    # The seat's own Dinos still trade at once.
    assert when(RULES, state, 0, GiveItem(REX, TERRY, Item.FOOD)) == [
        ItemGiven(REX, TERRY, Item.FOOD)
    ]


def test_a_trade_between_the_seats_own_dinos_or_from_its_own_is_immediate() -> None:
    state = table([*TERRYS_TURN, ResourceGained(TERRY, Resource.WOOD)], players=2)
    assert when(RULES, state, 0, GiveItem(TERRY, SARA, Item.WOOD)) == [
        ItemGiven(TERRY, SARA, Item.WOOD)
    ]
    assert when(RULES, state, 0, GiveItem(REX, TERRY, Item.FOOD)) == [
        ItemGiven(REX, TERRY, Item.FOOD)
    ]


def test_an_offer_that_can_no_longer_happen_can_only_be_declined() -> None:
    # Terry got his Food back after the offer: no room any more.
    events = [*TERRYS_TURN, OFFERED, ResourceGained(TERRY, Resource.FOOD)]
    state = table(events, players=2)
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 1, AcceptTrade(SARA))
    assert err.value.reason == "NO_ROOM"
    assert RULES.legal_actions(state, 1) == [DeclineTrade(SARA)]


def test_legal_actions_show_the_pending_offer_to_the_giving_seat_only() -> None:
    state = table([*TERRYS_TURN, OFFERED], players=2)
    assert RULES.active_seats(state) == frozenset({0, 1})
    assert RULES.legal_actions(state, 1) == [AcceptTrade(SARA), DeclineTrade(SARA)]
    seat0 = RULES.legal_actions(state, 0)
    assert not any(isinstance(c, AcceptTrade | DeclineTrade) for c in seat0)
    assert GiveItem(SARA, TERRY, Item.WOOD) not in seat0  # one offer at a time
    assert EndTurn(TERRY) in seat0


def test_without_an_offer_the_giving_seat_has_nothing_to_do() -> None:
    state = two_seats()
    assert RULES.active_seats(state) == frozenset({0})
    assert RULES.legal_actions(state, 1) == []


def test_a_shared_dino_offer_is_answered_by_any_of_its_other_seats() -> None:
    # Three seats sharing Long Neck: on Long Neck's turn seat 1 asks Terry
    # (seat 0's) for Food; seat 0 answers.
    events = [
        *setup(),
        TurnEnded(TERRY),
        began(REX, 1),
        TurnEnded(REX),
        began(SARA, 1),
        TurnEnded(SARA),
        began(LONG_NECK, 1),
        ResourceReturned(LONG_NECK, Resource.FOOD),
    ]
    state = given(RULES, 3, events, options=Options(shared_fourth_dino=True))
    ask = GiveItem(TERRY, LONG_NECK, Item.FOOD)
    assert when(RULES, state, 1, ask) == [TradeOffered(TERRY, LONG_NECK, Item.FOOD)]
    # Seat 0 controls Terry (and Long Neck too): its own trade is immediate.
    assert when(RULES, state, 0, ask) == [ItemGiven(TERRY, LONG_NECK, Item.FOOD)]


def test_the_offer_is_public_in_every_view() -> None:
    state = table([*TERRYS_TURN, OFFERED], players=2)
    offer = TradeOffer(SARA, TERRY, Item.FOOD, "")
    for viewer in (Viewer.spectator(), Viewer.player(0), Viewer.player(1)):
        assert RULES.view(state, viewer).offer == offer
        assert RULES.redact(OFFERED, viewer) == OFFERED


def test_rules_version_two_trades_at_once_without_consent() -> None:
    state = given(RULES_V2, 2, TERRYS_TURN)
    assert when(RULES_V2, state, 0, ASK_FOOD) == [ItemGiven(SARA, TERRY, Item.FOOD)]
    with pytest.raises(RuleViolation) as err:
        when(RULES_V2, state, 1, AcceptTrade(SARA))
    assert err.value.reason == "NO_TRADE_OFFER"
