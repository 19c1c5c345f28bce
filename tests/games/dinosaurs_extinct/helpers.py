"""Shared givens for the Dinosaurs Extinct? rules tests: set Dinos on steps,
fix the dice, look up steps by what they are (so a new board layout in the
data file needs no change here)."""

from __future__ import annotations

from typing import Any

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DieRolled,
    DinoMoved,
    EarthEventsShuffled,
    Heading,
    OverlayFlipped,
    RollPurpose,
    Scenario,
    State,
    TurnPassed,
)
from tests.gamekit import given

CONTENT = RULES.content
FINISH = CONTENT.finish
LAST_NO_BONES = CONTENT.last_no_bones
# The stack in id order: card 1 (the lowest number) on top.
DECK = tuple(card.id for card in CONTENT.earth_events)


def steps_of(space: Space) -> list[int]:
    """Every step of the board that is ``space``, in order."""
    return [i for i, s in enumerate(CONTENT.spaces) if s is space]


def first(space: Space, after: int = 0) -> int:
    """The first step after ``after`` that is ``space``."""
    return next(i for i in steps_of(space) if i > after)


def table(
    *steps: int,
    bones: dict[int, int] | None = None,
    turn: int = 0,
    dice: tuple[int, ...] = (),
    deck: tuple[int, ...] = DECK,
) -> State:
    """A game of ``len(steps)`` players with Dino ``seat`` on ``steps[seat]``,
    the given bones showing, ``turn`` to play and the next die results fixed."""
    events: list[Any] = [EarthEventsShuffled(order=deck, cards=len(deck))]
    for seat, step in enumerate(steps):
        if step:
            events.append(DinoMoved(seat, 0, step, Heading.FORWARD))
    for seat, count in (bones or {}).items():
        if count:
            events.append(OverlayFlipped(seat=seat, bones=count))
    if turn:
        events.append(TurnPassed(seat=turn))
    state: State = given(RULES, len(steps), events, scenario=Scenario(dice=dice))
    return state


def rolls(events: list[Any]) -> list[tuple[int, int, RollPurpose]]:
    """(seat, value, purpose) of every die rolled in ``events``."""
    return [(e.seat, e.value, e.purpose) for e in events if isinstance(e, DieRolled)]


def after(state: State, events: list[Any]) -> State:
    """The state once ``events`` are folded in."""
    for event in events:
        state = RULES.evolve(state, event)
    return state


def without_rolls(events: list[Any]) -> list[Any]:
    """``events`` without the ``DieRolled`` ones, to read what happened."""
    return [e for e in events if not isinstance(e, DieRolled)]
