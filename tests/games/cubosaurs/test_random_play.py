"""Random play: on 1,000 seeds for every player count and both modes, cards,
DNA tokens and DNA tiles are conserved at every step, every game ends, and
its events replay to the same state (and, on a sample, re-decide to the same
events and map onto the protos)."""

from __future__ import annotations

import pytest
from strata.games.cubosaurs.v1 import cubosaurs_pb2

from domain.cubosaurs import RULES
from domain.cubosaurs.content import CARD_COUNT, CARDS, DNA_TOKENS, TILE_COUNT
from domain.cubosaurs.model import CubosaursState, GameScored, Options, Phase
from tests.gamekit import (
    RANDOM_SEEDS,
    assert_maps_to_proto,
    assert_replays,
    assert_replays_deterministically,
    over_seed_chunks,
    play_random,
    seed_chunk,
)

SEEDS = RANDOM_SEEDS
SAMPLE_EVERY = 50
ALL_CARDS = list(range(CARD_COUNT))
ALL_TILES = list(range(TILE_COUNT))


def check_invariants(state: CubosaursState) -> None:
    """What must hold after every command (it reads each seat once)."""
    # Rounds: scored once each, alternating directions.
    finished = state.round if state.phase is Phase.OVER else state.round - 1
    assert state.direction == (1 if state.round % 2 else -1)
    assert 1 <= state.round <= state.rounds
    places = [*state.deck, *state.out_of_play, *state.packet, *state.discarded]
    owned: list[int] = []
    tokens = 0
    for seat in state.seats:
        places += seat.collection
        owned += seat.tiles
        assert seat.tokens >= 0
        tokens += seat.tokens
        assert len(seat.scores) == finished
    # Cards: every one of the 55 is in exactly one place.
    assert sorted(places) == ALL_CARDS
    assert len(state.out_of_play) == CARD_COUNT - 10 * state.players
    # The packet never holds two cards of one kind.
    kinds = [CARDS[c].kind for c in state.packet]
    assert len(kinds) == len(set(kinds))
    # DNA tokens: the supply and the players hold all 40 between them.
    assert state.supply + tokens == DNA_TOKENS
    assert state.supply >= 0
    # DNA tiles: on offer, bought this round, or in the box.
    if state.advanced:
        assert sorted([*state.offer, *state.box, *owned]) == ALL_TILES
        assert len(state.offer) + len(owned) <= state.players + 1
    else:
        assert state.offer == state.box == () and not owned
        assert state.supply == DNA_TOKENS and not state.debts
    assert all(d.amount > 0 for d in state.debts)
    assert RULES.active_seats(state) or state.phase is Phase.OVER


@pytest.mark.slow
@over_seed_chunks
@pytest.mark.parametrize("advanced", [False, True], ids=["basic", "advanced"])
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_random_games_conserve_everything_end_and_replay(
    players: int, advanced: bool, chunk: int
) -> None:
    options = Options(advanced=advanced)
    for index in seed_chunk(SEEDS, chunk):
        seed = f"cubosaurs-{players}-{advanced}-{index}"
        played = play_random(
            RULES, players, seed, options, check_each_step=check_invariants
        )
        game = played.state.game
        assert RULES.is_terminal(game)
        assert all(len(s.scores) == game.rounds for s in game.seats)
        assert played.state.outcome == RULES.outcome(game)
        final = next(e for e in reversed(played.events) if isinstance(e, GameScored))
        assert final.totals == RULES.totals(game)
        assert_replays(RULES, played)
        if index % SAMPLE_EVERY == 0:
            assert_replays_deterministically(RULES, played, seed)
            assert_maps_to_proto(RULES, cubosaurs_pb2, played)
