"""Cubosaurs' shapes: options, scenario, commands, events, state and view,
all frozen dataclasses mirrored one to one by
``protos/strata/games/cubosaurs/v1/cubosaurs.proto``.

Cards and DNA tiles are named by id; what they are and how they score is
in :mod:`domain.cubosaurs.content`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

from domain.cubosaurs.content import DNA_TOKENS, Card, SeatScore, Tile

# -- options and scenario ---------------------------------------------------


@dataclass(frozen=True)
class Options:
    """Chosen at creation: the advanced (DNA) mode and the number of rounds
    (0 for the rulebook's: 2 at every player count; 3 with 2 players is a
    variant some play, chosen with ``rounds=3``)."""

    advanced: bool = False
    rounds: int = 0


@dataclass(frozen=True)
class CardList:
    """A list of card ids (one seat's starting collection)."""

    cards: tuple[int, ...] = ()


@dataclass(frozen=True)
class RoundSetup:
    """The fixed deal of one round: every seat's 4 starting cards, the deck
    (top first, 6 cards per player) and the DNA tile order (the first
    players + 1 are the offer; empty for a random order)."""

    collections: tuple[CardList, ...] = ()
    deck: tuple[int, ...] = ()
    tiles: tuple[int, ...] = ()


@dataclass(frozen=True)
class PlayerPosition:
    """One seat of a position: its collection (face up), its DNA tokens and
    the DNA tiles it bought this round (advanced mode), and the total of
    every finished round (round 1 first: one per round before the
    position's)."""

    collection: tuple[int, ...] = ()
    dna_tokens: int = 0
    tiles: tuple[int, ...] = ()
    scores: tuple[int, ...] = ()


@dataclass(frozen=True)
class Position:
    """A round in progress (admin only, in the scenario), at the start of a
    seat's turn: the round (from 1), the seat to act (``turn``), the pass
    direction (+1, -1, or 0 for the round's own: +1 in odd rounds, -1 in
    even ones), one :class:`PlayerPosition` per seat, the packet passed to
    the seat to act (empty: it draws the deck's top card at once), the deck
    (top first; secret), the cards removed by Extinction Event this round
    and the DNA tiles on offer (advanced mode). The cards out of play, the
    tiles in the box, the DNA supply and the instant tiles' points follow
    from the rest."""

    round: int = 0
    turn: int = 0
    direction: int = 0
    players: tuple[PlayerPosition, ...] = ()
    packet: tuple[int, ...] = ()
    deck: tuple[int, ...] = ()
    discarded: tuple[int, ...] = ()
    offer: tuple[int, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """Fixed deals (admin only), round 1 first; later rounds are random.
    ``position``: a round in progress the game starts from (then
    ``rounds`` stays empty, and the rounds after it are dealt at random)."""

    rounds: tuple[RoundSetup, ...] = ()
    position: Position | None = None


# -- commands ---------------------------------------------------------------


@dataclass(frozen=True)
class TakePacket:
    """Take the packet passed to you (or the card you drew) into your collection."""


@dataclass(frozen=True)
class PassPacket:
    """Add ``card`` from your collection to the packet and pass it on."""

    card: int


@dataclass(frozen=True)
class BuyTile:
    """Advanced mode: buy DNA tile ``tile`` from the offer. ``card`` is the
    target of a tile that needs one (a card of yours to remove, or another
    player's card to take)."""

    tile: int
    card: int | None = None


@dataclass(frozen=True)
class EndTurn:
    """Advanced mode: end your turn after the take or pass without buying."""


@dataclass(frozen=True)
class ClaimDnaTokens:
    """Advanced mode: take the DNA tokens you are owed, which the supply
    could not pay, from seat ``from_seat``."""

    from_seat: int


Command = TakePacket | PassPacket | BuyTile | EndTurn | ClaimDnaTokens


# -- events -----------------------------------------------------------------


#: The DNA tiles as rules versions 1 and 2 printed them (``tiles.json``
#: then): by id, the cost, the points scored at once (instant tiles) and
#: whether the tile removes its target card from the round. Schema-1 events,
#: which named a tile and left the rest to the fold, are upcast with these,
#: whatever ``tiles.json`` says later.
SCHEMA_1_TILES: dict[int, tuple[int, int, bool]] = {
    0: (2, 2, False),  # Fossil Cache
    1: (4, 5, False),  # Amber Trove
    2: (3, 0, True),  # Extinction Event
    3: (4, 0, False),  # Poacher
    4: (3, 0, False),  # Raptor Den
    5: (2, 0, False),  # Sky Watch
    6: (2, 0, False),  # Nest Guardian
    7: (3, 0, False),  # Horned Herd
    8: (4, 0, False),  # Biodiversity
    9: (3, 0, False),  # Lean Pack
}


@dataclass(frozen=True)
class RoundDealt:
    """A round was dealt. ``deck`` (top first) and ``out_of_play`` are secret:
    a player or spectator sees them empty, with their sizes.

    Schema 2 added ``box`` (the fold counted the tiles from the content); a
    schema 1 event is upcast when read."""

    schema_version: ClassVar[int] = 2

    round: int
    first_seat: int
    direction: int  # +1: each seat passes to seat + 1; -1: to seat - 1
    collections: tuple[CardList, ...]
    deck: tuple[int, ...]
    deck_size: int
    out_of_play: tuple[int, ...]
    out_of_play_size: int
    offer: tuple[int, ...]  # DNA tiles on offer (advanced mode)
    box: tuple[int, ...]  # DNA tiles neither on offer nor bought (advanced)


def round_dealt_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 had no ``box``: every tile not on offer, in the advanced
    mode (the one with an offer)."""
    offer = set(data["offer"])
    box = [t for t in SCHEMA_1_TILES if t not in offer] if offer else []
    return {**data, "box": box}


@dataclass(frozen=True)
class CardDrawn:
    """``seat``, passed an empty packet, drew ``card``: it is now the packet."""

    seat: int
    card: int


@dataclass(frozen=True)
class PacketTaken:
    """``seat`` took the packet ``cards`` into their collection."""

    seat: int
    cards: tuple[int, ...]


@dataclass(frozen=True)
class PacketPassed:
    """``seat`` added ``card`` to the packet and passed it to ``to_seat``."""

    seat: int
    card: int
    to_seat: int


@dataclass(frozen=True)
class TileBought:
    """``seat`` bought DNA tile ``tile``, returning ``cost`` DNA tokens to
    the supply and scoring ``points`` at once this round (instant tiles).
    ``card`` is the target of its instant effect, if it has one: removed
    from ``seat``'s collection and the round (``removed``, Extinction Event)
    or taken from the collection holding it into ``seat``'s (Poacher).

    Schema 2 added ``cost``, ``points`` and ``removed`` (the fold read them
    from the tile's printed content); a schema 1 event is upcast when read,
    with the tiles of rules versions 1 and 2 (:data:`SCHEMA_1_TILES`)."""

    schema_version: ClassVar[int] = 2

    seat: int
    tile: int
    cost: int
    points: int
    card: int | None = None
    removed: bool = False


def tile_bought_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 named the tile only: its cost, points and whether it
    removed its card are those rules versions 1 and 2 printed."""
    cost, points, removes = SCHEMA_1_TILES[int(data["tile"])]
    return {**data, "cost": cost, "points": points, "removed": removes}


@dataclass(frozen=True)
class DnaTokensGained:
    """``seat`` gained ``amount`` DNA tokens from the supply, or from
    ``from_seat`` (settling what the supply owed them)."""

    seat: int
    amount: int
    from_seat: int | None = None


@dataclass(frozen=True)
class DnaTokensOwed:
    """The supply could not pay ``seat`` ``amount`` tokens: they choose
    another player to take them from."""

    seat: int
    amount: int


@dataclass(frozen=True)
class DnaTokensForgone:
    """Nobody else holds a DNA token, so ``seat`` goes without ``amount``."""

    seat: int
    amount: int


@dataclass(frozen=True)
class TurnEnded:
    """``seat``'s turn ended; ``next_seat`` is passed the packet."""

    seat: int
    next_seat: int


@dataclass(frozen=True)
class RoundScored:
    """Round ``round`` ended and every seat scored it."""

    round: int
    scores: tuple[SeatScore, ...]


@dataclass(frozen=True)
class PlayerWithdrew:
    """``seat``'s player left the game (rules version 3 on): its collection
    stays on the table and scores, its turns are taken by a stand-in, and it
    ranks below every seat still in."""

    seat: int


@dataclass(frozen=True)
class GameScored:
    """The game ended: unspent DNA tokens scored 1 per pair, and the totals;
    ``winners``, the highest total among the seats still in (a seat that
    left ranks below them, rules version 3 on), ``result``
    "highest_total" or, for several, "shared_highest_total".

    Schema 2 added ``winners`` and ``result`` (worked out from the totals
    when the game ended); a schema 1 event is upcast when read, with the
    highest totals of all seats, as rules versions 1 and 2 ranked them."""

    schema_version: ClassVar[int] = 2

    token_points: tuple[int, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    result: str


#: The results of :class:`GameScored`.
HIGHEST_TOTAL, SHARED_HIGHEST_TOTAL = "highest_total", "shared_highest_total"


def highest(totals: dict[int, int]) -> tuple[tuple[int, ...], str]:
    """The seats with the highest of ``totals`` (by seat), and the result."""
    best = max(totals.values(), default=0)
    winners = tuple(s for s, t in sorted(totals.items()) if t == best)
    return winners, HIGHEST_TOTAL if len(winners) == 1 else SHARED_HIGHEST_TOTAL


def game_scored_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 had no winners: the highest totals, every seat ranked."""
    winners, result = highest(dict(enumerate(int(t) for t in data["totals"])))
    return {**data, "winners": list(winners), "result": result}


Event = (
    RoundDealt
    | CardDrawn
    | PacketTaken
    | PacketPassed
    | TileBought
    | DnaTokensGained
    | DnaTokensOwed
    | DnaTokensForgone
    | TurnEnded
    | RoundScored
    | PlayerWithdrew
    | GameScored
)


# -- state ------------------------------------------------------------------


class Phase(enum.Enum):
    """Where the turn is."""

    SETUP = "setup"  # before the first deal
    TURN = "turn"  # the seat to act must take or pass (and may buy)
    ACTED = "acted"  # the seat took or passed and may still buy a tile
    OVER = "over"  # the game is over


@dataclass(frozen=True)
class Debt:
    """DNA tokens the supply could not pay ``seat``."""

    seat: int
    amount: int


@dataclass(frozen=True)
class SeatState:
    """One player: collection, DNA tokens and tiles, scores so far."""

    collection: tuple[int, ...] = ()
    tokens: int = 0
    tiles: tuple[int, ...] = ()  # DNA tiles bought this round
    instant: int = 0  # points scored this round by instant tiles
    scores: tuple[int, ...] = ()  # the total of every finished round


#: A card a viewer does not know, in a state folded from the events it is
#: sent: the deck and the cards out of play keep as many as they hold.
UNSEEN = -1


@dataclass(frozen=True)
class CubosaursState:
    """The whole game, secrets included (folded from a player's events, the
    deck and the cards out of play are :data:`UNSEEN` cards)."""

    players: int
    advanced: bool
    rounds: int
    scenario: Scenario | None = None
    round: int = 0
    phase: Phase = Phase.SETUP
    turn: int = 0
    direction: int = 1
    deck: tuple[int, ...] = ()  # top first; secret
    out_of_play: tuple[int, ...] = ()  # this round's unused cards; secret
    packet: tuple[int, ...] = ()
    discarded: tuple[int, ...] = ()  # removed from the round by a DNA tile
    seats: tuple[SeatState, ...] = ()
    supply: int = DNA_TOKENS
    offer: tuple[int, ...] = ()  # DNA tiles on offer
    box: tuple[int, ...] = ()  # DNA tiles neither on offer nor bought
    bought: bool = False  # the seat to act bought a tile this turn
    debts: tuple[Debt, ...] = ()
    withdrawn: tuple[int, ...] = ()  # seats whose players left (rank last)
    token_points: tuple[int, ...] = ()  # set when the game ends
    winners: tuple[int, ...] = ()  # set when the game ends
    result: str = ""  # set when the game ends


# -- view -------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerView:
    """One player as everyone sees them."""

    seat: int
    collection: tuple[Card, ...]
    dna_tokens: int
    tiles: tuple[Tile, ...]  # DNA tiles bought this round
    round_score: SeatScore  # what the current round would score now
    scores: tuple[int, ...]  # the total of every finished round
    token_points: int  # unspent DNA token pairs (once the game is over)
    total: int  # finished rounds plus token points


@dataclass(frozen=True)
class View:
    """The game as one viewer sees it. Only an admin sees ``deck`` (top
    first) and ``out_of_play``; everyone else sees their sizes."""

    round: int
    rounds: int
    advanced: bool
    phase: Phase
    turn: int
    direction: int
    packet: tuple[Card, ...]
    players: tuple[PlayerView, ...]
    deck_size: int
    out_of_play_size: int
    discarded: tuple[Card, ...]
    offer: tuple[Tile, ...]
    tiles_in_box: int
    dna_supply: int  # DNA tokens in the supply (0 in the basic mode, which has none)
    bought_this_turn: bool
    debts: tuple[Debt, ...]
    deck: tuple[int, ...]
    out_of_play: tuple[int, ...]
