"""Given/when/then: the corrections of rules version 2 (two rounds at every
player count; no DNA supply shown in the basic mode), and rules versions 1
and 2 kept for the games created under them (rules version 3's leavers and
recorded tiles: ``test_leaving.py``, ``test_decisions_are_events.py``)."""

from __future__ import annotations

import pytest

from domain import registry
from domain.chance import Rng
from domain.cubosaurs import RULES, RULES_V1, RULES_V2
from domain.cubosaurs.model import CubosaursState, Options, RoundScored
from domain.rules import GameConfig, Viewer
from domain.session import Session, Status
from tests.gamekit import new_game
from tests.games.cubosaurs.helpers import ADVANCED


def test_two_players_play_two_rounds_by_default() -> None:
    state, _ = new_game(RULES, 2)
    assert state.game.rounds == 2


def test_three_rounds_with_two_players_stays_an_option() -> None:
    state, _ = new_game(RULES, 2, options=Options(rounds=3))
    assert state.game.rounds == 3


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_rules_version_one_kept_three_rounds_for_two_players_only(
    players: int,
) -> None:
    config: GameConfig[CubosaursState] = GameConfig(players, "v1", Options(), None)
    expected = 3 if players == 2 else 2
    assert RULES_V1.initial_state(config).rounds == expected
    assert RULES.initial_state(config).rounds == 2


def test_a_two_player_game_ends_after_its_second_round() -> None:
    session = Session(RULES)
    state, events = new_game(RULES, 2, seed="two-rounds")
    while state.status is not Status.FINISHED:
        seat = min(session.active_seats(state))
        command = session.legal_actions(state, seat)[0]
        new, state = session.advance(
            state, seat, command, Rng("two-rounds", state.version)
        )
        events += new
    assert [e.round for e in events if isinstance(e, RoundScored)] == [1, 2]


def test_the_basic_mode_shows_no_dna_supply_and_the_advanced_mode_forty() -> None:
    basic, _ = new_game(RULES, 3)
    advanced, _ = new_game(RULES, 3, options=ADVANCED)
    assert RULES.view(basic.game, Viewer.spectator()).dna_supply == 0
    dealt = advanced.game.supply  # the starting cards' tokens are paid out
    assert 0 < dealt <= 40
    assert RULES.view(advanced.game, Viewer.spectator()).dna_supply == dealt


def test_the_versions_are_registered_and_the_current_one_is_three() -> None:
    assert [r.rules_version for r in (RULES, RULES_V2, RULES_V1)] == ["3", "2", "1"]
    assert registry.rules_versions("cubosaurs") == ["1", "2", "3"]
    assert registry.rules_for("cubosaurs", "1") is RULES_V1
    assert registry.rules_for("cubosaurs", "2") is RULES_V2
    assert registry.rules_for("cubosaurs") is RULES
