"""No Bones on Me, Earth Events and extinction."""

from __future__ import annotations

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    Dino,
    DinoMoved,
    DinoWentExtinct,
    EarthEventDrawn,
    EarthEventSurvived,
    Heading,
    LifeCardRecharged,
    OverlayFlipped,
    RollDie,
    RollPurpose,
    TurnPassed,
)
from tests.gamekit import when
from tests.games.dinosaurs_extinct.helpers import (
    CONTENT,
    DECK,
    after,
    first,
    rolls,
    table,
    without_rolls,
)

NO_BONES = first(Space.NO_BONES_ON_ME)
EARTH_EVENT = first(Space.EARTH_EVENT)
TOP = CONTENT.card(DECK[0])
# A card the die can only beat with a 6, put on top of the stack.
HARDEST = max(CONTENT.earth_events, key=lambda card: card.number)
HARD_DECK = (HARDEST.id, *(i for i in DECK if i != HARDEST.id))


def test_no_bones_on_me_closes_every_overlay() -> None:
    state = table(NO_BONES - 1, 0, bones={0: 2}, dice=(1,))

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events) == [
        DinoMoved(0, NO_BONES - 1, NO_BONES, Heading.FORWARD),
        LifeCardRecharged(seat=0),
        TurnPassed(seat=1),
    ]
    assert after(state, events).dinos[0] == Dino(step=NO_BONES, bones=0)


def test_passing_over_no_bones_on_me_does_not_recharge() -> None:
    state = table(NO_BONES - 1, 0, bones={0: 1}, dice=(2,))

    events = when(RULES, state, 0, RollDie())

    assert LifeCardRecharged(seat=0) not in events
    assert after(state, events).dinos[0].bones == 1


def test_an_earth_event_is_survived_by_rolling_higher_than_its_number() -> None:
    state = table(EARTH_EVENT - 1, 0, dice=(1, TOP.number + 1))

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events) == [
        DinoMoved(0, EARTH_EVENT - 1, EARTH_EVENT, Heading.FORWARD),
        EarthEventDrawn(seat=0, card=TOP.id, name=TOP.name, number=TOP.number),
        EarthEventSurvived(seat=0, card=TOP.id),
        TurnPassed(seat=1),
    ]
    assert rolls(events)[1] == (0, TOP.number + 1, RollPurpose.EARTH_EVENT)
    assert after(state, events).dinos[0].bones == 0


def test_rolling_the_earth_event_number_weakens_the_dino() -> None:
    state = table(EARTH_EVENT - 1, 0, dice=(1, HARDEST.number), deck=HARD_DECK)

    events = when(RULES, state, 0, RollDie())

    assert OverlayFlipped(seat=0, bones=1) in events
    assert EarthEventSurvived(seat=0, card=HARDEST.id) not in events
    assert after(state, events).dinos[0] == Dino(step=EARTH_EVENT, bones=1)


def test_rolling_lower_than_the_earth_event_number_weakens_the_dino() -> None:
    state = table(EARTH_EVENT - 1, 0, bones={0: 1}, dice=(1, 1), deck=HARD_DECK)

    events = when(RULES, state, 0, RollDie())

    assert OverlayFlipped(seat=0, bones=2) in events
    assert after(state, events).dinos[0] == Dino(step=EARTH_EVENT, bones=2)


def test_the_used_earth_event_card_goes_to_the_bottom_of_the_stack() -> None:
    state = table(EARTH_EVENT - 1, 0, dice=(1, 6))

    events = when(RULES, state, 0, RollDie())

    assert after(state, events).earth_deck == (*DECK[1:], DECK[0])


def test_the_next_earth_event_is_the_next_card_of_the_stack() -> None:
    state = table(EARTH_EVENT - 1, EARTH_EVENT - 1, dice=(1, 6, 1, 6))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)
    more = when(RULES, state, 1, RollDie())

    drawn = [e.card for e in events + more if isinstance(e, EarthEventDrawn)]
    assert drawn == [DECK[0], DECK[1]]


def test_a_complete_skeleton_sends_the_dino_back_to_the_prehistoric_era() -> None:
    overlays = CONTENT.life_card_overlays
    state = table(
        EARTH_EVENT - 1, 0, bones={0: overlays - 1}, dice=(1, 1), deck=HARD_DECK
    )

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events)[-3:] == [
        OverlayFlipped(seat=0, bones=overlays),
        DinoWentExtinct(seat=0, from_step=EARTH_EVENT),
        TurnPassed(seat=1),
    ]
    # Back on the start with every overlay closed, to start once again.
    assert after(state, events).dinos[0] == Dino(step=0, bones=0)


def test_a_footprint_space_nobody_else_stands_on_is_simply_enjoyed() -> None:
    footprint = first(Space.FOOTPRINT)
    state = table(footprint - 1, footprint + 1, dice=(1,))

    events = when(RULES, state, 0, RollDie())

    assert len(rolls(events)) == 1
    assert after(state, events).dinos[0] == Dino(step=footprint, bones=0)
