"""Scoring a round of Cubosaurs: species rows, raptor pairs, Eggs, DNA tiles.

- A species scores its row by how many copies its holder has: the score for
  1, 2, 3 or 4-and-more copies (none scores nothing).
- Raptors pair one grey with one black: a paired raptor scores its paired
  value, an unpaired one its alone value, and the pairing is the one that
  gives its holder the most points.
- An Egg scores its majority value when its holder has at least as many
  cards of its species as every other player (ties win), else its minority
  value.
- End-of-round DNA tiles score for their holder; instant tiles scored when
  bought, and those points count in the round they were bought in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from domain.cubosaurs.catalogue import (
    CARDS,
    KINDS,
    TILES,
    Card,
    Effect,
    Kind,
    Scoring,
    Tile,
    Timing,
)


@dataclass(frozen=True)
class SeatScore:
    """One seat's score for one round, by source."""

    seat: int
    species: int  # species rows (T-Rex, Pentaceratops, ...)
    raptors: int  # grey and black raptors, best pairing
    eggs: int  # Egg majorities
    tiles: int  # end-of-round DNA tiles
    instant: int  # instant DNA tiles bought this round
    total: int  # the sum of the above


def row_score(rows: Sequence[int], count: int) -> int:
    """The row score for ``count`` copies (0 for none, the last for 4+)."""
    if count <= 0:
        return 0
    return rows[min(count, len(rows)) - 1]


def raptor_score(cards: Sequence[Card]) -> int:
    """The best score of these raptors over every pairing of grey with black.

    Pairing a raptor gains it ``paired - alone``. The best ``k`` pairs join
    the ``k`` greys with the largest gains to the ``k`` blacks with the
    largest gains, and a further pair is worth making while its two gains
    sum to more than nothing (the sums only fall as ``k`` grows).
    """
    alone = sum(c.alone for c in cards)
    greys = sorted(
        (c.paired - c.alone for c in cards if c.kind is Kind.GREY_RAPTOR),
        reverse=True,
    )
    blacks = sorted(
        (c.paired - c.alone for c in cards if c.kind is Kind.BLACK_RAPTOR),
        reverse=True,
    )
    gain = 0
    for grey, black in zip(greys, blacks, strict=False):
        if grey + black <= 0:
            break
        gain += grey + black
    return alone + gain


def count_kinds(collection: Sequence[int]) -> Counter[Kind]:
    """How many cards of each kind a collection holds."""
    return Counter(CARDS[card].kind for card in collection)


def egg_score(egg: Kind, holder: Counter[Kind], others: Sequence[Counter[Kind]]) -> int:
    """The score of ``egg`` for a holder with these counts, against the others."""
    info = KINDS[egg]
    mine = sum(holder[k] for k in info.majority_of)
    best_other = max((sum(c[k] for k in info.majority_of) for c in others), default=0)
    return info.majority if mine >= best_other else info.minority


def tile_score(
    tile: Tile, counts: Counter[Kind], sizes: Sequence[int], seat: int
) -> int:
    """The end-of-round score of ``tile`` for ``seat`` (0 for an instant tile)."""
    if tile.timing is not Timing.END_OF_ROUND:
        return 0
    match tile.effect:
        case Effect.POINTS_PER_CARD:
            return tile.points * sum(counts[k] for k in tile.kinds)
        case Effect.POINTS_PER_SPECIES:
            return tile.points * sum(1 for k in tile.kinds if counts[k])
        case Effect.FEWEST_CARDS:
            return tile.points if sizes[seat] <= min(sizes) else 0
        case _:
            return 0


def score_round(
    collections: Sequence[Sequence[int]],
    tiles: Sequence[Sequence[int]],
    instant: Sequence[int],
) -> tuple[SeatScore, ...]:
    """Every seat's score for a round that ended with these collections, these
    DNA tiles held, and these points already scored by instant tiles."""
    counts = [count_kinds(c) for c in collections]
    sizes = [len(c) for c in collections]
    scores = []
    for seat, collection in enumerate(collections):
        mine = counts[seat]
        others = counts[:seat] + counts[seat + 1 :]
        species = sum(
            row_score(KINDS[k].rows, n)
            for k, n in mine.items()
            if KINDS[k].scoring is Scoring.ROWS
        )
        raptors = raptor_score(
            [
                CARDS[c]
                for c in collection
                if KINDS[CARDS[c].kind].scoring is Scoring.RAPTOR
            ]
        )
        eggs = sum(
            egg_score(k, mine, others) * n
            for k, n in mine.items()
            if KINDS[k].scoring is Scoring.EGG
        )
        from_tiles = sum(tile_score(TILES[t], mine, sizes, seat) for t in tiles[seat])
        total = species + raptors + eggs + from_tiles + instant[seat]
        scores.append(
            SeatScore(seat, species, raptors, eggs, from_tiles, instant[seat], total)
        )
    return tuple(scores)
