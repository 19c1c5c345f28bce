"""The game list read model and its checkpoint, on each backend: a batch
writes its rows and moves the checkpoint together, or, when the checkpoint
is not where the batch started, writes nothing."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from eventstore.base import EventStore
from service.projections import GameListRows, GameRow, ListedSeat
from tests.eventstore.backends import Capability

#: Read models live in the SQL stores' databases.
pytestmark = pytest.mark.requires(Capability.SQL)

NAME = "game_list"
T0 = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)


def row(game_id: str, version: int = 1, **changes: object) -> GameRow:
    base = GameRow(
        game_id=game_id,
        game_type="dinosaurs_extinct",
        status="open",
        players=3,
        seats_taken=1,
        version=version,
        winners=(),
        result="",
        characters={},
        created_at=T0,
        finished_at=None,
        created_position=7,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture
def models(store: EventStore) -> GameListRows:
    """The game list's rows (service/projections.py) on the store's generic
    read models: rows and checkpoint written together."""
    models = store.read_models()
    assert models is not None
    return GameListRows(models)


def test_a_batch_writes_its_rows_and_moves_the_checkpoint(models: GameListRows) -> None:
    finished = row(
        "g-2",
        40,
        status="finished",
        seats_taken=3,
        winners=(0, 2),
        result="last_standing",
        characters={0: "Stégo 🦕", 2: 'T. "Rex"'},
        # Another offset, stored as the same instant.
        created_at=T0.astimezone(timezone(timedelta(hours=-5))),
        finished_at=T0 + timedelta(minutes=3, microseconds=7),
        # A PostgreSQL position: a transaction id << 16, past 32 bits.
        created_position=(123_456_789 << 16) + 3,
        seats=(
            ListedSeat(taken=True, name='Ada "🦕"'),
            ListedSeat(),
            ListedSeat(taken=True, name="bot", bot="heuristic", left=True),
        ),
    )
    rows = [row("g-1"), finished]  # g-1: a row written before seats were kept

    assert models.apply_game_rows(NAME, 0, 17, rows)

    assert models.checkpoint(NAME) == 17
    assert models.all_games() == rows
    (read,) = [g for g in models.all_games() if g.game_id == "g-2"]
    assert read.created_at.tzinfo == UTC and read.created_at == T0
    assert read.characters == {0: "Stégo 🦕", 2: 'T. "Rex"'}


def test_later_batches_replace_their_games_rows_and_keep_the_others(
    models: GameListRows,
) -> None:
    assert models.apply_game_rows(NAME, 0, 5, [row("g-1"), row("g-2")])

    assert models.apply_game_rows(
        NAME, 5, 9, [row("g-2", 4, seats_taken=2), row("g-3")]
    )
    assert models.apply_game_rows(NAME, 9, 12, [])

    assert models.checkpoint(NAME) == 12
    assert models.all_games() == [row("g-1"), row("g-2", 4, seats_taken=2), row("g-3")]
    assert models.count() == 3


def test_a_batch_from_another_position_writes_nothing(models: GameListRows) -> None:
    assert not models.apply_game_rows(NAME, 3, 8, [row("g-1")])  # no checkpoint yet
    assert (models.checkpoint(NAME), models.all_games()) == (0, [])
    assert models.apply_game_rows(NAME, 0, 8, [row("g-1")])

    stale = [row("g-1", 5, status="active"), row("g-9")]
    assert not models.apply_game_rows(NAME, 0, 12, stale)
    assert not models.apply_game_rows(NAME, 5, 12, stale)

    assert (models.checkpoint(NAME), models.all_games()) == (8, [row("g-1")])


def _race(models: GameListRows, start: int, runners: int) -> dict[int, bool]:
    """``runners`` threads applying a batch from ``start`` at once; whether
    each applied."""
    barrier = threading.Barrier(runners)
    results: dict[int, bool] = {}

    def run(n: int) -> None:
        barrier.wait()
        results[n] = models.apply_game_rows(
            NAME, start, start + n + 1, [row(f"g-{start}-{n}"), row("shared", n)]
        )

    threads = [threading.Thread(target=run, args=(n,)) for n in range(runners)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == runners
    return results


def test_of_runners_racing_from_one_position_exactly_one_applies(
    models: GameListRows,
) -> None:
    for start in (0, 100):  # without a checkpoint row, then with one
        if start:
            models.apply_game_rows(NAME, models.checkpoint(NAME), start, [])

        results = _race(models, start, 6)

        (winner,) = [n for n, applied in results.items() if applied]
        assert models.checkpoint(NAME) == start + winner + 1
        written = {g.game_id: g for g in models.all_games()}
        assert [g for g in written if g.startswith(f"g-{start}-")] == [
            f"g-{start}-{winner}"
        ]
        assert written["shared"].version == winner


def test_a_naive_timestamp_is_refused_and_nothing_is_written(
    models: GameListRows,
) -> None:
    naive = row("g-1", created_at=datetime(2026, 1, 1))

    with pytest.raises(ValueError, match="naive"):
        models.apply_game_rows(NAME, 0, 4, [row("g-0"), naive])

    assert (models.checkpoint(NAME), models.all_games()) == (0, [])


def test_reset_empties_the_list_and_the_checkpoint(models: GameListRows) -> None:
    models.apply_game_rows(NAME, 0, 4, [row("g-1")])

    models.reset(NAME)

    assert (models.checkpoint(NAME), models.all_games()) == (0, [])
    assert models.apply_game_rows(NAME, 0, 2, [row("g-2")])
