"""Dino Challenges on Footprint spaces."""

from __future__ import annotations

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DinoChallengeBegan,
    DinoChallengeTied,
    DinoChallengeWon,
    DinoMoved,
    DinoPushedBack,
    DinoWarped,
    DinoWentExtinct,
    EarthEventDrawn,
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
    after,
    first,
    rolls,
    steps_of,
    table,
    without_rolls,
)

# A Footprint space with room to come from and to be pushed back to.
FOOTPRINT = first(Space.FOOTPRINT, after=6)
CHALLENGE = RollPurpose.CHALLENGE


def test_landing_on_an_occupied_footprint_starts_a_dino_challenge() -> None:
    state = table(FOOTPRINT - 2, FOOTPRINT, dice=(2, 5, 3))

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events) == [
        DinoMoved(0, FOOTPRINT - 2, FOOTPRINT, Heading.FORWARD),
        DinoChallengeBegan(seat=0, step=FOOTPRINT, defenders=(1,)),
        DinoChallengeWon(seat=0, losers=(1,)),
        OverlayFlipped(seat=1, bones=1),
        DinoPushedBack(seat=1, from_step=FOOTPRINT, to_step=FOOTPRINT - 3),
        TurnPassed(seat=1),
    ]
    assert rolls(events)[1:] == [(0, 5, CHALLENGE), (1, 3, CHALLENGE)]


def test_the_highest_dino_power_number_wins_the_territory() -> None:
    state = table(FOOTPRINT - 2, FOOTPRINT, dice=(2, 5, 3))

    state = after(state, when(RULES, state, 0, RollDie()))

    assert state.dinos[0].step == FOOTPRINT
    assert state.dinos[0].bones == 0


def test_a_dino_that_loses_shows_a_bone_and_goes_back_by_its_own_roll() -> None:
    state = table(FOOTPRINT - 2, FOOTPRINT, dice=(2, 4, 6))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)

    assert DinoChallengeWon(seat=1, losers=(0,)) in events
    assert state.dinos[0].step == FOOTPRINT - 4
    assert state.dinos[0].bones == 1
    assert state.dinos[1].step == FOOTPRINT
    assert state.dinos[1].bones == 0


def test_a_tie_for_the_highest_roll_is_rolled_again() -> None:
    state = table(FOOTPRINT - 2, FOOTPRINT, dice=(2, 4, 4, 2, 5))

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events)[1:4] == [
        DinoChallengeBegan(seat=0, step=FOOTPRINT, defenders=(1,)),
        DinoChallengeTied(seats=(0, 1)),
        DinoChallengeWon(seat=1, losers=(0,)),
    ]
    assert rolls(events)[1:] == [
        (0, 4, CHALLENGE),
        (1, 4, CHALLENGE),
        (0, 2, CHALLENGE),
        (1, 5, CHALLENGE),
    ]
    # The loser goes back by the roll that lost, the re-roll.
    assert after(state, events).dinos[0].step == FOOTPRINT - 2


def test_ties_are_rolled_again_until_one_dino_is_highest() -> None:
    state = table(FOOTPRINT - 2, FOOTPRINT, dice=(2, 3, 3, 6, 6, 1, 1, 2, 1))

    events = when(RULES, state, 0, RollDie())

    tied = [e for e in events if isinstance(e, DinoChallengeTied)]
    assert len(tied) == 3
    assert DinoChallengeWon(seat=0, losers=(1,)) in events
    assert after(state, events).dinos[1].step == FOOTPRINT - 1


def test_only_the_dinos_tied_for_the_highest_roll_roll_again() -> None:
    state = table(FOOTPRINT - 2, FOOTPRINT, FOOTPRINT, dice=(2, 5, 5, 2, 3, 6))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)

    assert DinoChallengeTied(seats=(0, 1)) in events
    assert rolls(events)[4:] == [(0, 3, CHALLENGE), (1, 6, CHALLENGE)]
    assert DinoChallengeWon(seat=1, losers=(0, 2)) in events
    # Seat 2 lost on its first roll (2); seat 0 on its re-roll (3).
    assert state.dinos[2].step == FOOTPRINT - 2
    assert state.dinos[0].step == FOOTPRINT - 3


def test_every_dino_but_the_winner_loses_a_challenge_of_many() -> None:
    state = table(FOOTPRINT - 1, FOOTPRINT, FOOTPRINT, FOOTPRINT, dice=(1, 2, 3, 6, 1))

    events = when(RULES, state, 0, RollDie())
    state = after(state, events)

    assert DinoChallengeWon(seat=2, losers=(0, 1, 3)) in events
    assert [d.bones for d in state.dinos] == [1, 1, 0, 1]
    assert [d.step for d in state.dinos] == [
        FOOTPRINT - 2,
        FOOTPRINT - 3,
        FOOTPRINT,
        FOOTPRINT - 1,
    ]


def test_the_dinos_on_the_space_roll_clockwise_after_the_one_arriving() -> None:
    state = table(FOOTPRINT, 0, FOOTPRINT - 1, FOOTPRINT, turn=2, dice=(1, 6, 1, 1))

    events = when(RULES, state, 2, RollDie())

    assert DinoChallengeBegan(seat=2, step=FOOTPRINT, defenders=(3, 0)) in events
    assert [seat for seat, _, _ in rolls(events)[1:]] == [2, 3, 0]


def test_a_loser_does_not_face_the_space_it_is_pushed_back_to() -> None:
    # A Footprint space with an Earth Event a die's throw behind it.
    footprint, earth_event = next(
        (f, e)
        for f in steps_of(Space.FOOTPRINT)
        for e in steps_of(Space.EARTH_EVENT)
        if 0 < f - e <= 6 and f - 1 > 0
    )
    back = footprint - earth_event
    state = table(footprint - 1, footprint, dice=(1, back, 6))

    events = when(RULES, state, 0, RollDie())

    assert DinoPushedBack(0, footprint, earth_event) in events
    assert not any(isinstance(e, EarthEventDrawn) for e in events)
    assert events[-1] == TurnPassed(seat=1)


def test_a_loser_never_goes_back_past_the_prehistoric_era() -> None:
    footprint = first(Space.FOOTPRINT)
    state = table(0, footprint, dice=(footprint, 1, 6, 1, 6))

    events = when(RULES, state, 0, RollDie())

    assert DinoPushedBack(0, footprint, 0) in events


def test_a_loser_whose_skeleton_is_complete_goes_extinct_instead() -> None:
    overlays = CONTENT.life_card_overlays
    state = table(FOOTPRINT - 2, FOOTPRINT, bones={1: overlays - 1}, dice=(2, 6, 1))

    events = when(RULES, state, 0, RollDie())

    assert without_rolls(events)[3:] == [
        OverlayFlipped(seat=1, bones=overlays),
        DinoWentExtinct(seat=1, from_step=FOOTPRINT),
        TurnPassed(seat=1),
    ]
    assert after(state, events).dinos[1].step == 0


def test_dinos_share_an_earth_event_space_without_a_challenge() -> None:
    earth_event = first(Space.EARTH_EVENT)
    state = table(earth_event - 1, earth_event, dice=(1, 6))

    events = when(RULES, state, 0, RollDie())

    assert not any(isinstance(e, DinoChallengeBegan) for e in events)
    assert after(state, events).dinos[0].step == earth_event


def test_dinos_share_a_no_bones_on_me_space_without_a_challenge() -> None:
    no_bones = first(Space.NO_BONES_ON_ME)
    state = table(no_bones - 1, no_bones, bones={0: 1}, dice=(1,))

    events = when(RULES, state, 0, RollDie())

    assert not any(isinstance(e, DinoChallengeBegan) for e in events)
    assert LifeCardRecharged(seat=0) in events


def test_a_loser_pushed_back_onto_a_time_warp_does_not_travel() -> None:
    warp = first(Space.TIME_WARP)
    footprint = warp + 1
    assert CONTENT.spaces[footprint] is Space.FOOTPRINT
    state = table(warp, footprint, dice=(1, 1, 6))

    events = when(RULES, state, 0, RollDie())

    assert DinoPushedBack(0, footprint, warp) in events
    assert not any(isinstance(e, DinoWarped) for e in events)
    assert after(state, events).dinos[0].step == warp
