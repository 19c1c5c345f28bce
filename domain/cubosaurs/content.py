"""The Cubosaurs cards and DNA tiles, loaded once from the package's JSON data.

``cards.json`` holds the 55 cards (7 species x 7 copies and 6 Eggs) and the
scoring of every kind of card; ``tiles.json`` the 10 DNA tiles of the
advanced mode. Both are validated on load: a wrong count, a duplicate id or
a reference that does not resolve raises :class:`CatalogueError`.

Scoring a round applies the printed values (the end of this module):

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

import enum
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any


class CatalogueError(ValueError):
    """A data file of the game is malformed."""


class Kind(enum.Enum):
    """What a card is. Two cards of one kind cannot both be in a packet;
    grey and black raptors are different kinds, and every Egg is its own."""

    T_REX = "t_rex"
    PENTACERATOPS = "pentaceratops"
    PTERODACTYL = "pterodactyl"
    STEGOSAURUS = "stegosaurus"
    BRACHIOSAURUS = "brachiosaurus"
    GREY_RAPTOR = "grey_raptor"
    BLACK_RAPTOR = "black_raptor"
    T_REX_EGG = "t_rex_egg"
    PENTACERATOPS_EGG = "pentaceratops_egg"
    PTERODACTYL_EGG = "pterodactyl_egg"
    STEGOSAURUS_EGG = "stegosaurus_egg"
    BRACHIOSAURUS_EGG = "brachiosaurus_egg"
    RAPTOR_EGG = "raptor_egg"

    # Members are singletons, equal only to themselves: hash them by
    # identity too (Enum's own __hash__ is a Python call, and scoring a
    # round looks kinds up in dicts and counters thousands of times).
    __hash__ = object.__hash__


class Scoring(enum.Enum):
    """How a kind of card scores at the end of a round."""

    ROWS = "rows"  # by how many copies: 1 / 2 / 3 / 4+
    RAPTOR = "raptor"  # paired grey with black, or alone
    EGG = "egg"  # majority of some species


class Timing(enum.Enum):
    """When a DNA tile takes effect."""

    INSTANT = "instant"
    END_OF_ROUND = "end_of_round"


class Effect(enum.Enum):
    """What a DNA tile does."""

    GAIN_POINTS = "gain_points"
    DISCARD_OWN_CARD = "discard_own_card"
    TAKE_CARD = "take_card"
    POINTS_PER_CARD = "points_per_card"
    POINTS_PER_SPECIES = "points_per_species"
    FEWEST_CARDS = "fewest_cards"


INSTANT_EFFECTS = frozenset(
    {Effect.GAIN_POINTS, Effect.DISCARD_OWN_CARD, Effect.TAKE_CARD}
)
TARGETED_EFFECTS = frozenset({Effect.DISCARD_OWN_CARD, Effect.TAKE_CARD})


@dataclass(frozen=True)
class KindInfo:
    """The scoring of one kind of card."""

    kind: Kind
    name: str
    scoring: Scoring
    rows: tuple[int, ...] = ()  # ROWS: score for 1, 2, 3, 4+ copies
    majority_of: tuple[Kind, ...] = ()  # EGG: the kinds counted for majority
    majority: int = 0  # EGG: score with at least as many as everyone else
    minority: int = 0  # EGG: score otherwise


@dataclass(frozen=True)
class Card:
    """One card: its id, kind, DNA symbol and (raptors) paired/alone values."""

    id: int
    kind: Kind
    dna: bool
    paired: int = 0
    alone: int = 0


@dataclass(frozen=True)
class Tile:
    """One DNA tile."""

    id: int
    name: str
    cost: int
    timing: Timing
    effect: Effect
    points: int
    kinds: tuple[Kind, ...]
    text: str


CARD_COUNT = 55
COPIES_PER_SPECIES = 7
DNA_PER_SPECIES = 2
TILE_COUNT = 10
RAPTORS = (Kind.GREY_RAPTOR, Kind.BLACK_RAPTOR)


def _load_json(name: str) -> Any:
    text = (
        resources.files("domain.cubosaurs").joinpath(name).read_text(encoding="utf-8")
    )
    return json.loads(text)


def _kind(name: Any, where: str) -> Kind:
    if not isinstance(name, str) or name not in Kind.__members__:
        raise CatalogueError(f"{where}: unknown kind {name!r}")
    return Kind[name]


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CatalogueError(f"{where}: {value!r} is not an integer")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise CatalogueError(f"{where}: {value!r} is not a non-empty string")
    return value


def load_kinds(data: Any) -> dict[Kind, KindInfo]:
    """The scoring of every kind, validated."""
    raw = data.get("kinds")
    if not isinstance(raw, dict) or set(raw) != set(Kind.__members__):
        raise CatalogueError("cards.json: 'kinds' must describe every kind once")
    kinds: dict[Kind, KindInfo] = {}
    for name, entry in raw.items():
        kind = Kind[name]
        if (
            not isinstance(entry, dict)
            or entry.get("scoring") not in Scoring.__members__
        ):
            raise CatalogueError(f"cards.json: {name} has a bad scoring")
        scoring = Scoring[entry["scoring"]]
        info = KindInfo(kind=kind, name=_str(entry.get("name"), name), scoring=scoring)
        if scoring is Scoring.ROWS:
            rows = tuple(_int(v, name) for v in entry.get("rows", ()))
            if len(rows) != 4:
                raise CatalogueError(f"cards.json: {name} needs 4 row scores")
            info = KindInfo(kind, info.name, scoring, rows=rows)
        elif scoring is Scoring.EGG:
            of = tuple(_kind(k, name) for k in entry.get("majority_of", ()))
            if not of or any(k.name.endswith("_EGG") for k in of):
                raise CatalogueError(f"cards.json: {name} must count species")
            info = KindInfo(
                kind,
                info.name,
                scoring,
                majority_of=of,
                majority=_int(entry.get("majority"), name),
                minority=_int(entry.get("minority"), name),
            )
        elif kind not in RAPTORS:
            raise CatalogueError(f"cards.json: only raptors score as RAPTOR ({name})")
        if (kind in RAPTORS) != (scoring is Scoring.RAPTOR):
            raise CatalogueError(f"cards.json: {name} must score as RAPTOR")
        kinds[kind] = info
    return kinds


def load_cards(data: Any, kinds: dict[Kind, KindInfo]) -> tuple[Card, ...]:
    """The 55 cards, validated: ids 0..54 in order, 7 copies of each species
    with 2 DNA symbols, one card of each Egg without DNA, raptor values."""
    raw = data.get("cards")
    if not isinstance(raw, list) or len(raw) != CARD_COUNT:
        raise CatalogueError(f"cards.json: needs exactly {CARD_COUNT} cards")
    cards: list[Card] = []
    for index, entry in enumerate(raw):
        where = f"cards.json card {index}"
        if _int(entry.get("id"), where) != index:
            raise CatalogueError(f"{where}: ids must be 0..{CARD_COUNT - 1} in order")
        kind = _kind(entry.get("kind"), where)
        dna = entry.get("dna")
        if not isinstance(dna, bool):
            raise CatalogueError(f"{where}: 'dna' must be true or false")
        if kinds[kind].scoring is Scoring.RAPTOR:
            paired = _int(entry.get("paired"), where)
            alone = _int(entry.get("alone"), where)
            cards.append(Card(index, kind, dna, paired, alone))
        else:
            if "paired" in entry or "alone" in entry:
                raise CatalogueError(f"{where}: only raptors have paired/alone")
            cards.append(Card(index, kind, dna))
    for kind, info in kinds.items():
        of_kind = [c for c in cards if c.kind is kind]
        dna_count = sum(c.dna for c in of_kind)
        if info.scoring is Scoring.EGG:
            if len(of_kind) != 1 or dna_count:
                raise CatalogueError(f"cards.json: one {kind.name} without DNA")
        elif len(of_kind) != COPIES_PER_SPECIES or dna_count != DNA_PER_SPECIES:
            raise CatalogueError(
                f"cards.json: {kind.name} needs {COPIES_PER_SPECIES} copies, "
                f"{DNA_PER_SPECIES} with DNA"
            )
    return tuple(cards)


def load_tiles(data: Any) -> tuple[Tile, ...]:
    """The 10 DNA tiles, validated: ids 0..9 in order, costs 2 to 4, an
    effect that fits the timing, kinds where the effect counts cards."""
    raw = data.get("tiles")
    if not isinstance(raw, list) or len(raw) != TILE_COUNT:
        raise CatalogueError(f"tiles.json: needs exactly {TILE_COUNT} tiles")
    tiles: list[Tile] = []
    for index, entry in enumerate(raw):
        where = f"tiles.json tile {index}"
        if _int(entry.get("id"), where) != index:
            raise CatalogueError(f"{where}: ids must be 0..{TILE_COUNT - 1} in order")
        if entry.get("timing") not in Timing.__members__:
            raise CatalogueError(f"{where}: bad timing {entry.get('timing')!r}")
        if entry.get("effect") not in Effect.__members__:
            raise CatalogueError(f"{where}: bad effect {entry.get('effect')!r}")
        timing = Timing[entry["timing"]]
        effect = Effect[entry["effect"]]
        cost = _int(entry.get("cost"), where)
        if not 2 <= cost <= 4:
            raise CatalogueError(f"{where}: cost must be 2 to 4")
        if (effect in INSTANT_EFFECTS) != (timing is Timing.INSTANT):
            raise CatalogueError(f"{where}: {effect.name} does not fit {timing.name}")
        kinds = tuple(_kind(k, where) for k in entry.get("kinds", ()))
        needs_kinds = effect in (Effect.POINTS_PER_CARD, Effect.POINTS_PER_SPECIES)
        if needs_kinds != bool(kinds):
            raise CatalogueError(f"{where}: kinds are for counting effects only")
        tiles.append(
            Tile(
                id=index,
                name=_str(entry.get("name"), where),
                cost=cost,
                timing=timing,
                effect=effect,
                points=_int(entry.get("points"), where),
                kinds=kinds,
                text=_str(entry.get("text"), where),
            )
        )
    return tuple(tiles)


_CARDS_DATA = _load_json("cards.json")
KINDS: dict[Kind, KindInfo] = load_kinds(_CARDS_DATA)
CARDS: tuple[Card, ...] = load_cards(_CARDS_DATA, KINDS)
TILES: tuple[Tile, ...] = load_tiles(_load_json("tiles.json"))
DNA_TOKENS = 40


# -- scoring a round ----------------------------------------------------------


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
