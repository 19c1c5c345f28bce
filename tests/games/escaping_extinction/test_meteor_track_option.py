"""The difficulty option: a longer Meteor track (``meteor_track_length``;
0, the default, is the rulebook's 10 spaces)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from domain.bots import HEURISTIC, bot_for, bot_move, bot_rng
from domain.chance import Rng
from domain.errors import InvalidCommand
from domain.escaping_extinction import RULES
from domain.escaping_extinction.content import CONTENT
from domain.escaping_extinction.model import (
    MeteorMoved,
    Options,
    Position,
    Scenario,
    State,
)
from domain.escaping_extinction.readings import the_end
from domain.rules import GameConfig, Viewer
from domain.session import Session
from tests.gamekit import new_game, refusal


def _config(track: int) -> GameConfig[State]:
    return GameConfig(2, "track", Options(meteor_track_length=track), None)


def test_the_default_track_is_the_rulebooks() -> None:
    assert Options().meteor_track_length == 0
    state = RULES.initial_state(_config(0))
    assert state.earth == CONTENT.track_length == 10
    assert RULES.view(state, Viewer.player(0)).meteor_track_length == 10


@pytest.mark.parametrize("track", [-1, 1, 10, 21])
def test_a_track_out_of_range_is_refused_by_name(track: int) -> None:
    with pytest.raises(InvalidCommand) as error:
        Session(RULES).create(2, "track", Options(meteor_track_length=track))
    assert error.value.field == "options.meteor_track_length"
    assert error.value.reason == "METEOR_TRACK_OUT_OF_RANGE"


def test_on_a_longer_track_the_meteor_passes_space_ten() -> None:
    short = replace(RULES.initial_state(_config(0)), meteor=10)
    long = replace(RULES.initial_state(_config(12)), meteor=10)
    assert the_end(short, MeteorMoved(9, 10)) is not None
    assert the_end(long, MeteorMoved(9, 10)) is None
    assert the_end(replace(long, meteor=12), MeteorMoved(11, 12)) is not None
    assert RULES.view(long, Viewer.player(0)).meteor_track_length == 12


def test_on_a_longer_track_a_game_goes_on_past_the_rulebooks_earth() -> None:
    # Here the Meteor deck runs out first (16 cards): the other way to lose.
    state, _ = new_game(RULES, 2, "long", Options(meteor_track_length=14))
    session = Session(RULES)
    bot = bot_for(RULES.game_type, HEURISTIC).play
    while not RULES.is_terminal(state.game):
        seat = min(RULES.active_seats(state.game))
        move = bot_move(
            RULES, state.game, seat, bot, bot_rng("long", seat, state.version)
        )
        _, state = session.advance(state, seat, move, Rng("long", state.version))
    assert state.game.meteor > CONTENT.track_length
    assert state.game.result == "meteor_deck_empty"


def test_a_position_is_checked_against_the_games_own_track() -> None:
    # Given a position with the Meteor on space 12,
    position = Position(meteor=12)
    # when the game's track is the rulebook's, it is past Earth: refused;
    error = refusal(RULES, 2, Scenario(position=position))
    assert error is not None and error.field == "position.meteor"
    # on a 14-space track it is two spaces from Earth: the game starts there;
    longer = Options(meteor_track_length=14)
    assert refusal(RULES, 2, Scenario(position=position), options=longer) is None
    state, _ = new_game(RULES, 2, "p", longer, Scenario(position=position))
    assert state.game.meteor == 12 and state.game.earth == 14
    # and on Earth itself (14) it is refused, naming the track's end.
    error = refusal(RULES, 2, Scenario(position=Position(meteor=14)), options=longer)
    assert error is not None and error.field == "position.meteor"
    assert "0 to 13" in str(error)
