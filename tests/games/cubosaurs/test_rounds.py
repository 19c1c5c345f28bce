"""Given/when/then: set-up, the end of a round, the next round, the end."""

from __future__ import annotations

import pytest

from domain.chance import Rng
from domain.cubosaurs import RULES
from domain.cubosaurs.content import CARD_COUNT, Kind, score_round
from domain.cubosaurs.model import (
    CardDrawn,
    CardList,
    CubosaursState,
    GameScored,
    Options,
    PacketPassed,
    PacketTaken,
    PassPacket,
    Phase,
    RoundDealt,
    RoundScored,
    RoundSetup,
    Scenario,
    TakePacket,
    TurnEnded,
)
from domain.errors import InvalidCommand, RuleViolation
from domain.rules import GameConfig, Viewer
from domain.session import Session
from tests.gamekit import new_game, when
from tests.games.cubosaurs.helpers import dealt, fold, plain, state

T_REX = plain(Kind.T_REX)
T_REX_2 = plain(Kind.T_REX, 1)
STEGO = plain(Kind.STEGOSAURUS)
STEGO_2 = plain(Kind.STEGOSAURUS, 1)
PENTA = plain(Kind.PENTACERATOPS)
BRACHIO = plain(Kind.BRACHIOSAURUS)
BRACHIO_2 = plain(Kind.BRACHIOSAURUS, 1)
PTERO = plain(Kind.PTERODACTYL)


def cards_in(event: RoundDealt) -> list[int]:
    return sorted(
        [c for cl in event.collections for c in cl.cards]
        + list(event.deck)
        + list(event.out_of_play)
    )


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_round_deals_ten_cards_per_player_four_to_each_collection(
    players: int,
) -> None:
    events = RULES.start(state(players), Rng("deal", 0))
    deal = events[0]
    assert isinstance(deal, RoundDealt)
    assert [len(cl.cards) for cl in deal.collections] == [4] * players
    assert len(deal.deck) == deal.deck_size == 6 * players
    assert len(deal.out_of_play) == deal.out_of_play_size == CARD_COUNT - 10 * players
    assert cards_in(deal) == list(range(CARD_COUNT))


def test_round_one_starts_with_seat_zero_drawing_and_passing_left() -> None:
    events = RULES.start(state(3), Rng("deal", 0))
    deal = events[0]
    assert isinstance(deal, RoundDealt)
    assert (deal.round, deal.first_seat, deal.direction) == (1, 0, 1)
    assert events[1:] == [CardDrawn(0, deal.deck[0])]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_every_player_count_plays_two_rounds_by_default(players: int) -> None:
    assert state(players).rounds == 2


def test_the_rounds_option_overrides_the_default() -> None:
    assert state(2, options=Options(rounds=1)).rounds == 1
    assert state(4, options=Options(rounds=4)).rounds == 4


def test_a_rounds_option_out_of_range_is_refused() -> None:
    with pytest.raises(InvalidCommand) as refused:
        Session(RULES).create(3, "s", Options(rounds=-1))
    assert refused.value.reason == "ROUNDS_OUT_OF_RANGE"


def test_a_game_takes_two_to_five_players() -> None:
    for players in (1, 6):
        with pytest.raises(InvalidCommand):
            Session(RULES).create(players, "s")


def round_one_last_card() -> CubosaursState:
    """Seat 0 drew the last card of round 1 (2 players)."""
    return state(
        2,
        dealt([(T_REX, STEGO, BRACHIO, PTERO), (PENTA, STEGO_2)], (T_REX_2,)),
        CardDrawn(0, T_REX_2),
    )


def test_the_round_goes_on_while_a_packet_is_passed_with_an_empty_deck() -> None:
    events = when(RULES, round_one_last_card(), 0, PassPacket(BRACHIO))
    assert events == [PacketPassed(0, BRACHIO, 1), TurnEnded(0, 1)]


def test_the_round_ends_when_a_card_must_be_drawn_from_an_empty_deck() -> None:
    given = round_one_last_card()
    events = when(RULES, given, 0, TakePacket())
    assert events[:2] == [PacketTaken(0, (T_REX_2,)), TurnEnded(0, 1)]
    scored = events[2]
    assert isinstance(scored, RoundScored)
    assert scored.round == 1
    collections = [(T_REX, STEGO, BRACHIO, PTERO, T_REX_2), (PENTA, STEGO_2)]
    assert scored.scores == score_round(collections, [(), ()], [0, 0])
    assert isinstance(events[3], RoundDealt)
    assert events[3].round == 2


def test_the_next_round_starts_with_the_lowest_score_and_passes_the_other_way() -> None:
    given = round_one_last_card()
    events = when(RULES, given, 0, TakePacket())
    scored, deal = events[2], events[3]
    assert isinstance(scored, RoundScored) and isinstance(deal, RoundDealt)
    totals = [s.total for s in scored.scores]
    assert totals[0] != totals[1]
    assert deal.first_seat == totals.index(min(totals))
    assert deal.direction == -1
    assert events[4] == CardDrawn(deal.first_seat, deal.deck[0])


def test_a_tie_for_the_lowest_score_starts_with_the_earliest_seat() -> None:
    ptero_2 = plain(Kind.PTERODACTYL, 1)
    given = state(
        3,
        dealt([(T_REX,), (PTERO,), (ptero_2,)], (BRACHIO,)),
        CardDrawn(0, BRACHIO),
    )
    events = when(RULES, given, 0, TakePacket())
    scored, deal = events[2], events[3]
    assert isinstance(scored, RoundScored) and isinstance(deal, RoundDealt)
    assert [s.total for s in scored.scores] == [5, -1, -1]
    assert deal.first_seat == 1


def test_every_card_returns_for_the_next_round() -> None:
    events = when(RULES, round_one_last_card(), 0, TakePacket())
    deal = events[3]
    assert isinstance(deal, RoundDealt)
    assert cards_in(deal) == list(range(CARD_COUNT))
    after = fold(round_one_last_card(), events)
    assert after.round == 2
    assert after.seats[0].collection == deal.collections[0].cards
    scored = events[2]
    assert isinstance(scored, RoundScored)
    assert after.seats[0].scores == (scored.scores[0].total,)


def test_the_game_ends_after_the_last_round_with_every_total() -> None:
    given = state(
        2,
        RoundScored(1, score_round([(T_REX,), ()], [(), ()], [0, 0])),
        dealt([(T_REX, STEGO), (PENTA,)], (BRACHIO,), round=2),
        CardDrawn(0, BRACHIO),
        options=Options(rounds=2),
    )
    events = when(RULES, given, 0, TakePacket())
    scored = events[2]
    assert isinstance(scored, RoundScored)
    assert [s.total for s in scored.scores] == [4 - 2 + 1, -2]
    assert events[3:] == [GameScored((0, 0), (4 + 3, -2), (0,), "highest_total")]
    after = fold(given, events)
    assert RULES.is_terminal(after)
    assert after.phase is Phase.OVER
    assert RULES.outcome(after).winners == (0,)
    assert RULES.outcome(after).result == "highest_total"
    assert RULES.active_seats(after) == frozenset()
    assert RULES.legal_actions(after, 0) == []


def test_tied_highest_totals_share_the_win() -> None:
    given = state(
        2,
        dealt([(T_REX,), (T_REX_2, BRACHIO)], (BRACHIO_2,)),
        CardDrawn(0, BRACHIO_2),
        options=Options(rounds=1),
    )
    events = when(RULES, given, 0, TakePacket())
    after = fold(given, events)
    assert RULES.totals(after) == (5, 5)
    assert RULES.outcome(after).winners == (0, 1)
    assert RULES.outcome(after).result == "shared_highest_total"


def test_commands_after_the_end_are_refused() -> None:
    given = state(
        2,
        dealt([(T_REX,), (T_REX_2,)], (BRACHIO_2,)),
        CardDrawn(0, BRACHIO_2),
        options=Options(rounds=1),
    )
    after = fold(given, when(RULES, given, 0, TakePacket()))
    with pytest.raises(RuleViolation) as refused:
        when(RULES, after, 1, TakePacket())
    assert refused.value.reason == "GAME_OVER"


def scenario_setup(players: int) -> RoundSetup:
    cards = list(range(10 * players))
    return RoundSetup(
        collections=tuple(
            CardList(tuple(cards[4 * s : 4 * s + 4])) for s in range(players)
        ),
        deck=tuple(reversed(cards[4 * players :])),
    )


def test_a_scenario_fixes_the_deal_of_its_rounds() -> None:
    scenario = Scenario((scenario_setup(3),))
    given = RULES.initial_state(GameConfig(3, "s", Options(), scenario))
    events = RULES.start(given, Rng("any", 0))
    deal = events[0]
    assert isinstance(deal, RoundDealt)
    assert deal.collections == scenario.rounds[0].collections
    assert deal.deck == scenario.rounds[0].deck
    assert deal.out_of_play == tuple(range(30, CARD_COUNT))
    assert events[1] == CardDrawn(0, 29)


def test_rounds_beyond_the_scenario_are_dealt_by_the_generator() -> None:
    scenario = Scenario((scenario_setup(2),))
    game, _ = new_game(RULES, 2, "seeded", scenario=scenario)
    other, _ = new_game(RULES, 2, "other seed", scenario=scenario)
    assert game.game.deck == other.game.deck == scenario.rounds[0].deck[1:]
    after_round = RULES._deal(game.game, Rng("a", 1), 2, 0, -1)[0]
    again = RULES._deal(game.game, Rng("b", 1), 2, 0, -1)[0]
    assert isinstance(after_round, RoundDealt) and isinstance(again, RoundDealt)
    assert after_round.deck != again.deck


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (
            RoundSetup((CardList((1, 2, 3, 4)),), tuple(range(10, 22))),
            "SCENARIO_COLLECTIONS_INVALID",
        ),
        (
            RoundSetup((CardList((1, 2, 3, 4)), CardList((5, 6, 7, 8))), (9,)),
            "SCENARIO_DECK_INVALID",
        ),
        (
            RoundSetup(
                (CardList((1, 2, 3, 4)), CardList((4, 6, 7, 8))), tuple(range(10, 22))
            ),
            "SCENARIO_CARDS_INVALID",
        ),
        (
            RoundSetup(
                (CardList((1, 2, 3, 4)), CardList((5, 6, 7, 99))), tuple(range(10, 22))
            ),
            "SCENARIO_CARDS_INVALID",
        ),
        (
            RoundSetup(
                (CardList((1, 2, 3, 4)), CardList((5, 6, 7, 8))),
                tuple(range(10, 22)),
                (0, 1),
            ),
            "SCENARIO_TILES_INVALID",
        ),
    ],
)
def test_a_malformed_scenario_is_refused(setup: RoundSetup, reason: str) -> None:
    with pytest.raises(InvalidCommand) as refused:
        Session(RULES).create(2, "s", Options(), Scenario((setup,)))
    assert refused.value.reason == reason


def test_a_scenario_with_more_rounds_than_the_game_is_refused() -> None:
    setup = scenario_setup(3)
    with pytest.raises(InvalidCommand) as refused:
        Session(RULES).create(3, "s", Options(), Scenario((setup, setup, setup)))
    assert refused.value.reason == "SCENARIO_TOO_MANY_ROUNDS"


def test_the_view_shows_every_rounds_score_and_the_total() -> None:
    given = round_one_last_card()
    view = RULES.view(given, Viewer.spectator())
    assert view.players[0].round_score.total == 4 - 2 + 1 - 1 + 0
    assert (view.players[0].scores, view.players[0].total) == ((), 0)
    after = fold(given, when(RULES, given, 0, TakePacket()))
    first, second = (RULES.view(after, Viewer.spectator()).players[s] for s in (0, 1))
    # Seat 0: T-Rex x2 (1), Stegosaurus (-2), Brachiosaurus (1), Pterodactyl (-1).
    assert (first.scores, first.total) == ((-1,), -1)
    # Seat 1: Pentaceratops (-2), Stegosaurus (-2).
    assert (second.scores, second.total) == ((-4,), -4)
    assert RULES.view(after, Viewer.spectator()).round == 2
