"""Random play over many seeds: conservation, termination, replay."""

from __future__ import annotations

from typing import Any

import pytest
from strata.games.escaping_extinction.v1 import escaping_extinction_pb2

from domain.escaping_extinction import RULES
from domain.escaping_extinction.model import (
    EarthquakeStruck,
    ExplorationDeckReshuffled,
    State,
    WorldSetUp,
)
from domain.session import LIFECYCLE_EVENTS
from tests.gamekit import (
    RANDOM_SEEDS,
    assert_maps_to_proto,
    assert_replays,
    assert_replays_deterministically,
    over_seed_chunks,
    play_random,
    seed_chunk,
)
from tests.games.escaping_extinction.helpers import check_invariants
from tests.games.escaping_extinction.test_secrecy import VIEWERS, twin


def assert_no_secret_leaks(state: State, events: list[Any]) -> None:
    """Views ignore face-down tiles and deck orders; secret events are blank."""
    other = twin(state)
    for viewer in VIEWERS:
        assert RULES.view(state, viewer) == RULES.view(other, viewer)
        for event in events:
            shown = (
                RULES.redact(event, viewer)
                if not isinstance(event, LIFECYCLE_EVENTS)
                else event
            )
            match shown:
                case WorldSetUp(layout, meteor, docket, exploration):
                    assert not (layout or meteor or docket or exploration)
                case EarthquakeStruck(_, layout):
                    assert not layout
                case ExplorationDeckReshuffled(order):
                    assert not order


SEEDS = RANDOM_SEEDS


# About 40 s per player count on a quiet core: hence the slow mark, and
# the seeds in chunks that xdist's workers share.
@pytest.mark.slow
@over_seed_chunks
@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_random_games_conserve_everything_end_and_replay(
    players: int, chunk: int
) -> None:
    results: dict[str, int] = {}
    seeds = seed_chunk(SEEDS, chunk)
    for n in seeds:
        seed = f"random-{players}-{n}"
        played = play_random(RULES, players, seed, check_each_step=check_invariants)
        assert RULES.is_terminal(played.state.game)
        assert_replays(RULES, played)
        if n % 50 == 0:
            assert_replays_deterministically(RULES, played, seed)
            assert_maps_to_proto(RULES, escaping_extinction_pb2, played)
            assert_no_secret_leaks(played.state.game, played.events)
        result = played.state.game.result
        results[result] = results.get(result, 0) + 1
    assert sum(results.values()) == len(seeds)
