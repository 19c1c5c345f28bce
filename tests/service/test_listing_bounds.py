"""A ListGames filter that few games match costs a page, not the list.

The attack: a caller asks for what almost nothing matches (the open games
among thousands finished, a seat count nobody plays, a free seat) with a
page size larger than the matches. Walking the list in creation order and
dropping what does not match would read every row of the list to fill the
page; each filter has an index in creation order instead (revision 0006).
The work is counted by each database itself, not timed: on PostgreSQL the
rows its plan reads (``EXPLAIN ANALYZE``), on SQLite the virtual machine's
steps (its progress handler), against the same page with no filter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from eventstore.base import EventStore
from eventstore.factory import open_store
from eventstore.tables import game_list
from service.projections import GAME_LIST, list_query
from tests.conftest import BACKENDS, empty_store_url

#: The list: this many finished four-seat cubosaurs games, full, ...
MANY = 3000
#: ... and among them, early in the list, a few open two-seat games of
#: another type, each with a seat free.
RARE_AT = (10, 20, 30)
PAGE = 20  # more than the rare games: a page that never fills


def row(position: int) -> dict[str, Any]:
    rare = position in RARE_AT
    return {
        "game_id": f"g{position:05d}",
        "game_type": "dinosaurs_extinct" if rare else "cubosaurs",
        "status": "open" if rare else "finished",
        "players": 2 if rare else 4,
        "seats_taken": 1 if rare else 4,
        "version": 3 if rare else 120,
        "winners": "[]" if rare else "[0]",
        "result": "" if rare else "won",
        "characters": "{}",
        "created_at": datetime(2026, 12, 6, tzinfo=UTC),
        "finished_at": None if rare else datetime(2026, 12, 6, 1, tzinfo=UTC),
        "seats": None,
        "created_position": position,
    }


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    """A store whose game list holds the rows above, its statistics fresh
    (as autovacuum, or SQLite's ANALYZE, keeps them)."""
    store = open_store(empty_store_url(request.param, request, tmp_path))
    models = store.read_models()
    assert models is not None
    rows = [row(position) for position in range(1, MANY + 1)]
    assert models.apply(GAME_LIST, 0, MANY, game_list, rows)
    with store.write_transaction() as connection:  # type: ignore[attr-defined]
        connection.execute(text("ANALYZE game_list"))
    yield store
    store.close()


def work(store: EventStore, query: Any) -> tuple[list[str], int]:
    """The games ``query`` lists, and what the database did to list them:
    rows read on PostgreSQL, VM steps (in fifties) on SQLite."""
    with store.read_connection() as connection:  # type: ignore[attr-defined]
        sql = str(
            query.compile(
                dialect=connection.dialect, compile_kwargs={"literal_binds": True}
            )
        )
        ids = [r.game_id for r in connection.execute(query)]
        if connection.dialect.name == "postgresql":
            (plan,) = connection.exec_driver_sql(
                f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}"
            ).one()
            plan = json.loads(plan) if isinstance(plan, str) else plan
            return ids, _rows_read(plan[0]["Plan"])
        raw = connection.connection.driver_connection
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0

        raw.set_progress_handler(count, 50)
        try:
            list(connection.exec_driver_sql(sql))
        finally:
            raw.set_progress_handler(None, 0)
        return ids, steps[0]


def _rows_read(node: dict[str, Any]) -> int:
    """Rows a plan's scans produced or filtered out, over all their loops."""
    read = 0
    if "Scan" in node["Node Type"]:
        kept = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
        read += kept * node.get("Actual Loops", 1)
    for child in node.get("Plans", ()):
        read += _rows_read(child)
    return read


RARE_IDS = [f"g{p:05d}" for p in RARE_AT]

FILTERS: dict[str, dict[str, Any]] = {
    "open": {"status": "open"},
    "open of a type": {"status": "open", "game_type": "dinosaurs_extinct"},
    "of a type": {"game_type": "dinosaurs_extinct"},
    "two seats": {"players": 2},
    "a free seat": {"open_seats": True},
    "five seats": {"players": 5},  # nothing matches
}


@pytest.mark.parametrize("newest_first", [False, True], ids=["oldest", "newest"])
@pytest.mark.parametrize("name", list(FILTERS))
def test_a_filter_few_games_match_reads_about_a_page(
    store: EventStore, name: str, newest_first: bool
) -> None:
    filters = FILTERS[name]
    expected = [] if name == "five seats" else RARE_IDS
    if newest_first:
        expected = expected[::-1]
    # The same page with no filter: what a page costs.
    _, a_page = work(store, list_query(limit=PAGE + 1, newest_first=newest_first))
    query = list_query(limit=PAGE + 1, newest_first=newest_first, **filters)
    ids, cost = work(store, query)
    assert ids == expected
    # Walking the list would read all 3,000 rows (about 150 pages' worth).
    assert cost <= 3 * a_page + 3, (name, cost, a_page)


@pytest.mark.parametrize("name", ["open", "two seats", "a free seat"])
def test_the_next_page_after_a_rare_game_reads_about_a_page(
    store: EventStore, name: str
) -> None:
    _, a_page = work(store, list_query(limit=PAGE + 1))
    query = list_query(after=RARE_IDS[0], limit=PAGE + 1, **FILTERS[name])
    ids, cost = work(store, query)
    assert ids == RARE_IDS[1:]
    assert cost <= 3 * a_page + 3, (name, cost, a_page)
