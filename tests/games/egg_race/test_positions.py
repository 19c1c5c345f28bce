"""Egg Race from a position (admin scenario): a race in progress.

Given/when/then for what a position sets, its refusals (each naming the
field that is wrong), what players see of it, and random play from it."""

from __future__ import annotations

from typing import Any

import pytest

from domain.chance import Rng
from domain.rules import Viewer
from tests.adding_a_game.egg_race import RULES
from tests.adding_a_game.egg_race.model import (
    NestDrawn,
    Options,
    Position,
    RollDie,
    Scenario,
)
from tests.gamekit import assert_hidden_alike, assert_position_plays, new_game, refusal


def start(position: Position, rolls: tuple[int, ...] = ()) -> Any:
    state, events = new_game(
        RULES, len(position.scores), "pos", scenario=Scenario(rolls, position)
    )
    return state, events


def test_a_position_sets_the_scores_the_turn_and_the_nests() -> None:
    state, events = start(Position(scores=(10, 3), turn=1, nests=(2, 3)))
    assert state.game.scores == (10, 3)
    assert RULES.active_seats(state.game) == {1}
    assert [e for e in events if isinstance(e, NestDrawn)] == [
        NestDrawn(0, 2),
        NestDrawn(1, 3),
    ]


def test_a_score_near_the_target_wins_on_its_next_roll() -> None:
    # Given seat 0 at 10 of 12, to roll; when it rolls a 2, it has won.
    state, _ = start(Position(scores=(10, 3), turn=0), rolls=(2,))
    events, game = RULES.decide_and_evolve(state.game, 0, RollDie(), Rng("pos", 9))
    assert game.winner == 0 and RULES.is_terminal(game), events


@pytest.mark.parametrize(
    ("position", "field"),
    [
        (Position(scores=(1,), turn=0), "scores"),
        (Position(scores=(1, 12), turn=0), "scores[1]"),
        (Position(scores=(-1, 0), turn=0), "scores[0]"),
        (Position(scores=(1, 2), turn=2), "turn"),
        (Position(scores=(1, 2), nests=(1,)), "nests"),
        (Position(scores=(1, 2), nests=(1, 4)), "nests[1]"),
    ],
)
def test_a_broken_position_is_refused_naming_its_field(
    position: Position, field: str
) -> None:
    refused = refusal(RULES, 2, Scenario(position=position))
    assert refused is not None
    assert (refused.reason, refused.field) == ("POSITION_INVALID", f"position.{field}")


def test_the_target_of_the_options_bounds_the_scores() -> None:
    position = Position(scores=(14, 0))
    assert refusal(RULES, 2, Scenario(position=position)) is not None
    assert (
        refusal(RULES, 2, Scenario(position=position), options=Options(target=20))
        is None
    )


def test_the_other_seats_nests_are_hidden_from_players_and_spectators() -> None:
    assert_hidden_alike(
        RULES,
        3,
        Position(scores=(0, 0, 0), nests=(1, 2, 3)),
        Position(scores=(0, 0, 0), nests=(1, 3, 1)),
        [Viewer.spectator(), Viewer.player(0)],
    )
    shown = RULES.redact_position(Position((4, 5), 1, (2, 3)), Viewer.player(1))
    assert shown == Position((4, 5), 1, (0, 3))


@pytest.mark.parametrize("players", [2, 3])
def test_games_from_positions_play_replay_and_show_each_viewer_its_part(
    players: int,
) -> None:
    # Its messages exist when the toy is registered (tests/extra_games.py).
    egg_race_pb2 = pytest.importorskip("strata.games.egg_race.v1.egg_race_pb2")
    for i, turn in enumerate(range(players)):
        position = Position(
            scores=tuple((3 * s + i) % 11 for s in range(players)),
            turn=turn,
            nests=tuple(1 + (s + i) % 3 for s in range(players)) if i % 2 else (),
        )
        assert_position_plays(
            RULES, egg_race_pb2, players, Scenario(position=position), f"pos-{i}"
        )


def break_readme_example(data: dict[str, Any]) -> str:
    """Break the README's example position (proto JSON) in one field: a
    score at the target. The path of that field (the end-to-end tests check
    the service names it)."""
    data["scores"][0] = 12
    return "scores[0]"
