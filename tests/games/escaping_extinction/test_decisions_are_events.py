"""The fold only folds: the launch and the Meteor hitting Earth are decided
in ``decide`` and recorded as events (rules version 2); rules version 1, for
the games created under it, records neither and its fold still works them
out. Likewise a turn for healing only, a returned token's resource and what
an Earthquake returns (rules version 4): rules version 3 leaves them out of
its events and its fold works them out."""

from __future__ import annotations

from typing import Any

from domain.chance import Rng
from domain.escaping_extinction import RULES, RULES_V1, RULES_V3
from domain.escaping_extinction.model import (
    ActionKind,
    ActionTaken,
    DinoTravelled,
    EarthquakeStruck,
    EndTurn,
    LavaFlowPlaced,
    MeteorHitEarth,
    MeteorMoved,
    Resource,
    ResourceGained,
    RocketLaunched,
    Travel,
    TravelMode,
    TurnBegan,
    TurnEnded,
)
from domain.escaping_extinction.readings import the_end
from tests.gamekit import given, when
from tests.games.escaping_extinction.helpers import (
    LONG_NECK,
    METEOR,
    REX,
    TERRY,
    began,
    injure,
    launch_ready,
    reveal,
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
        began(LONG_NECK, 1),
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


def test_the_versions_are_registered_and_the_current_one_is_four() -> None:
    assert (RULES.rules_version, RULES_V1.rules_version) == ("4", "1")
    assert RULES.cooperative and RULES_V1.cooperative


def test_rules_version_three_leaves_the_turns_healing_unrecorded_and_folds_it() -> None:
    events = [*setup(), ResourceGained(REX, Resource.VINE), injure(REX)]
    state = given(RULES_V3, 1, events)

    new = RULES_V3.decide(state, 0, EndTurn(TERRY), Rng("v3", 0))
    for event in new:
        state = RULES_V3.evolve(state, event)

    assert new == [TurnEnded(TERRY), TurnBegan(REX, 1, 2, None)]
    # As version 3's fold did: the Injured Rex's turn is for healing first.
    assert state.waiting_to_heal and state.turn_open
    assert RULES_V3.active_seats(state) == {0}


def test_rules_version_three_leaves_an_earthquakes_returns_unrecorded() -> None:
    events = [
        *setup(meteor=top("earthquake_1", deck=METEOR)),
        reveal(5),
        LavaFlowPlaced(5),
        TurnEnded(TERRY),
        began(LONG_NECK, 1),
    ]
    state = given(RULES_V3, 1, events)
    wood, lava = state.supply.wood, state.supply.lava_flows

    new = RULES_V3.decide(state, 0, EndTurn(LONG_NECK), Rng("v3", 0))
    for event in new:
        state = RULES_V3.evolve(state, event)

    quake = next(e for e in new if isinstance(e, EarthquakeStruck))
    assert quake.returned is None
    assert (state.supply.wood, state.supply.lava_flows) == (wood + 1, lava + 1)
