"""Random play over many seeds: every game ends, keeps its invariants and
replays to the same state from its stored events."""

from __future__ import annotations

from collections import Counter

import pytest
from strata.games.dinosaurs_extinct.v1 import dinosaurs_extinct_pb2

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import Space
from domain.dinosaurs_extinct.model import (
    DieRolled,
    DinoEnteredTwentyFirstCentury,
    DinoSwitchReached,
    Phase,
    RollDie,
    RollPurpose,
    State,
    SwitchWith,
    TurnPassed,
)
from tests.gamekit import (
    RANDOM_SEEDS,
    PlayedGame,
    assert_maps_to_proto,
    assert_replays,
    assert_replays_deterministically,
    play_random,
)

SEEDS = RANDOM_SEEDS
CARD_IDS = Counter(card.id for card in RULES.content.earth_events)


def check_invariants(state: State) -> None:
    content = RULES.content
    assert state.phase in (Phase.ROLL, Phase.CHOOSE_SWITCH, Phase.OVER)
    assert 0 <= state.turn < state.players
    assert len(state.dinos) == state.players
    # The 14 Earth Event cards are all in the stack, each once.
    assert Counter(state.earth_deck) == CARD_IDS
    for seat, dino in enumerate(state.dinos):
        # Extinction comes at once: never a complete skeleton on the board.
        assert 0 <= dino.bones < content.life_card_overlays
        if seat == state.winner:
            assert dino.step == content.finish
            assert dino.bones == 0
        else:
            # Only the winner reaches the 21st Century.
            assert 0 <= dino.step < content.finish
    if state.phase is Phase.CHOOSE_SWITCH:
        step = state.dinos[state.turn].step
        assert content.spaces[step] is Space.DINO_SWITCH
    assert (state.winner is not None) == (state.phase is Phase.OVER)


def check_game(played: PlayedGame, players: int) -> None:
    """Invariants over the whole stream of a finished game."""
    events = played.events
    rolled = [e for e in events if isinstance(e, DieRolled)]
    # Every roll is recorded, and is a face of the die.
    assert played.state.game.dice_used == len(rolled)
    assert all(1 <= e.value <= RULES.content.die_sides for e in rolled)
    # Exactly one move roll per RollDie command.
    turns = sum(isinstance(c, RollDie) for _, c in played.commands)
    assert sum(e.purpose is RollPurpose.MOVE for e in rolled) == turns
    # Turns go clockwise, one seat at a time.
    passed = [e.seat for e in events if isinstance(e, TurnPassed)]
    assert passed == [(i + 1) % players for i in range(len(passed))]
    # A switch always follows a DinoSwitchReached, and the game ends once.
    reached = sum(isinstance(e, DinoSwitchReached) for e in events)
    assert reached == sum(isinstance(c, SwitchWith) for _, c in played.commands)
    assert sum(isinstance(e, DinoEnteredTwentyFirstCentury) for e in events) == 1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_end_keep_invariants_and_replay(players: int) -> None:
    winners: Counter[int] = Counter()
    for i in range(SEEDS):
        seed = f"random-{players}-{i}"
        played = play_random(RULES, players, seed, check_each_step=check_invariants)
        outcome = RULES.outcome(played.state.game)
        assert outcome.result == "reached_21st_century"
        assert len(outcome.winners) == 1
        winners[outcome.winners[0]] += 1
        check_game(played, players)
        assert_replays(RULES, played)
        if i % 50 == 0:
            assert_replays_deterministically(RULES, played, seed)
            assert_maps_to_proto(RULES, dinosaurs_extinct_pb2, played)
    # Every seat wins some games: nothing in the rules starves a seat.
    assert set(winners) == set(range(players))
