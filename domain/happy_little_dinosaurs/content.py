"""The cards and dinosaurs of Happy Little Dinosaurs, loaded from data.

``cards.json`` lists the Point, Instant and Disaster cards (with copies),
``dinosaurs.json`` the dinosaurs and their traits. Both are read once and
validated: the deck sizes, unique ids, and that every effect has the timing
the rules implement. Every physical card gets an id such as ``pet_rock_1``
so that conservation of the 97 cards can be checked.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any


class CardDataError(ValueError):
    """A data file of the game is malformed."""


class Kind(enum.Enum):
    """Which deck a card belongs to and what it is."""

    POINT = "point"
    INSTANT = "instant"
    DISASTER = "disaster"


class Effect(enum.Enum):
    """What a Point card does besides its value."""

    NONE = "none"
    ADD_POINT_CARD_VALUE = "add_point_card_value"  # Pet Rock
    ADD_EFFECT_CARD_VALUE = "add_effect_card_value"  # "Delicious" Smoothie
    GRAB_CARD = "grab_card"  # Dino Grabber
    SWAP_WITH_NEIGHBOUR = "swap_with_neighbour"  # Grappling Snake
    DISCARD_UP_TO_THREE = "discard_up_to_three"  # Fire Spray
    SWAP_HIGHEST_AND_LOWEST = "swap_highest_and_lowest"  # Mouth Trap
    DOUBLE_BOOSTERS_AND_SAPPERS = "double_boosters_and_sappers"  # Star Fruit
    LOOK_AT_TOP_TWO = "look_at_top_two"  # Treenoculars
    SWAP_TWO_OTHERS = "swap_two_others"  # Hungry Plant
    SILENCE_OTHERS = "silence_others"  # Flaming Chainsaw


class Timing(enum.Enum):
    """When a Point card's effect happens."""

    NONE = "none"
    NORMAL = "normal"  # after the reveal, lowest value first
    DURING_ROUND = "during_round"  # before every other effect
    DURING_SCORING = "during_scoring"  # when scores are calculated


class InstantEffect(enum.Enum):
    """What an Instant card does."""

    BOOST = "boost"
    SAP = "sap"
    INVERT = "invert"
    INSURE = "insure"
    REDIRECT = "redirect"


class DisasterType(enum.Enum):
    """The type of a Disaster card (a Meteor is wild)."""

    NATURAL = "natural"
    PREDATORY = "predatory"
    EMOTIONAL = "emotional"
    METEOR = "meteor"


def eliminates(types: Iterable[DisasterType]) -> bool:
    """Three of one type or three different types, Meteors wild."""
    kinds = list(types)
    meteors = kinds.count(DisasterType.METEOR)
    others = [t for t in kinds if t is not DisasterType.METEOR]
    most = max((others.count(t) for t in set(others)), default=0)
    return most + meteors >= 3 or len(set(others)) + meteors >= 3


class Dinosaur(enum.Enum):
    """The dinosaur a player plays."""

    NERVOUS_REX = "nervous_rex"
    BAD_LUCK_BRONTO = "bad_luck_bronto"
    CRY_CERATOPS = "cry_ceratops"
    STEGO = "stego"


# The effects the rules implement, by timing.
_SUPPORTED: dict[Timing, frozenset[Effect]] = {
    Timing.NONE: frozenset({Effect.NONE}),
    Timing.NORMAL: frozenset(
        {
            Effect.ADD_POINT_CARD_VALUE,
            Effect.ADD_EFFECT_CARD_VALUE,
            Effect.GRAB_CARD,
            Effect.SWAP_WITH_NEIGHBOUR,
            Effect.DISCARD_UP_TO_THREE,
            Effect.LOOK_AT_TOP_TWO,
            Effect.SWAP_TWO_OTHERS,
        }
    ),
    Timing.DURING_ROUND: frozenset({Effect.SILENCE_OTHERS}),
    Timing.DURING_SCORING: frozenset(
        {Effect.SWAP_HIGHEST_AND_LOWEST, Effect.DOUBLE_BOOSTERS_AND_SAPPERS}
    ),
}


@dataclass(frozen=True)
class Card:
    """One physical card."""

    id: str
    name: str
    kind: Kind
    value: int = 0
    effect: Effect = Effect.NONE
    timing: Timing = Timing.NONE
    instant: InstantEffect | None = None
    amount: int = 0
    disaster: DisasterType | None = None


@dataclass(frozen=True)
class DinosaurCard:
    """A dinosaur's player board: its name and traits."""

    dinosaur: Dinosaur
    name: str
    traits: dict[DisasterType, int]


@dataclass(frozen=True)
class Catalogue:
    """Every card of the game by id, in deck order of the data file."""

    cards: dict[str, Card]
    main: tuple[str, ...]
    disasters: tuple[str, ...]
    dinosaurs: tuple[DinosaurCard, ...]

    def trait(self, dinosaur: Dinosaur, disaster: DisasterType) -> int:
        for board in self.dinosaurs:
            if board.dinosaur is dinosaur:
                return board.traits.get(disaster, 0)
        raise KeyError(dinosaur)


def _enum(tp: type[enum.Enum], raw: Any, where: str) -> Any:
    if not isinstance(raw, str) or raw not in tp.__members__:
        raise CardDataError(f"{where}: {raw!r} is not a {tp.__name__}")
    return tp[raw]


def _int(raw: Any, where: str, low: int, high: int) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not low <= raw <= high:
        raise CardDataError(f"{where}: {raw!r} is not an integer in {low}..{high}")
    return raw


def _str(raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise CardDataError(f"{where}: {raw!r} is not a non-empty string")
    return raw


def build_catalogue(cards_data: Any, dinosaurs_data: Any) -> Catalogue:
    """Validate the data files' contents and build the catalogue."""
    cards: dict[str, Card] = {}
    main: list[str] = []
    disasters: list[str] = []

    def add(card: Card, copies: int, into: list[str]) -> None:
        for i in range(1, copies + 1):
            card_id = f"{card.id}_{i}"
            if card_id in cards:
                raise CardDataError(f"duplicate card id {card_id!r}")
            cards[card_id] = Card(**{**card.__dict__, "id": card_id})
            into.append(card_id)

    counts = {"point": 0, "instant": 0, "disaster": 0}
    try:
        for row in cards_data["point"]:
            where = f"point card {row.get('id')!r}"
            effect = _enum(Effect, row["effect"], where)
            timing = _enum(Timing, row["timing"], where)
            if effect not in _SUPPORTED[timing]:
                raise CardDataError(f"{where}: effect {effect.name} with {timing.name}")
            copies = _int(row["copies"], where, 1, 20)
            counts["point"] += copies
            card = Card(
                id=_str(row["id"], where),
                name=_str(row["name"], where),
                kind=Kind.POINT,
                value=_int(row["value"], where, 0, 9),
                effect=effect,
                timing=timing,
            )
            add(card, copies, main)
        for row in cards_data["instant"]:
            where = f"instant card {row.get('id')!r}"
            copies = _int(row["copies"], where, 1, 20)
            counts["instant"] += copies
            card = Card(
                id=_str(row["id"], where),
                name=_str(row["name"], where),
                kind=Kind.INSTANT,
                instant=_enum(InstantEffect, row["effect"], where),
                amount=_int(row["amount"], where, 0, 9),
            )
            add(card, copies, main)
        for row in cards_data["disaster"]:
            where = f"disaster card {row.get('id')!r}"
            copies = _int(row["copies"], where, 1, 20)
            counts["disaster"] += copies
            card = Card(
                id=_str(row["id"], where),
                name=_str(row["name"], where),
                kind=Kind.DISASTER,
                disaster=_enum(DisasterType, row["type"], where),
            )
            add(card, copies, disasters)
        for kind, total in cards_data["totals"].items():
            if counts.get(kind) != total:
                raise CardDataError(
                    f"{kind} cards: {counts.get(kind)} listed, {total} expected"
                )
        boards = []
        for row in dinosaurs_data["dinosaurs"]:
            where = f"dinosaur {row.get('dinosaur')!r}"
            traits = {
                _enum(DisasterType, k, where): _int(v, where, -9, 9)
                for k, v in row["traits"].items()
            }
            boards.append(
                DinosaurCard(
                    dinosaur=_enum(Dinosaur, row["dinosaur"], where),
                    name=_str(row["name"], where),
                    traits=traits,
                )
            )
    except (KeyError, TypeError, AttributeError) as exc:
        raise CardDataError(f"malformed card data: {exc!r}") from exc
    if sorted(b.dinosaur.name for b in boards) != sorted(Dinosaur.__members__):
        raise CardDataError("every dinosaur needs exactly one player board")
    return Catalogue(cards, tuple(main), tuple(disasters), tuple(boards))


@functools.cache
def catalogue() -> Catalogue:
    """The game's cards and dinosaurs (loaded and validated once)."""
    package = resources.files(__package__)
    cards_data = json.loads((package / "cards.json").read_text(encoding="utf-8"))
    dinos = json.loads((package / "dinosaurs.json").read_text(encoding="utf-8"))
    return build_catalogue(cards_data, dinos)
