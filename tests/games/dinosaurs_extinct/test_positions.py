"""Starting from a position (admin scenario): a race in progress.

Given/when/then for the rule situations a position reaches at once, the
refusals (each naming the field that is wrong), what players see of it,
and a property test over random positions, valid and broken."""

from __future__ import annotations

from typing import Any

import pytest
from strata.games.dinosaurs_extinct.v1 import dinosaurs_extinct_pb2

from domain.chance import Rng
from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DinoEnteredTwentyFirstCentury,
    DinoMoved,
    DinoPosition,
    DinoWentExtinct,
    Heading,
    Phase,
    Position,
    RollDie,
    Scenario,
    State,
)
from domain.rules import Viewer
from domain.session import SessionState, Status
from tests.gamekit import (
    RANDOM_SEEDS,
    assert_hidden_alike,
    assert_position_plays,
    check_random_positions,
    new_game,
    refusal,
    when,
)
from tests.games.dinosaurs_extinct.helpers import CONTENT, DECK, FINISH, first
from tests.games.dinosaurs_extinct.test_random_play import check_invariants

LAST_STEP = FINISH - 1


def start(
    position: Position, dice: tuple[int, ...] = ()
) -> tuple[SessionState[State], list[Any]]:
    players = len(position.dinos)
    return new_game(RULES, players, "pos", scenario=Scenario(dice, (), position))


def test_a_position_sets_every_dino_the_turn_and_the_stack() -> None:
    position = Position(
        dinos=(DinoPosition(LAST_STEP - 1, 0), DinoPosition(12, 2)),
        turn=1,
        earth_deck=tuple(reversed(DECK)),
        last_earth_event=DECK[0],  # drawn last: at the bottom
    )
    state, _ = start(position)
    game = state.game
    assert state.status is Status.ACTIVE
    assert [(d.step, d.bones) for d in game.dinos] == [(LAST_STEP - 1, 0), (12, 2)]
    assert game.turn == 1 and game.phase is Phase.ROLL
    assert game.earth_deck == tuple(reversed(DECK))
    assert game.last_earth_event == DECK[0]
    assert RULES.active_seats(game) == {1}


def test_given_an_alive_dino_one_step_from_the_finish_when_it_rolls_then_it_wins() -> (
    None
):
    position = Position(dinos=(DinoPosition(LAST_STEP, 0), DinoPosition(3, 0)))
    state, _ = start(position, dice=(4,))
    events = when(RULES, state.game, 0, RollDie())
    assert DinoEnteredTwentyFirstCentury(0, LAST_STEP, FINISH) in events


def test_given_bones_showing_before_the_finish_a_dino_may_not_enter() -> None:
    # On the last "No Bones on Me" with a bone showing, a Dino heads on; a
    # roll past the finish stops it just before, outside the 21st Century.
    last_no_bones = CONTENT.last_no_bones
    position = Position(dinos=(DinoPosition(last_no_bones, 1), DinoPosition(3, 0)))
    state, _ = start(position, dice=(6, 6, 6, 6))
    events = when(RULES, state.game, 0, RollDie())
    assert DinoMoved(0, last_no_bones, LAST_STEP, Heading.FORWARD) in events
    assert not any(isinstance(e, DinoEnteredTwentyFirstCentury) for e in events)


def test_given_a_dino_one_overlay_from_extinction_on_an_earth_event_it_can_die() -> (
    None
):
    # A Dino two bones down lands on an Earth Event and fails its roll.
    earth = first(Space.EARTH_EVENT, 1)
    position = Position(
        dinos=(
            DinoPosition(earth - 1, CONTENT.life_card_overlays - 1),
            DinoPosition(0),
        ),
        earth_deck=tuple(sorted(DECK, key=lambda c: -CONTENT.card(c).number)),
    )
    state, _ = start(position, dice=(1, 1))
    events = when(RULES, state.game, 0, RollDie())
    assert [e.seat for e in events if isinstance(e, DinoWentExtinct)] == [0]


BROKEN = [
    (Position(dinos=(DinoPosition(0),)), "position.dinos"),
    (Position(dinos=(DinoPosition(FINISH), DinoPosition(0))), "position.dinos[0].step"),
    (Position(dinos=(DinoPosition(0), DinoPosition(-1))), "position.dinos[1].step"),
    (
        Position(dinos=(DinoPosition(0), DinoPosition(2, CONTENT.life_card_overlays))),
        "position.dinos[1].bones",
    ),
    (Position(dinos=(DinoPosition(0), DinoPosition(0)), turn=2), "position.turn"),
    (
        Position(
            dinos=(DinoPosition(0), DinoPosition(0)), earth_deck=(1, 1, *DECK[2:])
        ),
        "position.earth_deck",
    ),
    (
        Position(dinos=(DinoPosition(0), DinoPosition(0)), earth_deck=DECK[1:]),
        "position.earth_deck",
    ),
    (
        Position(dinos=(DinoPosition(0), DinoPosition(0)), last_earth_event=99),
        "position.last_earth_event",
    ),
    (  # the card drawn last went to the bottom of the stack
        Position(
            dinos=(DinoPosition(0), DinoPosition(0)),
            earth_deck=DECK,
            last_earth_event=DECK[0],
        ),
        "position.last_earth_event",
    ),
]


def test_the_card_drawn_last_is_shuffled_to_the_bottom_of_the_stack() -> None:
    position = Position(dinos=(DinoPosition(0), DinoPosition(0)), last_earth_event=5)
    game = start(position)[0].game
    assert game.earth_deck[-1] == 5 and sorted(game.earth_deck) == sorted(DECK)


@pytest.mark.parametrize(("position", "field"), BROKEN)
def test_a_broken_position_is_refused_naming_its_field(
    position: Position, field: str
) -> None:
    error = refusal(RULES, 2, Scenario(position=position))
    assert error is not None and error.field == field
    assert error.reason == "POSITION_INVALID"


def test_a_position_with_the_scenarios_own_stack_is_refused() -> None:
    scenario = Scenario(
        earth_events=DECK, position=Position(dinos=(DinoPosition(0), DinoPosition(0)))
    )
    error = refusal(RULES, 2, scenario)
    assert error is not None and error.field == "earth_events"


def test_players_see_the_position_without_the_stacks_order() -> None:
    position = Position(
        dinos=(DinoPosition(5, 1), DinoPosition(9, 0)), earth_deck=DECK, turn=1
    )
    shown = RULES.redact_position(position, Viewer.player(0))
    assert shown.earth_deck == () and shown.dinos == position.dinos
    assert RULES.redact_position(position, Viewer.admin()) == position
    played = assert_position_plays(
        RULES, dinosaurs_extinct_pb2, 2, Scenario(position=position), "seen"
    )
    assert played.state.game.earth_deck  # the stack is there, only hidden


def random_position(rng: Rng, players: int) -> Position:
    """A position, valid most of the time, with now and then one value a
    little out of range."""

    def value(low: int, high: int) -> int:
        if rng.roll(12) == 1:
            return rng.choice([low - 1, high + 1])
        return rng.roll(high - low + 1) - 1 + low

    deck = rng.shuffled(DECK) if rng.roll(2) == 1 else ()
    if deck and rng.roll(12) == 1:
        deck = deck[1:]
    return Position(
        dinos=tuple(
            DinoPosition(value(0, LAST_STEP), value(0, CONTENT.life_card_overlays - 1))
            for _ in range(players)
        ),
        turn=value(0, players - 1),
        earth_deck=deck,
        last_earth_event=rng.choice([None, *DECK]),
    )


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_positions_start_and_play_or_are_refused_with_a_reason(
    players: int,
) -> None:
    refused, played = check_random_positions(
        RULES,
        dinosaurs_extinct_pb2,
        players,
        lambda rng, _: Scenario(position=random_position(rng, players)),
        max(RANDOM_SEEDS // 10, 10),
        check_each_step=check_invariants,
    )
    assert refused and played  # both kinds were tried


def break_readme_example(data: dict[str, Any]) -> str:
    """Break the README's example position (proto JSON) in one field: a
    Dino in the 21st Century. The path of that field (the end-to-end tests
    check the service names it)."""
    data["dinos"][0]["step"] = FINISH
    return "dinos[0].step"


def test_the_stacks_order_is_hidden_from_players_and_spectators() -> None:
    dinos = (DinoPosition(5, 1), DinoPosition(9))
    assert_hidden_alike(
        RULES,
        2,
        Position(dinos=dinos, earth_deck=DECK),
        Position(dinos=dinos, earth_deck=tuple(reversed(DECK))),
        [Viewer.spectator(), Viewer.player(0), Viewer.player(1)],
    )
