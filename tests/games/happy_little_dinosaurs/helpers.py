"""Shared set-ups for the Happy Little Dinosaurs rules tests.

A table is set with a scenario (the deal, the deck tops) through the real
start of a game; ``given`` then folds those events, and ``act`` plays
commands one by one with ``when``, folding their events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.content import Dinosaur, catalogue
from domain.happy_little_dinosaurs.model import (
    Command,
    DeckOrder,
    Hand,
    Options,
    PassInstant,
    Phase,
    PlayPointCard,
    Scenario,
    State,
)
from domain.rules import Viewer
from domain.session import LIFECYCLE_EVENTS
from tests.gamekit import given, new_game, when


def table(
    hands: Sequence[Sequence[str]],
    deck: Sequence[str] = (),
    disasters: Sequence[str] = ("meteor_1",),
    dinosaurs: Sequence[Dinosaur] = (),
    reshuffles: Sequence[Sequence[str]] = (),
) -> State:
    """The first round of a game dealt ``hands`` (five cards each), the Main
    deck starting with ``deck`` and the Disaster deck with ``disasters``."""
    scenario = Scenario(
        hands=tuple(Hand(tuple(h)) for h in hands),
        main_deck=tuple(deck),
        disaster_deck=tuple(disasters),
        reshuffles=tuple(DeckOrder(tuple(r)) for r in reshuffles),
    )
    options = Options(dinosaurs=tuple(dinosaurs))
    _, events = new_game(RULES, len(hands), "table", options, scenario)
    game_events = [e for e in events if not isinstance(e, LIFECYCLE_EVENTS)]
    state: State = given(RULES, len(hands), game_events, options, scenario)
    return state


def act(state: State, seat: int, command: Command) -> tuple[State, list[Any]]:
    """``seat`` sends ``command``: the new state and the events."""
    events = when(RULES, state, seat, command)
    for event in events:
        state = RULES.evolve(state, event)
    return state, events


def commit(state: State, cards: dict[int, str]) -> tuple[State, list[Any]]:
    """Every seat in ``cards`` plays that Point card face down."""
    out: list[Any] = []
    for seat, card in cards.items():
        state, events = act(state, seat, PlayPointCard(card))
        out += events
    return state, out


def pass_all(state: State) -> tuple[State, list[Any]]:
    """Everyone passes in the scoring window until it closes."""
    out: list[Any] = []
    while state.phase is Phase.SCORING:
        seat = min(RULES.active_seats(state))
        state, events = act(state, seat, PassInstant())
        out += events
    return state, out


def of_type(events: Sequence[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def card_value(card: str) -> int:
    return catalogue().cards[card].value


PLAIN = tuple(
    f"{name}_{i}"
    for name in ("handy_pan", "grave_maker", "bonehead", "run_home_bat", "bow_and_dino")
    for i in range(1, 5)
)


def deal(*hands: Sequence[str]) -> list[list[str]]:
    """Hands of five: each listed hand topped up with plain Point cards
    (no effect) that no hand lists."""
    listed = {c for h in hands for c in h}
    spare = [c for c in PLAIN if c not in listed]
    out = []
    for h in hands:
        need = 5 - len(h)
        out.append([*h, *spare[:need]])
        spare = spare[need:]
    return out


def inversion_to_play() -> State:
    """The rulebook's Score Inversion example: seats 0 and 1 tied lowest on
    3, seat 2 highest on 9, in the scoring window; seat 0 holds a Score
    Inversion."""
    state = table(
        deal(
            ["grave_maker_1", "score_inversion_1"],
            ["grave_maker_2"],
            ["meteor_cannon_1"],
        )
    )
    state, _ = commit(
        state, {0: "grave_maker_1", 1: "grave_maker_2", 2: "meteor_cannon_1"}
    )
    return state


def redacted(event: Any, viewer: Viewer) -> Any:
    """``event`` as ``viewer`` receives it."""
    return RULES.redact(event, viewer)
