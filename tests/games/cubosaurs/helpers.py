"""Helpers for the Cubosaurs tests: cards by kind, deals, known states."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.cubosaurs import RULES
from domain.cubosaurs.content import CARDS, TILE_COUNT, Kind
from domain.cubosaurs.model import CardList, CubosaursState, Options, RoundDealt
from tests.gamekit import given

ADVANCED = Options(advanced=True)


def plain(kind: Kind, n: int = 0) -> int:
    """The ``n``-th card of ``kind`` without the DNA symbol."""
    return [c.id for c in CARDS if c.kind is kind and not c.dna][n]


def dna(kind: Kind, n: int = 0) -> int:
    """The ``n``-th card of ``kind`` with the DNA symbol."""
    return [c.id for c in CARDS if c.kind is kind and c.dna][n]


def dealt(
    collections: Sequence[Sequence[int]],
    deck: Sequence[int],
    *,
    round: int = 1,
    first: int = 0,
    direction: int = 1,
    offer: Sequence[int] = (),
) -> RoundDealt:
    """A deal of these collections and this deck; every other card out of play."""
    used = {c for cl in collections for c in cl} | set(deck)
    out = tuple(c for c in range(len(CARDS)) if c not in used)
    return RoundDealt(
        round=round,
        first_seat=first,
        direction=direction,
        collections=tuple(CardList(tuple(c)) for c in collections),
        deck=tuple(deck),
        deck_size=len(deck),
        out_of_play=out,
        out_of_play_size=len(out),
        offer=tuple(offer),
        box=tuple(t for t in range(TILE_COUNT) if t not in offer) if offer else (),
    )


def state(players: int, *events: Any, options: Options | None = None) -> CubosaursState:
    """The game state after ``events`` (game events only)."""
    result: CubosaursState = given(RULES, players, events, options)
    return result


def fold(before: CubosaursState, events: Sequence[Any]) -> CubosaursState:
    """The state after ``events``, from ``before``."""
    for event in events:
        before = RULES.evolve(before, event)
    return before
