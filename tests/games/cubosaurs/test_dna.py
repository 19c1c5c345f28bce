"""Given/when/then: the advanced mode (DNA tokens and DNA tiles)."""

from __future__ import annotations

import pytest

from domain.chance import Rng
from domain.cubosaurs import RULES
from domain.cubosaurs.content import DNA_TOKENS, TILES, Kind
from domain.cubosaurs.model import (
    BuyTile,
    CardDrawn,
    CardList,
    ClaimDnaTokens,
    CubosaursState,
    Debt,
    DnaTokensForgone,
    DnaTokensGained,
    DnaTokensOwed,
    EndTurn,
    GameScored,
    Options,
    PacketTaken,
    PassPacket,
    Phase,
    RoundDealt,
    RoundScored,
    RoundSetup,
    Scenario,
    TakePacket,
    TileBought,
    TurnEnded,
)
from domain.errors import InvalidCommand, RuleViolation
from domain.rules import GameConfig, Viewer
from tests.gamekit import when
from tests.games.cubosaurs.helpers import ADVANCED, dealt, dna, fold, plain, state

FOSSIL_CACHE, AMBER_TROVE, EXTINCTION, POACHER = 0, 1, 2, 3
RAPTOR_DEN, SKY_WATCH, NEST_GUARDIAN, HORNED_HERD, BIODIVERSITY, LEAN_PACK = range(
    4, 10
)
OFFER = (FOSSIL_CACHE, EXTINCTION, POACHER)

T_REX = plain(Kind.T_REX)
T_REX_DNA = dna(Kind.T_REX)
STEGO = plain(Kind.STEGOSAURUS)
STEGO_DNA = dna(Kind.STEGOSAURUS)
PENTA = plain(Kind.PENTACERATOPS)
PENTA_DNA = dna(Kind.PENTACERATOPS)
PTERO = plain(Kind.PTERODACTYL)
BRACHIO = plain(Kind.BRACHIOSAURUS)
BRACHIO_2 = plain(Kind.BRACHIOSAURUS, 1)


def test_the_tiles_are_ten_with_costs_two_to_four_of_both_timings() -> None:
    assert len(TILES) == 10
    assert all(2 <= t.cost <= 4 for t in TILES)
    assert {t.timing.name for t in TILES} == {"INSTANT", "END_OF_ROUND"}
    assert [t.name for t in TILES[:4]] == [
        "Fossil Cache",
        "Amber Trove",
        "Extinction Event",
        "Poacher",
    ]


def scenario(players: int, tiles: tuple[int, ...] = ()) -> Scenario:
    collections: list[tuple[int, ...]] = [
        (T_REX_DNA, STEGO_DNA, PTERO, BRACHIO),
        (PENTA_DNA, T_REX, STEGO, PENTA),
    ]
    collections += [tuple(range(24 + 4 * s, 28 + 4 * s)) for s in range(players - 2)]
    used = {c for cl in collections for c in cl}
    deck = tuple(c for c in range(55) if c not in used)[: 6 * players]
    return Scenario((RoundSetup(tuple(CardList(c) for c in collections), deck, tiles),))


def started(
    players: int, options: Options, tiles: tuple[int, ...] = ()
) -> list[object]:
    given = RULES.initial_state(
        GameConfig(players, "s", options, scenario(players, tiles))
    )
    return list(RULES.start(given, Rng("s", 0)))


def test_starting_dna_cards_earn_tokens_in_the_advanced_mode() -> None:
    events = started(2, ADVANCED)
    assert events[1:3] == [DnaTokensGained(0, 2), DnaTokensGained(1, 1)]


def test_the_basic_mode_has_no_dna_tokens() -> None:
    events = started(2, Options())
    assert not any(isinstance(e, DnaTokensGained) for e in events)
    assert isinstance(events[0], RoundDealt) and events[0].offer == ()


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_offer_holds_one_tile_more_than_players(players: int) -> None:
    deal = started(players, ADVANCED)[0]
    assert isinstance(deal, RoundDealt)
    assert len(deal.offer) == players + 1
    after = state(players, deal, options=ADVANCED)
    assert len(after.box) == 10 - players - 1


def test_a_scenario_fixes_the_tile_order() -> None:
    order = (9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
    deal = started(2, ADVANCED, order)[0]
    assert isinstance(deal, RoundDealt)
    assert deal.offer == (9, 8, 7)


def game(
    *events: object, players: int = 2, deck: tuple[int, ...] = (BRACHIO_2, PENTA)
) -> CubosaursState:
    """Seat 0 holds T-Rex, Stegosaurus, Pterodactyl and drew ``deck[0]``;
    seat 1 holds a DNA Pentaceratops and a T-Rex; then ``events``."""
    collections: list[tuple[int, ...]] = [
        (T_REX, STEGO, PTERO),
        (PENTA_DNA, plain(Kind.T_REX, 1)),
    ]
    collections += [(plain(Kind.STEGOSAURUS, 2 + s),) for s in range(players - 2)]
    return state(
        players,
        dealt(collections, deck, offer=OFFER),
        CardDrawn(0, deck[0]),
        *events,
        options=ADVANCED,
    )


def test_taking_earns_a_token_for_every_dna_card() -> None:
    given = game(deck=(STEGO_DNA, PENTA))
    events = when(RULES, given, 0, TakePacket())
    assert events[:2] == [PacketTaken(0, (STEGO_DNA,)), DnaTokensGained(0, 1)]


def play(given: CubosaursState, *moves: tuple[int, object]) -> CubosaursState:
    """``given`` after each (seat, command) in turn."""
    for seat, command in moves:
        given = fold(given, when(RULES, given, seat, command))
    return given


def drained(supply: int, holders: dict[int, int], players: int = 2) -> CubosaursState:
    """``game`` with the supply down to ``supply``, the rest held by ``holders``."""
    assert sum(holders.values()) + supply == DNA_TOKENS
    return game(
        *(DnaTokensGained(s, n) for s, n in holders.items()),
        players=players,
        deck=(STEGO_DNA, PENTA_DNA, PENTA),
    )


def test_the_supply_pays_what_it_can_and_the_rest_is_owed() -> None:
    given = drained(1, {1: 39}, players=3)
    given = play(
        given, (0, PassPacket(T_REX)), (1, PassPacket(PENTA_DNA)), (1, EndTurn())
    )
    events = when(RULES, given, 2, TakePacket())
    assert events == [
        PacketTaken(2, (STEGO_DNA, T_REX, PENTA_DNA)),
        DnaTokensGained(2, 1),
        DnaTokensOwed(2, 1),
    ]


def test_tokens_the_supply_cannot_pay_are_owed() -> None:
    given = drained(0, {1: 40})
    events = when(RULES, given, 0, TakePacket())
    assert events == [PacketTaken(0, (STEGO_DNA,)), DnaTokensOwed(0, 1)]
    after = fold(given, events)
    assert after.debts == (Debt(0, 1),)
    assert RULES.active_seats(after) == frozenset({0})
    assert RULES.legal_actions(after, 0) == [ClaimDnaTokens(1)]


def owed(players: int = 3, holders: dict[int, int] | None = None) -> CubosaursState:
    """Seat 0 took a DNA card from an empty supply (seats 1 and 2 hold 39 and 1)."""
    given = drained(0, holders or {1: 39, 2: 1}, players=players)
    return fold(given, when(RULES, given, 0, TakePacket()))


def test_owed_tokens_come_from_the_player_chosen() -> None:
    given = owed()
    assert RULES.legal_actions(given, 0) == [ClaimDnaTokens(1), ClaimDnaTokens(2)]
    events = when(RULES, given, 0, ClaimDnaTokens(1))
    assert events == [
        DnaTokensGained(0, 1, from_seat=1),
        TurnEnded(0, 1),
        CardDrawn(1, PENTA_DNA),
    ]
    after = fold(given, events)
    assert (after.seats[0].tokens, after.seats[1].tokens, after.debts) == (1, 38, ())


def test_a_chosen_player_with_fewer_tokens_gives_what_they_have() -> None:
    given = fold(drained(0, {1: 39, 2: 1}, players=3), [DnaTokensOwed(0, 2)])
    events = when(RULES, given, 0, ClaimDnaTokens(2))
    assert events[0] == DnaTokensGained(0, 1, from_seat=2)
    after = fold(given, events)
    assert (after.seats[0].tokens, after.seats[2].tokens, after.debts) == (1, 0, ())


def test_owed_tokens_are_forgone_when_nobody_else_holds_any() -> None:
    given = drained(0, {0: 40})
    events = when(RULES, given, 0, TakePacket())
    assert events[:3] == [
        PacketTaken(0, (STEGO_DNA,)),
        DnaTokensOwed(0, 1),
        DnaTokensForgone(0, 1),
    ]


def test_nothing_else_happens_until_owed_tokens_are_claimed() -> None:
    given = owed()
    with pytest.raises(RuleViolation) as refused:
        when(RULES, given, 0, EndTurn())
    assert refused.value.reason == "DNA_TOKENS_OWED"
    with pytest.raises(RuleViolation) as refused:
        when(RULES, given, 1, ClaimDnaTokens(2))
    assert refused.value.reason == "NO_DNA_TOKENS_OWED"
    with pytest.raises(RuleViolation) as refused:
        when(RULES, given, 0, ClaimDnaTokens(0))
    assert refused.value.reason == "CANNOT_TAKE_FROM_YOURSELF"
    with pytest.raises(InvalidCommand):
        when(RULES, given, 0, ClaimDnaTokens(7))
    empty = owed(holders={1: 40})
    with pytest.raises(RuleViolation) as refused:
        when(RULES, empty, 0, ClaimDnaTokens(2))
    assert refused.value.reason == "NO_DNA_TOKENS_TO_TAKE"


def rich(tokens: int = 4) -> CubosaursState:
    return game(DnaTokensGained(0, tokens))


def test_buying_a_tile_returns_its_cost_to_the_supply() -> None:
    given = rich()
    events = when(RULES, given, 0, BuyTile(FOSSIL_CACHE))
    assert events == [TileBought(0, FOSSIL_CACHE, cost=2, points=2)]
    after = fold(given, events)
    assert after.seats[0].tokens == 2
    assert after.supply == DNA_TOKENS - 2
    assert after.offer == (EXTINCTION, POACHER)
    assert after.seats[0].tiles == (FOSSIL_CACHE,)
    assert after.phase is Phase.TURN  # bought before the take or pass


def test_only_one_tile_may_be_bought_per_turn() -> None:
    after = fold(rich(), [TileBought(0, FOSSIL_CACHE, cost=2, points=2)])
    with pytest.raises(RuleViolation) as refused:
        when(RULES, after, 0, BuyTile(EXTINCTION, T_REX))
    assert refused.value.reason == "ALREADY_BOUGHT_THIS_TURN"
    assert not any(isinstance(a, BuyTile) for a in RULES.legal_actions(after, 0))


def test_a_tile_may_be_bought_after_the_take_or_pass() -> None:
    given = rich()
    events = when(RULES, given, 0, TakePacket())
    assert events == [PacketTaken(0, (BRACHIO_2,))]
    after = fold(given, events)
    assert after.phase is Phase.ACTED
    actions = RULES.legal_actions(after, 0)
    assert actions[0] == EndTurn() and BuyTile(FOSSIL_CACHE) in actions
    assert TakePacket() not in actions
    assert when(RULES, after, 0, BuyTile(FOSSIL_CACHE)) == [
        TileBought(0, FOSSIL_CACHE, cost=2, points=2),
        TurnEnded(0, 1),
        CardDrawn(1, PENTA),
    ]


def test_end_turn_ends_the_turn_without_buying() -> None:
    after = fold(rich(), [PacketTaken(0, (BRACHIO_2,))])
    assert when(RULES, after, 0, EndTurn()) == [TurnEnded(0, 1), CardDrawn(1, PENTA)]
    with pytest.raises(RuleViolation) as refused:
        when(RULES, after, 0, TakePacket())
    assert refused.value.reason == "ALREADY_TOOK_OR_PASSED"


def test_the_turn_ends_on_its_own_when_no_tile_can_be_bought() -> None:
    given = game(DnaTokensGained(0, 1))
    assert when(RULES, given, 0, TakePacket()) == [
        PacketTaken(0, (BRACHIO_2,)),
        TurnEnded(0, 1),
        CardDrawn(1, PENTA),
    ]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (BuyTile(POACHER, PENTA_DNA), "NOT_ENOUGH_DNA_TOKENS"),
        (BuyTile(SKY_WATCH), "TILE_NOT_ON_OFFER"),
        (BuyTile(FOSSIL_CACHE, T_REX), "TILE_TAKES_NO_CARD"),
        (BuyTile(EXTINCTION), "TARGET_NOT_IN_COLLECTION"),
        (BuyTile(EXTINCTION, PENTA_DNA), "TARGET_NOT_IN_COLLECTION"),
    ],
)
def test_a_tile_purchase_the_rules_forbid_is_refused(
    command: BuyTile, reason: str
) -> None:
    with pytest.raises(RuleViolation) as refused:
        when(RULES, rich(3), 0, command)
    assert refused.value.reason == reason


@pytest.mark.parametrize(
    "command", [BuyTile(10), BuyTile(-1), BuyTile(FOSSIL_CACHE, 55)]
)
def test_a_tile_or_card_that_does_not_exist_is_malformed(command: BuyTile) -> None:
    with pytest.raises(InvalidCommand):
        when(RULES, rich(), 0, command)


@pytest.mark.parametrize("card", [None, T_REX])
def test_poacher_needs_another_players_card(card: int | None) -> None:
    with pytest.raises(RuleViolation) as refused:
        when(RULES, rich(), 0, BuyTile(POACHER, card))
    assert refused.value.reason == "TARGET_NOT_IN_OTHER_COLLECTION"


def test_fossil_cache_scores_its_points_in_the_round() -> None:
    after = fold(rich(), [TileBought(0, FOSSIL_CACHE, cost=2, points=2)])
    assert after.seats[0].instant == 2
    view = RULES.view(after, Viewer.spectator())
    assert view.players[0].round_score.instant == 2


def test_extinction_event_removes_a_card_of_your_collection_from_the_round() -> None:
    given = rich()
    events = when(RULES, given, 0, BuyTile(EXTINCTION, PTERO))
    assert events == [TileBought(0, EXTINCTION, 3, 0, card=PTERO, removed=True)]
    after = fold(given, events)
    assert after.seats[0].collection == (T_REX, STEGO)
    assert after.discarded == (PTERO,)


def test_poacher_takes_another_players_card_and_its_dna_token() -> None:
    given = rich()
    events = when(RULES, given, 0, BuyTile(POACHER, PENTA_DNA))
    assert events == [
        TileBought(0, POACHER, cost=4, points=0, card=PENTA_DNA),
        DnaTokensGained(0, 1),
    ]
    after = fold(given, events)
    assert after.seats[0].collection == (T_REX, STEGO, PTERO, PENTA_DNA)
    assert PENTA_DNA not in after.seats[1].collection
    assert after.seats[0].tokens == 1


def last_turn(*events: object, rounds: int = 2) -> CubosaursState:
    """Seat 0 drew the last card of round 1 holding 5 tokens and Sky Watch."""
    return state(
        2,
        dealt(
            [(PTERO, plain(Kind.PTERODACTYL, 1)), (T_REX,)],
            (BRACHIO,),
            offer=(SKY_WATCH, FOSSIL_CACHE, LEAN_PACK),
        ),
        DnaTokensGained(0, 7),
        CardDrawn(0, BRACHIO),
        TileBought(0, SKY_WATCH, cost=2, points=0),
        *events,
        options=Options(advanced=True, rounds=rounds),
    )


def test_end_of_round_tiles_score_with_the_round() -> None:
    given = last_turn()
    events = when(RULES, given, 0, TakePacket())
    scored = next(e for e in events if isinstance(e, RoundScored))
    assert scored.scores[0].tiles == 2  # two Pterodactyls
    assert scored.scores[0].total == -1 + 1 + 2


def test_tiles_return_and_a_new_offer_is_dealt_between_rounds_tokens_kept() -> None:
    given = last_turn()
    after = fold(given, when(RULES, given, 0, TakePacket()))
    assert after.round == 2
    assert after.seats[0].tiles == ()
    assert after.seats[0].tokens == 5
    assert len(after.offer) == 3
    assert sorted(after.offer + after.box) == list(range(10))


def test_unspent_tokens_score_one_per_pair_at_the_end_of_the_game() -> None:
    given = last_turn(rounds=1)
    events = when(RULES, given, 0, TakePacket())
    assert events[-1] == GameScored((2, 0), (2 + 2, 4), (0, 1), "shared_highest_total")
    after = fold(given, events)
    assert RULES.totals(after) == (4, 4)


def test_a_dna_card_passed_on_and_taken_back_earns_its_token_again() -> None:
    given = state(
        2,
        dealt([(T_REX_DNA, STEGO), (PENTA, BRACHIO)], (PTERO, BRACHIO_2)),
        DnaTokensGained(0, 1),
        CardDrawn(0, PTERO),
        options=ADVANCED,
    )
    given = play(given, (0, PassPacket(T_REX_DNA)), (1, PassPacket(PENTA)))
    events = when(RULES, given, 0, TakePacket())
    assert events[:2] == [
        PacketTaken(0, (PTERO, T_REX_DNA, PENTA)),
        DnaTokensGained(0, 1),
    ]


def test_unspent_tokens_do_not_count_toward_the_lowest_score() -> None:
    given = state(
        2,
        dealt([(PTERO,), (T_REX,)], (BRACHIO,)),
        DnaTokensGained(0, 10),
        CardDrawn(0, BRACHIO),
        options=ADVANCED,
    )
    events = when(RULES, given, 0, TakePacket())
    scored = next(e for e in events if isinstance(e, RoundScored))
    deal = next(e for e in events if isinstance(e, RoundDealt))
    assert [s.total for s in scored.scores] == [0, 4]
    assert deal.first_seat == 0


def test_at_a_deal_seats_are_paid_for_their_starting_dna_in_turn_order() -> None:
    collections = (
        (T_REX_DNA, T_REX, STEGO, PENTA),
        (STEGO_DNA, PTERO, BRACHIO, BRACHIO_2),
        (
            PENTA_DNA,
            plain(Kind.PTERODACTYL, 1),
            plain(Kind.T_REX, 1),
            plain(Kind.STEGOSAURUS, 2),
        ),
    )
    setup = RoundSetup(tuple(CardList(c) for c in collections), tuple(range(35, 53)))
    given = RULES.initial_state(GameConfig(3, "s", ADVANCED, Scenario((setup, setup))))
    # Round 2 started by seat 1, passing to seat 0:
    events = RULES._deal(given, Rng("s", 0), 2, 1, -1)
    paid = [e.seat for e in events if isinstance(e, DnaTokensGained)]
    assert paid == [1, 0, 2]


def test_amber_trove_scores_five_points_this_round() -> None:
    bought = state(
        2,
        dealt([(T_REX,), (PENTA,)], (BRACHIO_2,), offer=(AMBER_TROVE,)),
        DnaTokensGained(0, 4),
        CardDrawn(0, BRACHIO_2),
        options=Options(advanced=True, rounds=1),
    )
    events = when(RULES, bought, 0, BuyTile(AMBER_TROVE))
    assert events == [TileBought(0, AMBER_TROVE, cost=4, points=5)]
    after = fold(bought, events)
    events = when(RULES, after, 0, TakePacket())
    scored = next(e for e in events if isinstance(e, RoundScored))
    assert (scored.scores[0].instant, scored.scores[0].total) == (5, 4 + 1 + 5)
