"""Small helpers of the table's words, as the web table's ``dom.js`` has them:
enum names in words, a card's base id, a list in words; and what a game's
describer is given (:class:`Ctx`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

#: A game's view, command or event as the API's JSON has it (camelCase
#: names, enums by name, defaults left out): what the web page reads too.
Json = dict[str, Any]


def enum_words(value: Any, prefix: str = "") -> str:
    """``DINOSAUR_NERVOUS_REX`` (prefix ``DINOSAUR_``) -> ``Nervous rex``."""
    text = str(value or "")
    if prefix and text.startswith(prefix):
        text = text[len(prefix) :]
    text = text.lower().replace("_", " ")
    return text[:1].upper() + text[1:]


def base_id(card: Any) -> str:
    """The base id of a physical card: ``pet_rock_3`` -> ``pet_rock``."""
    return re.sub(r"_\d+$", "", str(card or ""))


def words(items: Iterable[str]) -> str:
    """A list in words: ``["a", "b", "c"]`` -> ``a, b and c``."""
    listed = list(items)
    if not listed:
        return "nobody"
    if len(listed) == 1:
        return listed[0]
    return f"{', '.join(listed[:-1])} and {listed[-1]}"


def seat_of(value: Any) -> int:
    """A seat number from the JSON (absent is 0, a map key is a string)."""
    return int(value or 0)


@dataclass(frozen=True)
class Ctx:
    """What a game's describer reads: the game and its view as JSON, the
    game's content (card names), the viewer's seats and how to name a seat."""

    game: Json
    view: Json
    content: Json
    you: list[int]
    who: Callable[[int], str]
    name: Callable[[int], str]
    actions: list[Json] = field(default_factory=list)

    def is_you(self, seat: int) -> bool:
        return seat in self.you
