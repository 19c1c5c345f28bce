"""Starting from a position (admin scenario): a round in progress.

Given/when/then for the rule situations a position reaches at once (the
last turn of a round, buying a DNA tile, a short supply, the last round's
final scoring), the refusals (each naming the field that is wrong), what
players see of it, and a property test over random positions, valid and
broken, in both modes."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from strata.games.cubosaurs.v1 import cubosaurs_pb2

from domain.chance import Rng
from domain.cubosaurs import RULES
from domain.cubosaurs.content import CARD_COUNT, CARDS, DNA_TOKENS, Kind, score_round
from domain.cubosaurs.model import (
    BuyTile,
    CardDrawn,
    CardList,
    ClaimDnaTokens,
    CubosaursState,
    DnaTokensForgone,
    DnaTokensGained,
    DnaTokensOwed,
    EndTurn,
    GameScored,
    Options,
    PacketPassed,
    PacketTaken,
    PassPacket,
    Phase,
    PlayerPosition,
    Position,
    RoundDealt,
    RoundScored,
    RoundSetup,
    Scenario,
    TakePacket,
    TileBought,
    TurnEnded,
)
from domain.errors import InvalidCommand, RuleViolation
from domain.rules import Viewer
from domain.session import Session, SessionState, Status
from tests.gamekit import (
    RANDOM_SEEDS,
    assert_hidden_alike,
    assert_position_plays,
    check_random_positions,
    new_game,
    refusal,
)
from tests.games.cubosaurs.helpers import ADVANCED, dna, plain
from tests.games.cubosaurs.test_random_play import check_invariants

FOSSIL_CACHE, AMBER_TROVE, EXTINCTION, POACHER, SKY_WATCH = 0, 1, 2, 3, 5
T_REX_DNA = dna(Kind.T_REX)
PENTA_DNA = dna(Kind.PENTACERATOPS)
BRACHIO = plain(Kind.BRACHIOSAURUS)
PTERO = plain(Kind.PTERODACTYL)


def make(
    collections: Sequence[Sequence[int]],
    packet: Sequence[int] = (),
    deck: Sequence[int] | None = None,
    *,
    round: int = 1,
    turn: int = 0,
    scores: Sequence[Sequence[int]] | None = None,
    tokens: Sequence[int] | None = None,
    tiles: Sequence[Sequence[int]] | None = None,
    offer: Sequence[int] = (),
    discarded: Sequence[int] = (),
) -> Position:
    """A position of these collections (seat 0 first); ``deck`` None: the
    rest of the round's pool, the lowest card ids not placed."""
    players = len(collections)
    placed = {c for cl in collections for c in cl} | set(packet) | set(discarded)
    if deck is None:
        rest = [c for c in range(CARD_COUNT) if c not in placed]
        deck = rest[: 10 * players - len(placed)]
    return Position(
        round=round,
        turn=turn,
        players=tuple(
            PlayerPosition(
                collection=tuple(collections[s]),
                dna_tokens=tokens[s] if tokens else 0,
                tiles=tuple(tiles[s]) if tiles else (),
                scores=tuple(scores[s]) if scores else (0,) * (round - 1),
            )
            for s in range(players)
        ),
        packet=tuple(packet),
        deck=tuple(deck),
        discarded=tuple(discarded),
        offer=tuple(offer),
    )


def start(
    position: Position, options: Options | None = None
) -> tuple[SessionState[CubosaursState], list[Any]]:
    players = len(position.players)
    return new_game(RULES, players, "pos", options, Scenario(position=position))


def act(
    state: CubosaursState, seat: int, command: Any
) -> tuple[list[Any], CubosaursState]:
    return RULES.decide_and_evolve(state, seat, command, Rng("act", 0))


def unused(*placed: Sequence[int]) -> list[int]:
    taken = {c for cards in placed for c in cards}
    return [c for c in range(CARD_COUNT) if c not in taken]


# -- a position sets the state ------------------------------------------------


def test_a_position_sets_the_round_seats_packet_deck_and_tiles() -> None:
    position = make(
        [[BRACHIO, PTERO], [PENTA_DNA]],
        [T_REX_DNA],
        round=2,
        turn=1,
        scores=[[7], [-3]],
        tokens=[5, 33],
        tiles=[[FOSSIL_CACHE], []],
        offer=(SKY_WATCH, POACHER),
    )
    state, events = start(position, ADVANCED)
    game = state.game
    assert state.status is Status.ACTIVE
    assert not any(isinstance(e, RoundDealt) for e in events)
    assert (game.round, game.turn, game.direction, game.phase) == (2, 1, -1, Phase.TURN)
    assert game.packet == (T_REX_DNA,) and game.deck == position.deck
    assert [s.collection for s in game.seats] == [(BRACHIO, PTERO), (PENTA_DNA,)]
    assert [s.scores for s in game.seats] == [(7,), (-3,)]
    assert [(s.tokens, s.instant) for s in game.seats] == [(5, 2), (33, 0)]
    assert game.supply == DNA_TOKENS - 38
    assert sorted(game.box) == [1, 2, 4, 6, 7, 8, 9] and game.offer == (
        SKY_WATCH,
        POACHER,
    )
    assert len(game.out_of_play) == CARD_COUNT - 20
    assert RULES.active_seats(game) == {1}
    check_invariants(game)


def test_given_an_empty_packet_the_seat_to_act_draws_at_once() -> None:
    position = make([[BRACHIO], [PTERO]])
    state, events = start(position)
    assert events[-1] == CardDrawn(0, position.deck[0])
    assert state.game.packet == (position.deck[0],)


# -- (a) the last turn of a round ---------------------------------------------


def last_turn_of_round_one() -> Position:
    """Round 1 of 2, the deck empty: seat 0 is passed the last Brachiosaurus;
    seat 0 holds 10 cards, seat 1 nine."""
    rest = unused([BRACHIO])
    return make([rest[:10], rest[10:19]], [BRACHIO], deck=())


def test_given_the_deck_empty_when_the_last_packet_is_taken_the_round_is_scored() -> (
    None
):
    position = last_turn_of_round_one()
    state, _ = start(position)
    events, after = act(state.game, 0, TakePacket())
    assert events[:2] == [PacketTaken(0, (BRACHIO,)), TurnEnded(0, 1)]
    collections = [(*position.players[0].collection, BRACHIO)]
    collections.append(position.players[1].collection)
    scores = score_round(collections, [(), ()], [0, 0])
    assert events[2] == RoundScored(1, scores)
    # Round 2 starts with the lowest total, passing the other way.
    deal = events[3]
    assert isinstance(deal, RoundDealt) and deal.round == 2
    lowest = min(range(2), key=lambda s: (scores[s].total, s))
    assert (deal.first_seat, deal.direction) == (lowest, -1)
    assert [s.scores for s in after.seats] == [(scores[0].total,), (scores[1].total,)]


def test_given_the_deck_empty_a_passed_packet_goes_on_until_someone_takes_it() -> None:
    position = last_turn_of_round_one()
    state, _ = start(position)
    card = next(
        c
        for c in position.players[0].collection
        if CARDS[c].kind is not Kind.BRACHIOSAURUS
    )
    events, after = act(state.game, 0, PassPacket(card))
    assert events == [PacketPassed(0, card, 1), TurnEnded(0, 1)]
    assert after.round == 1 and after.packet == (BRACHIO, card)
    events, after = act(after, 1, TakePacket())
    assert isinstance(events[2], RoundScored) and after.round == 2


# -- (b) the DNA tiles and tokens (advanced mode) -------------------------------


def dna_position(tokens: Sequence[int], packet: Sequence[int] = (BRACHIO,)) -> Position:
    return make(
        [[PTERO], [plain(Kind.T_REX)]],
        packet,
        tokens=tokens,
        offer=(FOSSIL_CACHE, AMBER_TROVE, SKY_WATCH),
    )


def test_given_enough_dna_tokens_a_seat_buys_a_tile_from_the_offer() -> None:
    state, _ = start(dna_position([4, 0]), ADVANCED)
    game = state.game
    assert BuyTile(AMBER_TROVE) in RULES.legal_actions(game, 0)
    events, after = act(game, 0, BuyTile(AMBER_TROVE))
    assert events == [TileBought(0, AMBER_TROVE, cost=4, points=5)]
    assert after.seats[0].tokens == 0 and after.supply == DNA_TOKENS
    assert after.seats[0].tiles == (AMBER_TROVE,) and after.seats[0].instant == 5
    assert after.offer == (FOSSIL_CACHE, SKY_WATCH)
    # Bought before the take: the seat still takes or passes, then its turn ends.
    events, after = act(after, 0, TakePacket())
    assert events[:2] == [PacketTaken(0, (BRACHIO,)), TurnEnded(0, 1)]


def test_given_too_few_dna_tokens_a_seat_may_not_buy_the_tile() -> None:
    state, _ = start(dna_position([3, 0]), ADVANCED)
    game = state.game
    legal = RULES.legal_actions(game, 0)
    assert BuyTile(FOSSIL_CACHE) in legal and BuyTile(AMBER_TROVE) not in legal
    with pytest.raises(RuleViolation) as refused:
        act(game, 0, BuyTile(AMBER_TROVE))
    assert refused.value.reason == "NOT_ENOUGH_DNA_TOKENS"


def test_given_an_empty_supply_a_seat_is_owed_tokens_and_claims_them() -> None:
    # The players hold all 40 tokens; seat 0 takes a DNA T-Rex.
    state, _ = start(dna_position([1, 39], [T_REX_DNA]), ADVANCED)
    assert state.game.supply == 0
    events, after = act(state.game, 0, TakePacket())
    assert events == [PacketTaken(0, (T_REX_DNA,)), DnaTokensOwed(0, 1)]
    assert RULES.legal_actions(after, 0) == [ClaimDnaTokens(1)]
    events, after = act(after, 0, ClaimDnaTokens(1))
    assert events[0] == DnaTokensGained(0, 1, from_seat=1)
    assert [s.tokens for s in after.seats] == [2, 38] and not after.debts


def test_given_a_short_supply_the_rest_is_owed() -> None:
    # One token left in the supply; seat 0 takes two DNA cards.
    state, _ = start(dna_position([1, 38], [T_REX_DNA, PENTA_DNA]), ADVANCED)
    events, after = act(state.game, 0, TakePacket())
    assert events[1:] == [DnaTokensGained(0, 1), DnaTokensOwed(0, 1)]
    assert RULES.active_seats(after) == {0}


def test_given_nobody_else_holds_tokens_the_debt_is_forgone() -> None:
    state, _ = start(dna_position([40, 0], [T_REX_DNA]), ADVANCED)
    events, after = act(state.game, 0, TakePacket())
    assert DnaTokensForgone(0, 1) in events and not after.debts


# -- (c) the last round: the final scoring and the winner -----------------------


def last_round(tokens: Sequence[int] | None = None) -> Position:
    """Round 2 of 2, seat 1 ahead by 3; seat 0 takes the last packet."""
    rest = unused([BRACHIO])
    return make(
        [rest[:10], rest[10:19]],
        [BRACHIO],
        deck=(),
        round=2,
        scores=[[12], [15]],
        tokens=tokens,
        offer=(FOSSIL_CACHE, AMBER_TROVE, SKY_WATCH) if tokens else (),
    )


@pytest.mark.parametrize("advanced", [False, True], ids=["basic", "advanced"])
def test_given_the_last_round_the_game_ends_with_every_rounds_scores(
    advanced: bool,
) -> None:
    tokens = [9, 0] if advanced else None  # 4 pairs: 4 points to seat 0
    position = last_round(tokens)
    state, _ = start(position, Options(advanced=advanced))
    session = Session(RULES)
    events, after = session.advance(state, 0, TakePacket(), Rng("last", 0))
    if advanced:  # seat 0 could still buy a tile: it ends its turn
        more, after = session.advance(after, 0, EndTurn(), Rng("last", 1))
        events += more
    collections = [(*position.players[0].collection, BRACHIO)]
    collections.append(position.players[1].collection)
    round_two = [s.total for s in score_round(collections, [(), ()], [0, 0])]
    token_points = (4, 0) if advanced else (0, 0)
    totals = tuple(
        earlier + now + points
        for earlier, now, points in zip((12, 15), round_two, token_points, strict=True)
    )
    best = max(totals)
    winners = tuple(s for s in (0, 1) if totals[s] == best)
    result = "highest_total" if len(winners) == 1 else "shared_highest_total"
    assert GameScored(token_points, totals, winners, result) in events
    assert after.status is Status.FINISHED
    assert after.outcome is not None
    assert after.outcome.winners == winners


# -- refusals -------------------------------------------------------------------

TWO = [[BRACHIO], [PTERO]]
GOOD = make(TWO)
DNA_GOOD = make(TWO, tokens=[2, 3], offer=(FOSSIL_CACHE, AMBER_TROVE, SKY_WATCH))


def but(position: Position, **changes: Any) -> Position:
    """``position`` with ``changes``."""
    return dataclasses.replace(position, **changes)


def seat(position: Position, index: int, **changes: Any) -> Position:
    """``position`` with ``changes`` to seat ``index``."""
    players = list(position.players)
    players[index] = dataclasses.replace(players[index], **changes)
    return but(position, players=tuple(players))


BROKEN = [
    (but(GOOD, round=0), "position.round"),
    (but(GOOD, round=3), "position.round"),
    (but(GOOD, players=GOOD.players[:1]), "position.players"),
    (but(GOOD, turn=2), "position.turn"),
    (but(GOOD, direction=-1), "position.direction"),
    (seat(GOOD, 1, scores=(4,)), "position.players[1].scores"),
    (
        seat(make(TWO, round=2), 0, scores=(101,)),
        "position.players[0].scores",
    ),
    (seat(GOOD, 0, collection=(BRACHIO, 55)), "position.players[0].collection"),
    (but(GOOD, deck=(PTERO, *GOOD.deck[1:])), "position.deck"),  # in two places
    (but(GOOD, deck=GOOD.deck[1:]), "position.deck"),  # 19 cards for 2 players
    (
        make(TWO, [plain(Kind.T_REX), plain(Kind.T_REX, 1)]),
        "position.packet",
    ),
    (make([unused()[:10], unused()[10:20]], deck=()), "position.packet"),
    (but(GOOD, offer=(FOSSIL_CACHE,)), "position.offer"),
    (seat(GOOD, 1, dna_tokens=2), "position.players[1].dna_tokens"),
    (seat(GOOD, 0, tiles=(SKY_WATCH,)), "position.players[0].tiles"),
    (make(TWO, discarded=[plain(Kind.T_REX)]), "position.discarded"),
]

DNA_BROKEN = [
    (but(DNA_GOOD, offer=(FOSSIL_CACHE, AMBER_TROVE)), "position.offer"),
    (but(DNA_GOOD, offer=(FOSSIL_CACHE, AMBER_TROVE, 10)), "position.offer"),
    (seat(DNA_GOOD, 1, tiles=(AMBER_TROVE,)), "position.players[1].tiles"),
    (seat(DNA_GOOD, 1, dna_tokens=39), "position.players[1].dna_tokens"),
    (seat(DNA_GOOD, 0, dna_tokens=-1), "position.players[0].dna_tokens"),
    (
        but(DNA_GOOD, discarded=DNA_GOOD.deck[:1], deck=DNA_GOOD.deck[1:]),
        "position.discarded",
    ),
    (
        seat(but(DNA_GOOD, offer=(FOSSIL_CACHE, AMBER_TROVE)), 0, tiles=(EXTINCTION,)),
        "position.discarded",
    ),
]


@pytest.mark.parametrize(("position", "field"), BROKEN)
def test_a_broken_position_is_refused_naming_its_field(
    position: Position, field: str
) -> None:
    error = refusal(RULES, 2, Scenario(position=position))
    assert error is not None and error.field == field, error
    assert error.reason == "POSITION_INVALID"


@pytest.mark.parametrize(("position", "field"), DNA_BROKEN)
def test_a_broken_advanced_position_is_refused_naming_its_field(
    position: Position, field: str
) -> None:
    error = refused(2, Scenario(position=position), ADVANCED)
    assert error is not None and error.field == field, error
    assert error.reason == "POSITION_INVALID"


def test_an_advanced_position_with_an_extinction_event_bought_discards_one() -> None:
    position = make(
        TWO,
        tokens=[0, 0],
        tiles=[[EXTINCTION], []],
        offer=(FOSSIL_CACHE, AMBER_TROVE),
        discarded=[plain(Kind.T_REX)],
    )
    assert refused(2, Scenario(position=position), ADVANCED) is None


def test_a_position_with_the_scenarios_own_deals_is_refused() -> None:
    deal = RoundSetup(
        (CardList((0, 1, 2, 3)), CardList((4, 5, 6, 7))), tuple(range(8, 20))
    )
    error = refusal(RULES, 2, Scenario(rounds=(deal,), position=GOOD))
    assert error is not None and error.field == "rounds"


# -- what players see -------------------------------------------------------------


def test_players_see_the_position_without_the_deck() -> None:
    position = make(TWO, [T_REX_DNA], turn=1)
    for viewer in (Viewer.player(0), Viewer.player(1), Viewer.spectator()):
        shown = RULES.redact_position(position, viewer)
        unseen = (-1,) * len(position.deck)  # as many unseen cards
        assert position.deck and shown == but(position, deck=unseen)
    assert RULES.redact_position(position, Viewer.admin()) == position
    assert_position_plays(RULES, cubosaurs_pb2, 2, Scenario(position=position), "seen")
    state, _ = start(position)
    assert state.game.deck == position.deck  # the deck is there, only hidden


# -- random positions ------------------------------------------------------------


def refused(
    players: int, scenario: Scenario, options: Options
) -> InvalidCommand | None:
    """:func:`tests.gamekit.refusal`, in ``options``' mode."""
    return refusal(RULES, players, scenario, options=options)


def random_position(rng: Rng, players: int, advanced: bool) -> Position:
    """A position as a game of 2 rounds could reach it at the start of a
    seat's turn (in the advanced mode now and then with the supply nearly
    empty, or more tokens held than there are)."""
    number = rng.roll(2)
    pool = list(rng.shuffled(range(CARD_COUNT))[: 10 * players])
    deck = pool[: rng.roll(len(pool)) - 1]
    rest = pool[len(deck) :]
    packet: list[int] = []
    for card in rest[: rng.roll(4) - 1 if deck else 1]:
        if CARDS[card].kind not in {CARDS[c].kind for c in packet}:
            packet.append(card)
    rest = [c for c in rest if c not in packet]
    tiles: list[list[int]] = [[] for _ in range(players)]
    offer: list[int] = []
    discarded: list[int] = []
    if advanced:
        for tile in rng.shuffled(range(10))[: players + 1]:
            if rng.roll(3) == 1:
                tiles[rng.roll(players) - 1].append(tile)
            else:
                offer.append(tile)
        if any(EXTINCTION in t for t in tiles) and rest:
            discarded.append(rest.pop())
    collections: list[list[int]] = [[] for _ in range(players)]
    for card in rest:
        collections[rng.roll(players) - 1].append(card)
    tokens = [rng.roll(DNA_TOKENS // players + 2) - 1 for _ in range(players)]
    if advanced and rng.roll(4) == 1:  # the supply nearly empty
        tokens[-1] = DNA_TOKENS - sum(tokens[:-1]) - rng.roll(2) + 1
    return Position(
        round=number,
        turn=rng.roll(players) - 1,
        direction=rng.choice([0, 1 if number % 2 else -1]),
        players=tuple(
            PlayerPosition(
                collection=tuple(collections[s]),
                dna_tokens=tokens[s] if advanced else 0,
                tiles=tuple(tiles[s]),
                scores=tuple(rng.roll(61) - 21 for _ in range(number - 1)),
            )
            for s in range(players)
        ),
        packet=tuple(packet),
        deck=tuple(deck),
        discarded=tuple(discarded),
        offer=tuple(offer),
    )


def broken(rng: Rng, position: Position) -> Position:
    """``position`` broken in one way: a round, turn or direction out of
    range, a card in two places or missing, a finished round's score
    missing."""
    first = position.players[0]
    card = (position.deck or position.packet)[0]
    breaks = [
        but(position, round=rng.choice([0, 3])),
        but(position, turn=len(position.players)),
        but(position, direction=-1 if position.round % 2 else 1),
        seat(position, 0, collection=(*first.collection, card)),
        but(position, deck=position.deck[1:])
        if position.deck
        else but(position, packet=position.packet[1:]),
        seat(position, 0, scores=(*first.scores, 0)),
    ]
    return rng.choice(breaks)


@pytest.mark.parametrize("advanced", [False, True], ids=["basic", "advanced"])
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_random_positions_start_and_play_or_are_refused_with_a_reason(
    players: int, advanced: bool
) -> None:
    def make(rng: Rng, i: int) -> Scenario:
        position = random_position(rng, players, advanced)
        return Scenario(position=broken(rng, position) if i % 4 == 3 else position)

    refused_count, played = check_random_positions(
        RULES,
        cubosaurs_pb2,
        players,
        make,
        max(RANDOM_SEEDS // 20, 10),
        check_each_step=check_invariants,
        options=Options(advanced=advanced),
        label=f"{advanced}-",
    )
    assert refused_count and played  # both kinds were tried


def break_readme_example(data: dict[str, Any]) -> str:
    """Break the README's example position (proto JSON) in one field: the
    deck's top card is also in seat 0's collection. The path of that field
    (the end-to-end tests check the service names it)."""
    data["deck"][0] = data["players"][0]["collection"][0]
    return "deck"


def test_the_decks_order_is_hidden_from_players_and_spectators() -> None:
    assert_hidden_alike(
        RULES,
        2,
        GOOD,
        but(GOOD, deck=tuple(reversed(GOOD.deck))),
        [Viewer.spectator(), Viewer.player(0), Viewer.player(1)],
    )
