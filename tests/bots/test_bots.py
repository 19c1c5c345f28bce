"""Bots play only legal actions, from their own view, deterministically."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from domain import registry
from domain.bots import (
    HEURISTIC,
    LEVELS,
    RANDOM,
    STRONG,
    StrongBot,
    bot_for,
    bot_kinds,
    bot_move,
    bot_rng,
    play_bot_game,
)
from domain.rules import Viewer

GAME_TYPES = registry.game_types()


def lineups(players: int) -> list[list[str]]:
    return [
        [RANDOM] * players,
        [HEURISTIC] * players,
        [HEURISTIC if seat % 2 else RANDOM for seat in range(players)],
    ]


def test_every_game_has_a_bot_of_every_level():
    assert LEVELS == (RANDOM, HEURISTIC, STRONG)
    for game_type in GAME_TYPES:
        assert bot_kinds(game_type) == [HEURISTIC, RANDOM, STRONG]
        for kind in LEVELS:
            assert bot_for(game_type, kind).kind == kind
        strong = bot_for(game_type, STRONG).play
        assert isinstance(strong, StrongBot)
        assert strong.heuristic is bot_for(game_type, HEURISTIC).play
    with pytest.raises(KeyError):
        bot_for(GAME_TYPES[0], "clairvoyant")


def test_a_bot_is_given_a_view_legal_actions_and_a_generator_only():
    for game_type in GAME_TYPES:
        play = bot_for(game_type, HEURISTIC).play
        assert list(inspect.signature(play).parameters) == ["view", "legal", "rng"]


#: Games per lineup in the legality test: random bots are cheap (they are
#: not even shown a view), so they play most of the thousand-odd games.
GAMES_PER_LINEUP = {RANDOM: 60, HEURISTIC: 8, "mixed": 8}


def rounds(game_type: str) -> int:
    """How often each lineup's games are played at each player count: so
    that every game type plays at least 200 games (a game seating few
    player counts, like the tests' toy, plays its lineups more often)."""
    per_count = sum(GAMES_PER_LINEUP.values())
    return -(-200 // (per_count * len(player_counts(game_type))))


def player_counts(game_type: str) -> range:
    rules = registry.rules_for(game_type)
    return range(rules.min_players, rules.max_players + 1)


# One test item per game type and player count, so xdist's workers share them.
@pytest.mark.parametrize(
    ("game_type", "players"),
    [(g, players) for g in GAME_TYPES for players in player_counts(g)],
)
def test_bots_only_ever_choose_legal_actions(game_type: str, players: int):
    """Hundreds of games per game type, every player count, three lineups:
    :func:`play_bot_game` raises if a bot picks an action not listed, and
    the rules themselves refuse anything illegal."""
    rules = registry.rules_for(game_type)
    for lineup in lineups(players):
        name = lineup[0] if len(set(lineup)) == 1 else "mixed"
        bots = [bot_for(game_type, kind).play for kind in lineup]
        for index in range(GAMES_PER_LINEUP[name] * rounds(game_type)):
            game = play_bot_game(rules, f"legal/{players}/{index}", bots)
            assert game.commands > 0
            assert set(game.winners) <= set(range(players))


def test_cubosaurs_bots_play_the_advanced_mode_legally_too():
    from domain.cubosaurs.model import Options

    rules = registry.rules_for("cubosaurs")
    for players in (2, 3, 5):
        for lineup in lineups(players):
            bots = [bot_for(rules.game_type, kind).play for kind in lineup]
            for index in range(4):
                play_bot_game(
                    rules, f"advanced/{players}/{index}", bots, Options(advanced=True)
                )


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_the_same_seed_gives_the_same_game(game_type: str):
    rules = registry.rules_for(game_type)
    players = rules.max_players
    bots = [bot_for(game_type, k).play for k in lineups(players)[2]]
    assert play_bot_game(rules, "again", bots) == play_bot_game(rules, "again", bots)


def test_bot_move_refuses_a_seat_that_cannot_act():
    rules = registry.rules_for("dinosaurs_extinct")
    from tests.gamekit import new_game

    state, _ = new_game(rules, 2)
    with pytest.raises(ValueError):
        bot_move(
            rules,
            state.game,
            1,
            bot_for(rules.game_type, RANDOM).play,
            bot_rng("s", 1, 1),
        )


def test_a_bot_sees_exactly_its_own_players_view():
    seen: list[Any] = []

    def spy(view: Any, legal: Any, rng: Any) -> Any:
        seen.append(view)
        return legal[0]

    rules = registry.rules_for("happy_little_dinosaurs")
    from tests.gamekit import new_game

    state, _ = new_game(rules, 3)
    bot_move(rules, state.game, 1, spy, bot_rng("s", 1, 1))
    assert seen == [rules.view(state.game, Viewer.player(1))]
    assert all(p.hand == () for p in seen[0].players if p.seat != 1)
