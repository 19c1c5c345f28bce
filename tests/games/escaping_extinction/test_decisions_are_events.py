"""The fold only folds: the launch and the Meteor hitting Earth are decided
in ``decide`` and recorded as events (rules version 2); rules version 1, for
the games created under it, records neither and its fold still works them
out."""

from __future__ import annotations

from typing import Any

from domain.chance import Rng
from domain.escaping_extinction import RULES, RULES_V1
from domain.escaping_extinction.model import (
    ActionKind,
    ActionTaken,
    DinoTravelled,
    EndTurn,
    MeteorHitEarth,
    MeteorMoved,
    RocketLaunched,
    Travel,
    TravelMode,
    TurnBegan,
    TurnEnded,
)
from domain.escaping_extinction.rules import the_end
from tests.gamekit import given, when
from tests.games.escaping_extinction.helpers import (
    LONG_NECK,
    METEOR,
    TERRY,
    launch_ready,
    setup,
    table,
    top,
)

TRAVEL_HOME = Travel(TERRY, 0, TravelMode.WALK)


def before_the_last_meteor_card() -> list[Any]:
    """The Meteor on space 8, a Fireball (+2) on top, Long Neck's turn."""
    return [
        *setup(meteor=top("fireball_1", deck=METEOR)),
        MeteorMoved(0, 8),
        TurnEnded(TERRY),
        TurnBegan(LONG_NECK, 1),
    ]


def test_the_launch_is_decided_and_recorded_as_rocket_launched() -> None:
    state = table(launch_ready(8), players=4)

    events = when(RULES, state, 0, TRAVEL_HOME)

    assert events == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 3, 0, TravelMode.WALK, 1),
        RocketLaunched(),
    ]


def test_the_last_dino_coming_home_does_not_launch_the_rocket_in_the_fold() -> None:
    events = [*launch_ready(8), DinoTravelled(TERRY, 3, 0, TravelMode.WALK, 1)]

    state = table(events, players=4)

    assert not RULES.is_terminal(state)
    assert RULES.is_terminal(RULES.evolve(state, RocketLaunched()))


def test_the_meteor_reaching_earth_is_recorded_as_meteor_hit_earth() -> None:
    state = table(before_the_last_meteor_card())

    events = when(RULES, state, 0, EndTurn(LONG_NECK))

    assert events[-2:] == [MeteorMoved(8, 10), MeteorHitEarth()]


def test_the_meteor_moving_onto_earth_does_not_end_the_game_in_the_fold() -> None:
    state = table([*before_the_last_meteor_card(), MeteorMoved(8, 10)])

    assert state.meteor == 10 and not RULES.is_terminal(state)
    after = RULES.evolve(state, MeteorHitEarth())
    assert RULES.outcome(after).result == "meteor_hit_earth"


def test_once_the_game_is_over_nothing_more_ends_it() -> None:
    lost = table([*before_the_last_meteor_card(), MeteorMoved(8, 10), MeteorHitEarth()])
    assert the_end(lost, MeteorMoved(10, 10)) is None


def test_rules_version_one_records_no_launch_and_its_fold_launches() -> None:
    events = launch_ready(8)
    state = given(RULES_V1, 4, events)

    new = RULES_V1.decide(state, 0, TRAVEL_HOME, Rng("v1", 0))
    for event in new:
        state = RULES_V1.evolve(state, event)

    assert new == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 3, 0, TravelMode.WALK, 1),
    ]
    assert RULES_V1.is_terminal(state)
    assert RULES_V1.outcome(state).winners == (0, 1, 2, 3)


def test_rules_version_one_records_no_meteor_hit_and_its_fold_loses() -> None:
    state = given(RULES_V1, 1, before_the_last_meteor_card())

    new = RULES_V1.decide(state, 0, EndTurn(LONG_NECK), Rng("v1", 0))
    for event in new:
        state = RULES_V1.evolve(state, event)

    assert new[-1] == MeteorMoved(8, 10)
    assert RULES_V1.outcome(state).result == "meteor_hit_earth"


def test_the_versions_are_registered_and_the_current_one_is_two() -> None:
    assert (RULES.rules_version, RULES_V1.rules_version) == ("3", "1")
    assert RULES.cooperative and RULES_V1.cooperative
