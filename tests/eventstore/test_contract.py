"""The event store contract: what every backend must do, run on each of them
(SQLite, PostgreSQL and the in-memory store). A case that needs more than the
port offers declares it with ``@pytest.mark.requires`` and runs only on the
backends that have it (``tests.eventstore.backends``)."""

from __future__ import annotations

import asyncio
import itertools
import random
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from eventstore.base import (
    CommandOutcome,
    CommandRecord,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    NewCommand,
    NewEvent,
    RecordedEvent,
    Snapshot,
)
from eventstore.memory import InMemoryEventStore
from tests.eventstore import raw_sql
from tests.eventstore.backends import Capability


def new_game() -> str:
    return f"game-{uuid.uuid4()}"


def numbered(count: int, start: int = 1) -> list[NewEvent]:
    return [NewEvent("Numbered", {"n": n}) for n in range(start, start + count)]


def command(command_id: str = "", actor: str = "alice") -> NewCommand:
    return NewCommand(
        command_id=command_id or str(uuid.uuid4()),
        actor=actor,
        payload={"type": "PlayCard", "card": 7},
        decided_at_version=0,
    )


def rejected(command_id: str = "", reason: str = "NOT_YOUR_TURN") -> NewCommand:
    return NewCommand(
        command_id=command_id or str(uuid.uuid4()),
        actor="bob",
        payload={"type": "PlayCard", "card": 3},
        outcome=CommandOutcome(
            error_kind="RuleViolation",
            error_reason=reason,
            error_message="It is not your turn.",
        ),
        decided_at_version=2,
    )


@pytest.fixture(
    params=[
        pytest.param("this store", id="this-store"),
        pytest.param(
            "another store",
            id="another-store",
            marks=pytest.mark.requires(Capability.CONNECTIONS),
        ),
    ]
)
def writer(
    request: pytest.FixtureRequest,
    store: EventStore,
    open_stores: Callable[[], EventStore],
) -> EventStore:
    """Who appends while ``store`` waits: the store itself (from another
    thread) or another store on the same database."""
    return store if request.param == "this store" else open_stores()


# -- appending and reading a stream --------------------------------------


def test_appended_events_read_back_exactly(store: EventStore) -> None:
    game = new_game()
    data = [
        {
            "zeta": 1,
            "alpha": [1, 2.5, -3, None, True, False],
            "mid": {"b": "é😀", "a": {}},
        },
        [],
        "just a string",
        2**63 - 1,
        0.1,
        None,
        {"nested": [[{"deep": [1, {"x": "y"}]}]], "empty": [], "quote": "\"'\\"},
    ]
    before = datetime.now(UTC) - timedelta(seconds=1)

    store.append(game, 0, [NewEvent(f"Type{i}", d, i + 1) for i, d in enumerate(data)])

    stored = store.read_stream(game)
    assert [e.data for e in stored] == data
    assert list(stored[0].data) == ["zeta", "alpha", "mid"], "key order is kept"
    assert [e.type for e in stored] == [f"Type{i}" for i in range(len(data))]
    assert [e.schema_version for e in stored] == list(range(1, len(data) + 1))
    assert {e.game_id for e in stored} == {game}
    for event in stored:
        assert event.recorded_at.tzinfo is not None
        assert event.recorded_at.utcoffset() == timedelta(0)
        assert before <= event.recorded_at <= datetime.now(UTC) + timedelta(seconds=1)


def test_versions_start_at_one_and_have_no_gaps(store: EventStore) -> None:
    game = new_game()

    first = store.append(game, 0, numbered(2))
    second = store.append(game, 2, numbered(3, start=3))
    third = store.append(game, 5, numbered(1, start=6))

    assert (first.first_version, first.last_version) == (1, 2)
    assert (second.first_version, second.last_version) == (3, 5)
    assert (third.first_version, third.last_version) == (6, 6)
    assert [e.version for e in store.read_stream(game)] == [1, 2, 3, 4, 5, 6]
    assert [e.data["n"] for e in store.read_stream(game)] == [1, 2, 3, 4, 5, 6]
    assert store.stream_version(game) == 6


def test_read_stream_takes_a_version_range(store: EventStore) -> None:
    game = new_game()
    store.append(game, 0, numbered(5))

    assert [e.version for e in store.read_stream(game, 3)] == [3, 4, 5]
    assert [e.version for e in store.read_stream(game, 2, 4)] == [2, 3, 4]
    assert store.read_stream(game, 6) == []
    assert store.read_stream(new_game()) == []
    assert store.stream_version(new_game()) == 0


def test_read_bounds_below_one_are_plain_numbers(
    store: EventStore,
) -> None:
    game = new_game()
    store.append(game, 0, numbered(3))

    assert [e.version for e in store.read_stream(game, -5)] == [1, 2, 3]
    assert [e.version for e in store.read_stream(game, 0, 2)] == [1, 2]
    assert store.read_stream(game, 1, 0) == []
    assert store.read_stream(game, 1, -1) == []
    assert store.read_stream(game, 3, 2) == []
    assert store.read_all(-2) == store.read_stream(game)
    assert store.read_all(-2, limit=1) == store.read_stream(game, 1, 1)
    assert store.read_all(0, limit=0) == []


@pytest.mark.parametrize("expected", [0, 1, 3, 7])
def test_append_at_the_wrong_version_raises_and_writes_nothing(
    store: EventStore, expected: int
) -> None:
    game = new_game()
    last = store.append(game, 0, numbered(2)).last_position
    logged = command()

    with pytest.raises(ConcurrencyError) as raised:
        store.append(game, expected, numbered(3, start=100), logged)

    assert (raised.value.game_id, raised.value.expected) == (game, expected)
    assert raised.value.actual == 2
    assert [e.data["n"] for e in store.read_stream(game)] == [1, 2]
    assert store.find_command(game, logged.command_id) is None
    assert store.last_position() == last


def test_a_refused_append_to_a_new_game_creates_no_stream(store: EventStore) -> None:
    game = new_game()

    with pytest.raises(ConcurrencyError):
        store.append(game, 3, numbered(1))

    assert store.list_streams() == []
    assert store.stream_version(game) == 0
    assert store.append(game, 0, numbered(1)).last_version == 1
    assert store.list_streams() == [game]


def _race(writers: int, write: Callable[[int], str]) -> list[str]:
    """Run ``write(i)`` in ``writers`` threads released together; their outcomes."""
    barrier = threading.Barrier(writers)
    outcomes: list[str] = []

    def run(writer: int) -> None:
        barrier.wait()
        outcomes.append(write(writer))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(outcomes)


def test_two_writers_racing_from_one_version_exactly_one_wins(
    store: EventStore,
) -> None:
    for _ in range(3):
        game = new_game()
        store.append(game, 0, numbered(1))

        def write(writer: int, game: str = game) -> str:
            try:
                store.append(game, 1, [NewEvent("Won", {"writer": writer})] * 2)
            except ConcurrencyError:
                return "lost"
            return "won"

        assert _race(6, write) == ["lost"] * 5 + ["won"]
        stream = store.read_stream(game)
        assert [e.version for e in stream] == [1, 2, 3]
        assert stream[1].data == stream[2].data, "both events come from the winner"


@pytest.mark.requires(Capability.SQL)
def test_a_batch_that_fails_half_way_leaves_nothing_behind(
    store: EventStore, store_url: str
) -> None:
    first = new_game()
    store.append(first, 0, numbered(3))
    before = store.read_all()
    second = new_game()
    # Sabotage: the insert of the second game's events violates a key, after
    # its command and its positions were written in the same transaction.
    if store_url.startswith("sqlite"):
        raw_sql.execute(
            store_url,
            f"CREATE TRIGGER sabotage BEFORE INSERT ON events "
            f"WHEN NEW.game_id = '{second}' BEGIN SELECT RAISE(ABORT, 'no'); END",
        )
    else:
        raw_sql.execute(
            store_url,
            "CREATE OR REPLACE FUNCTION sabotage() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE unique_violation; END $$",
        )
        raw_sql.execute(
            store_url,
            f"CREATE TRIGGER sabotage BEFORE INSERT ON events FOR EACH ROW "
            f"WHEN (NEW.game_id = '{second}') EXECUTE FUNCTION sabotage()",
        )
    logged = command()

    try:
        with pytest.raises(ConcurrencyError):
            store.append(second, 0, numbered(3), logged)
    finally:
        raw_sql.execute(
            store_url,
            "DROP TRIGGER sabotage"
            + ("" if store_url.startswith("sqlite") else " ON events"),
        )

    assert store.read_stream(second) == []
    assert store.find_command(second, logged.command_id) is None
    assert store.read_all() == before
    third = store.append(new_game(), 0, numbered(2))
    assert third.last_position > before[-1].position, "no claim left behind"


def test_an_event_that_is_not_json_fails_the_whole_batch(store: EventStore) -> None:
    game = new_game()
    batch = [NewEvent("Fine", {"n": 1}), NewEvent("Broken", {"n": float("nan")})]

    with pytest.raises(ValueError):
        store.append(game, 0, batch)

    assert store.read_stream(game) == []
    assert store.append(game, 0, numbered(1)).last_version == 1


def test_the_store_keeps_json_not_the_callers_objects(store: EventStore) -> None:
    """What is stored is the JSON of what was given, taken at the call:
    changing the given or the returned objects afterwards changes nothing
    stored, and what reads back is what JSON can say (lists, string keys)."""
    game = new_game()
    data: dict[object, Any] = {"hand": [1, 2], "pair": (3, 4), 5: "five"}
    payload = {"cards": [7]}
    state = {"hands": {"p1": [1]}}
    store.append(game, 0, [NewEvent("Dealt", data)], NewCommand("c-1", "al", payload))
    store.record_rejection(game, replace(rejected("r-1"), payload=payload))
    store.save_snapshot(Snapshot(game, 1, 1, state))
    data["hand"].append(99)
    payload["cards"].append(99)
    state["hands"]["p1"].append(99)

    for _ in range(2):  # the second time, after changing what the first read
        event = store.read_stream(game)[0]
        assert event.data == {"hand": [1, 2], "pair": [3, 4], "5": "five"}
        assert store.read_all()[0].data == event.data
        records = [store.find_command(game, "c-1"), store.find_command(game, "r-1")]
        records += store.read_commands(game)
        assert [r.payload if r else None for r in records] == [{"cards": [7]}] * 4
        snapshot = store.load_snapshot(game)
        assert snapshot is not None and snapshot.state == {"hands": {"p1": [1]}}
        event.data["hand"].append(100)
        for record in records:
            assert record is not None
            record.payload["cards"].append(100)
        snapshot.state["hands"]["p1"].append(100)


def test_commands_and_snapshots_that_are_not_json_are_refused(
    store: EventStore,
) -> None:
    game = new_game()
    not_json = {"x": float("nan")}

    with pytest.raises(ValueError):
        store.append(game, 0, numbered(1), NewCommand("c-1", "alice", not_json))
    with pytest.raises(ValueError):
        store.record_rejection(game, replace(rejected("r-1"), payload=not_json))
    with pytest.raises(ValueError):
        store.save_snapshot(Snapshot(game, 1, 1, not_json))

    assert store.read_stream(game) == []
    assert store.read_commands(game) == []
    assert store.load_snapshot(game) is None


def test_an_empty_batch_is_refused(store: EventStore) -> None:
    with pytest.raises(ValueError):
        store.append(new_game(), 0, [])


def test_a_negative_expected_version_is_refused(store: EventStore) -> None:
    game = new_game()

    with pytest.raises(ValueError):
        store.append(game, -1, numbered(1))

    assert store.read_stream(game) == []
    assert store.last_position() == 0


# -- the global log -------------------------------------------------------


def test_read_all_follows_positions_in_commit_order(store: EventStore) -> None:
    games = [new_game() for _ in range(3)]
    appended: list[tuple[str, int]] = []
    for round_, game in itertools.product(range(3), games):
        result = store.append(game, round_ * 2, numbered(2, start=round_ * 2 + 1))
        appended += [(game, result.first_version), (game, result.last_version)]

    log = store.read_all()
    positions = [e.position for e in log]

    assert len(log) == 18
    assert positions == sorted(set(positions)), "increasing, each once"
    assert [(e.game_id, e.version) for e in log] == appended
    assert store.read_all(after_position=positions[3], limit=3) == log[4:7]
    assert store.read_all(positions[15], 10) == log[16:]
    assert store.read_all(after_position=positions[17]) == []
    assert store.last_position() == positions[17]


@pytest.mark.requires(Capability.DENSE_POSITIONS)
def test_positions_are_dense_with_one_writer(store: EventStore) -> None:
    for size in (2, 1, 3):
        store.append(new_game(), 0, numbered(size))

    assert [e.position for e in store.read_all()] == [1, 2, 3, 4, 5, 6]
    assert store.last_position() == 6


def _interleaved_log(store: EventStore) -> list[str]:
    """Three games appended in turns, each with a Created, Numbered events
    and a Finished event; the game ids."""
    games = [new_game() for _ in range(3)]
    for game in games:
        store.append(game, 0, [NewEvent("Created", {"game": game})])
    for round_, game in itertools.product(range(3), games):
        store.append(game, 1 + round_ * 2, numbered(2, start=round_ * 2 + 1))
    for game in games:
        store.append(game, 7, [NewEvent("Finished", {"winner": game[-4:]})])
    return games


def test_read_all_matching_keeps_the_types_and_games_asked_for(
    store: EventStore,
) -> None:
    games = _interleaved_log(store)
    log = store.read_all()
    assert len(log) == 24

    found = store.read_all_matching(0, 100, ["Finished"], [games[1]])

    expected = [e for e in log if e.type == "Finished" or e.game_id == games[1]]
    assert found.events == expected  # whole events, bodies and times included
    assert (found.through, found.scanned) == (log[23].position, 24)
    by_type = store.read_all_matching(0, 100, event_types={"Created", "Finished"})
    assert by_type.events == log[:3] + log[21:]
    by_game = store.read_all_matching(0, 100, game_ids=[games[0], games[2]])
    assert [e.game_id for e in by_game.events].count(games[1]) == 0
    assert len(by_game.events) == 16
    nothing = store.read_all_matching(0, 100)
    assert (nothing.events, nothing.through, nothing.scanned) == (
        [],
        log[23].position,
        24,
    )


def test_read_all_matching_goes_over_the_stretch_read_all_would_return(
    store: EventStore,
) -> None:
    games = _interleaved_log(store)
    log = store.read_all()

    positions = [e.position for e in log]
    window = store.read_all_matching(positions[3], 5, ["Created"], [games[0]])

    # The 5th to 9th events: Numbered events of the three games, two each a turn.
    assert window.events == [e for e in log[4:9] if e.game_id == games[0]]
    assert (window.through, window.scanned) == (positions[8], 5)
    # A stretch without a match still says how far it went.
    none = store.read_all_matching(positions[9], 3, ["Created"])
    assert (none.events, none.through, none.scanned) == ([], positions[12], 3)
    # Walking the log in steps of any size finds each match once, in order.
    for step in (1, 4, 7):
        position, seen, walked = 0, [], 0
        while True:
            part = store.read_all_matching(position, step, ["Finished"], [games[2]])
            if part.scanned == 0:
                break
            walked += part.scanned
            assert part.through == positions[walked - 1]
            seen += part.events
            position = part.through
        assert seen == [e for e in log if e.type == "Finished" or e.game_id == games[2]]
    end = store.read_all_matching(positions[23], 10, ["Created"], games)
    assert (end.events, end.through, end.scanned) == ([], positions[23], 0)


def test_read_all_matching_returns_many_matches_of_one_stretch(
    store: EventStore,
) -> None:
    game = new_game()
    store.append(game, 0, numbered(1200))
    store.append(new_game(), 0, numbered(5))

    found = store.read_all_matching(0, 1204, game_ids=[game])

    assert [e.version for e in found.events] == list(range(1, 1201))
    assert [e.data["n"] for e in found.events] == list(range(1, 1201))
    assert (found.through, found.scanned) == (
        store.read_all(0, 1204)[-1].position,
        1204,
    )


@pytest.mark.parametrize(
    "check",
    [
        test_read_all_matching_keeps_the_types_and_games_asked_for,
        test_read_all_matching_goes_over_the_stretch_read_all_would_return,
    ],
)
def test_the_ports_own_read_all_matching_does_the_same(
    check: Callable[[EventStore], None],
) -> None:
    """The port's default (filtering read_all), which the in-memory store uses."""
    check(InMemoryEventStore())


def test_positions_of_an_append_are_consecutive(store: EventStore) -> None:
    first = store.append(new_game(), 0, numbered(2))

    result = store.append(new_game(), 0, numbered(4))

    last = result.last_position
    assert last > first.last_position
    assert [e.position for e in store.read_all(first.last_position)] == [
        last - 3,
        last - 2,
        last - 1,
        last,
    ]


def test_an_empty_store_has_no_position_and_no_streams(store: EventStore) -> None:
    assert store.last_position() == 0
    assert store.read_all() == []
    assert store.list_streams() == []


def test_list_streams_pages_through_game_ids_in_order(store: EventStore) -> None:
    games = sorted(f"game-{i:02d}-{uuid.uuid4().hex[:6]}" for i in range(7))
    for game in reversed(games):
        store.append(game, 0, numbered(2))

    assert store.list_streams() == games
    assert store.list_streams(limit=3) == games[:3]
    assert store.list_streams(after_game_id=games[2], limit=3) == games[3:6]
    assert store.list_streams(after_game_id=games[6]) == []


def test_a_follower_sees_every_event_once_in_order_while_writers_race(
    store: EventStore,
) -> None:
    writers, appends_per_writer = 4, 25
    games = [new_game() for _ in range(6)]
    committed: list[tuple[str, int, int]] = []
    committed_lock = threading.Lock()
    writing_done = threading.Event()
    seen: list[RecordedEvent] = []
    errors: list[BaseException] = []

    def write(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(appends_per_writer):
                while True:
                    game = rng.choice(games)
                    version = store.stream_version(game)
                    size = rng.randint(1, 3)
                    try:
                        result = store.append(game, version, numbered(size))
                    except ConcurrencyError:
                        continue
                    break
                with committed_lock:
                    committed.extend(
                        (game, version, result.last_position - size + i)
                        for i, version in enumerate(
                            range(result.first_version, result.last_version + 1), 1
                        )
                    )
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    def follow() -> None:
        position = 0
        try:
            while True:
                done = writing_done.is_set()
                batch = store.read_all(position, limit=7)
                seen.extend(batch)
                if batch:
                    position = batch[-1].position
                elif done:
                    return
                else:
                    store.wait_for_append(position, 0.2)
        except BaseException as error:
            errors.append(error)

    follower = threading.Thread(target=follow)
    threads = [threading.Thread(target=write, args=(seed,)) for seed in range(writers)]
    follower.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writing_done.set()
    follower.join(timeout=30)

    assert not errors
    assert not follower.is_alive()
    positions = [e.position for e in seen]
    assert positions == sorted(set(positions)), "increasing, each position once"
    assert sorted((e.game_id, e.version, e.position) for e in seen) == sorted(
        committed
    ), "no event skipped"
    assert store.last_position() == max(positions)


def test_subscribe_yields_events_as_they_are_appended(store: EventStore) -> None:
    game = new_game()
    first = store.append(game, 0, numbered(1))
    stop = threading.Event()
    received: list[RecordedEvent] = []
    all_received = threading.Event()

    def subscribe() -> None:
        for event in store.subscribe(after_position=0, stop=stop, idle_timeout=0.1):
            received.append(event)
            if len(received) == 4:
                all_received.set()

    subscriber = threading.Thread(target=subscribe)
    subscriber.start()
    store.append(game, 1, numbered(2, start=2))
    time.sleep(0.05)
    store.append(new_game(), 0, numbered(1))

    assert all_received.wait(5)
    stop.set()
    subscriber.join(5)
    assert received == store.read_all()
    assert received[0].position == first.last_position


def test_many_followers_of_one_game_each_see_every_event_once_in_order(
    store: EventStore,
) -> None:
    game = new_game()
    store.append(game, 0, numbered(1))
    stop = threading.Event()
    followers = 12
    seen: list[list[int]] = [[] for _ in range(followers)]
    done = threading.Barrier(followers + 1)

    def follow(index: int) -> None:
        for event in store.subscribe_stream(game, 1, stop, idle_timeout=0.1):
            seen[index].append(event.version)
            if event.version == 9:
                break
        done.wait(10)

    threads = [threading.Thread(target=follow, args=(i,)) for i in range(followers)]
    for thread in threads:
        thread.start()
    for version in range(1, 9, 2):
        store.append(game, version, numbered(2, start=version + 1))
        time.sleep(0.01)

    done.wait(10)
    stop.set()
    for thread in threads:
        thread.join(5)
    assert seen == [list(range(1, 10))] * followers


def test_async_followers_of_one_game_see_every_event_once_in_order(
    store: EventStore, writer: EventStore
) -> None:
    """Followers on an event loop, woken by appends through this store and
    through ``writer``, each see the game's stream once, in order."""
    game = new_game()
    store.append(game, 0, numbered(1))
    followers = 12

    async def follow() -> list[int]:
        seen = []
        async for event in store.subscribe_stream_async(game, 1, idle_timeout=0.1):
            seen.append(event.version)
            if event.version == 9:
                return seen
        raise AssertionError("the subscription ended")

    def write() -> None:
        for version in range(1, 9, 2):
            through = store if version % 4 == 1 else writer
            through.append(game, version, numbered(2, start=version + 1))
            time.sleep(0.02)

    async def run() -> list[list[int]]:
        tasks = [asyncio.ensure_future(follow()) for _ in range(followers)]
        await asyncio.sleep(0.1)
        await asyncio.to_thread(write)
        return await asyncio.wait_for(asyncio.gather(*tasks), 10)

    assert asyncio.run(run()) == [list(range(1, 10))] * followers


def test_wait_for_append_async_wakes_on_an_append(
    store: EventStore, writer: EventStore
) -> None:
    first = store.append(new_game(), 0, numbered(1)).last_position

    async def run() -> tuple[bool, float, bool]:
        waiter = asyncio.ensure_future(store.wait_for_append_async(first, 10))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        await asyncio.to_thread(writer.append, new_game(), 0, numbered(1))
        woken = await waiter
        quiet = await store.wait_for_append_async(store.last_position(), 0.2)
        return woken, time.monotonic() - started, quiet

    woken, elapsed, quiet = asyncio.run(run())

    assert woken and elapsed < 2
    assert not quiet


def test_async_waiters_hold_no_thread_while_they_wait(store: EventStore) -> None:
    """Coroutines waiting for appends leave the loop's default executor
    free: with more of them than it has threads, an append_async on the
    same loop goes through at once and wakes them all."""
    game = new_game()
    first = store.append(game, 0, numbered(1)).last_position

    async def run() -> tuple[list[bool], float]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(2))
        waits = [store.wait_for_append_async(first, 3) for _ in range(4)]
        waiters = [asyncio.ensure_future(wait) for wait in waits]
        await asyncio.sleep(0.2)
        started = time.monotonic()
        await store.append_async(game, 1, numbered(1))
        woken = await asyncio.gather(*waiters)
        return woken, time.monotonic() - started

    woken, elapsed = asyncio.run(run())

    assert woken == [True] * 4
    assert elapsed < 2


# -- waiting for appends ---------------------------------------------------


def _wake_time(
    waiter_store: EventStore, append: Callable[[], object], after: int
) -> tuple[bool, float]:
    """Wait on ``waiter_store`` in a thread, run ``append``; (woken, seconds)."""
    outcome: list[tuple[bool, float]] = []
    waiting = threading.Event()

    def wait() -> None:
        waiting.set()
        start = time.monotonic()
        woken = waiter_store.wait_for_append(after, timeout=10)
        outcome.append((woken, time.monotonic() - start))

    waiter = threading.Thread(target=wait)
    waiter.start()
    waiting.wait()
    time.sleep(0.2)  # let the waiter block
    append()
    waiter.join(15)
    return outcome[0]


def test_wait_for_append_wakes_on_an_append(
    store: EventStore, writer: EventStore
) -> None:
    first = store.append(new_game(), 0, numbered(1)).last_position

    woken, elapsed = _wake_time(
        store, lambda: writer.append(new_game(), 0, numbered(1)), first
    )

    assert woken
    assert elapsed < 2


def test_wait_for_append_times_out_without_an_append(store: EventStore) -> None:
    last = store.append(new_game(), 0, numbered(2)).last_position
    start = time.monotonic()

    assert store.wait_for_append(last, timeout=0.3) is False
    assert 0.25 <= time.monotonic() - start < 2


def test_interrupting_the_waits_wakes_a_waiter_without_an_append(
    store: EventStore,
) -> None:
    last = store.append(new_game(), 0, numbered(1)).last_position

    woken, elapsed = _wake_time(store, store.interrupt_waits, last)

    assert woken is False  # nothing was appended: it says so
    assert elapsed < 2  # not its timeout of 10 s


def test_a_wait_begun_after_an_interruption_waits_as_usual(store: EventStore) -> None:
    last = store.append(new_game(), 0, numbered(1)).last_position
    store.interrupt_waits()
    start = time.monotonic()

    assert store.wait_for_append(last, timeout=0.3) is False
    assert time.monotonic() - start >= 0.25


def test_wait_for_append_returns_at_once_when_events_are_already_past(
    store: EventStore, writer: EventStore
) -> None:
    last = writer.append(new_game(), 0, numbered(3)).last_position
    start = time.monotonic()

    assert store.wait_for_append(last - 2, timeout=5)
    assert time.monotonic() - start < 2


# -- the command log --------------------------------------------------------


def test_a_command_is_logged_with_the_versions_it_appended(store: EventStore) -> None:
    game = new_game()
    store.append(game, 0, numbered(2))
    logged = command("c-1")

    store.append(game, 2, numbered(3), logged)

    record = store.find_command(game, "c-1")
    assert record is not None
    assert (record.game_id, record.command_id, record.actor) == (game, "c-1", "alice")
    assert record.payload == logged.payload
    assert record.outcome == CommandOutcome(first_version=3, last_version=5)
    assert record.outcome.accepted
    assert record.recorded_at.utcoffset() == timedelta(0)
    assert store.find_command(game, "c-2") is None
    assert store.find_command(new_game(), "c-1") is None


def test_a_repeated_command_returns_the_first_outcome_and_appends_nothing(
    store: EventStore,
) -> None:
    game = new_game()
    store.append(game, 0, numbered(2), command("c-1"))

    with pytest.raises(DuplicateCommand) as at_same_version:
        store.append(game, 0, numbered(2), command("c-1"))
    store.append(game, 2, numbered(1, start=3))
    with pytest.raises(DuplicateCommand) as after_the_stream_moved:
        store.append(game, 3, numbered(5), command("c-1"))

    for raised in (at_same_version, after_the_stream_moved):
        assert raised.value.record.outcome == CommandOutcome(1, 2)
        assert raised.value.record.command_id == "c-1"
    assert store.stream_version(game) == 3
    assert len(store.read_commands(game)) == 1


def test_command_ids_are_per_game(store: EventStore) -> None:
    first, second = new_game(), new_game()
    store.append(first, 0, numbered(1), command("same"))

    store.append(second, 0, numbered(2), command("same"))

    record = store.find_command(second, "same")
    assert record is not None
    assert record.outcome.last_version == 2


def test_racing_retries_of_one_command_append_once(store: EventStore) -> None:
    game = new_game()

    def send(_: int) -> str:
        try:
            store.append(game, 0, numbered(2), command("once"))
        except DuplicateCommand as duplicate:
            assert duplicate.record.outcome == CommandOutcome(1, 2)
            return "duplicate"
        return "appended"

    assert _race(5, send) == ["appended"] + ["duplicate"] * 4
    assert store.stream_version(game) == 2


# -- appending from an event loop -------------------------------------------


def test_append_async_appends_like_append(store: EventStore) -> None:
    game = new_game()

    result = asyncio.run(store.append_async(game, 0, numbered(2), command("a-1")))

    assert (result.first_version, result.last_version) == (1, 2)
    stored = store.read_stream(game)
    assert [e.data for e in stored] == [{"n": 1}, {"n": 2}]
    assert result.last_position == stored[-1].position
    record = store.find_command(game, "a-1")
    assert record is not None and record.outcome == CommandOutcome(1, 2)


def test_append_async_raises_what_append_raises(store: EventStore) -> None:
    game = new_game()
    store.append(game, 0, numbered(2), command("first"))

    with pytest.raises(ConcurrencyError) as stale:
        asyncio.run(store.append_async(game, 1, numbered(1)))
    with pytest.raises(DuplicateCommand) as repeated:
        asyncio.run(store.append_async(game, 2, numbered(1), command("first")))

    assert stale.value.actual == 2
    assert repeated.value.record.outcome == CommandOutcome(1, 2)
    assert store.stream_version(game) == 2


def test_concurrent_async_appends_from_one_version_one_wins(store: EventStore) -> None:
    games = [new_game() for _ in range(8)]

    async def race() -> list[str]:
        async def one(game: str, n: int) -> str:
            try:
                await store.append_async(game, 0, numbered(1, start=n))
            except ConcurrencyError:
                return "conflict"
            return "appended"

        return await asyncio.gather(*(one(g, n) for g in games for n in range(3)))

    outcomes = asyncio.run(race())

    assert outcomes.count("appended") == len(games)
    for game in games:
        assert store.stream_version(game) == 1
    positions = [e.position for e in store.read_all(0, 100)]
    assert positions == sorted(positions) and len(set(positions)) == len(games)


def test_a_rejection_is_logged_once_and_answers_every_retry(store: EventStore) -> None:
    game = new_game()
    refused = rejected("r-1")

    first = store.record_rejection(game, refused)
    again = store.record_rejection(game, rejected("r-1", reason="SOMETHING_ELSE"))

    assert first == again
    assert not first.outcome.accepted
    assert first.outcome.error_reason == "NOT_YOUR_TURN"
    assert first.outcome.error_message == "It is not your turn."
    assert first.decided_at_version == 2
    assert store.find_command(game, "r-1") == first
    with pytest.raises(DuplicateCommand) as raised:
        store.append(game, 0, numbered(1), command("r-1"))
    assert raised.value.record == first
    assert store.stream_version(game) == 0


def test_a_rejection_of_an_appended_command_returns_the_append(
    store: EventStore,
) -> None:
    game = new_game()
    store.append(game, 0, numbered(1), command("c-1"))

    record = store.record_rejection(game, rejected("c-1"))

    assert record.outcome == CommandOutcome(1, 1)


def test_read_commands_pages_after_a_sequence(store: EventStore) -> None:
    game, other = new_game(), new_game()
    for n in range(5):
        store.append(game, n, numbered(1, n + 1), command(f"c-{n}"))
        store.record_rejection(other, rejected(f"o-{n}"))
        store.record_rejection(game, rejected(f"r-{n}"))
    everything = store.read_commands(game)
    assert len(everything) == 10
    pages = []
    after = 0
    while page := store.read_commands(game, after_sequence=after, limit=3):
        pages.append(page)
        after = page[-1].sequence
    assert [len(p) for p in pages] == [3, 3, 3, 1]
    assert [c for p in pages for c in p] == everything
    assert store.read_commands(game, limit=0) == []


def test_refusals_are_counted_per_game(store: EventStore) -> None:
    game, other = new_game(), new_game()
    assert store.count_refusals(game) == 0
    store.append(game, 0, numbered(1), command("c-1"))
    for n in range(4):
        store.record_rejection(game, rejected(f"r-{n}"))
    store.record_rejection(game, rejected("r-0"))  # the same one again
    store.record_rejection(other, rejected("r-9"))
    assert store.count_refusals(game) == 4
    assert store.count_refusals(other) == 1


def test_a_rejection_needs_an_error(store: EventStore) -> None:
    with pytest.raises(ValueError):
        store.record_rejection(new_game(), command())


def test_read_commands_lists_a_games_commands_in_logging_order(
    store: EventStore,
) -> None:
    game, other = new_game(), new_game()
    store.append(game, 0, numbered(1), command("z-first"))
    store.record_rejection(other, rejected("elsewhere"))
    store.record_rejection(game, rejected("a-second"))
    store.append(game, 1, numbered(2), command("m-third"))

    records = store.read_commands(game)

    assert [r.command_id for r in records] == ["z-first", "a-second", "m-third"]
    assert [r.sequence for r in records] == sorted(r.sequence for r in records)
    assert len({r.sequence for r in records}) == 3
    assert [r.outcome.accepted for r in records] == [True, False, True]
    assert store.read_commands(new_game()) == []


# -- snapshots ----------------------------------------------------------------


def test_snapshots_are_saved_replaced_and_loaded(store: EventStore) -> None:
    game = new_game()
    assert store.load_snapshot(game) is None

    store.save_snapshot(Snapshot(game, 10, 1, {"hands": {"p1": [1, 2]}, "z": None}))
    assert store.load_snapshot(game) == Snapshot(
        game, 10, 1, {"hands": {"p1": [1, 2]}, "z": None}
    )

    store.save_snapshot(Snapshot(game, 20, 2, ["replaced"]))
    assert store.load_snapshot(game) == Snapshot(game, 20, 2, ["replaced"])
    assert store.load_snapshot(new_game()) is None


# -- importing a game -----------------------------------------------------------


def exported(count: int = 3) -> tuple[list[RecordedEvent], list[CommandRecord]]:
    """A game as another store exported it: its own game id, positions and
    command sequences, and recording times of the past."""
    start = datetime(2024, 5, 1, 12, tzinfo=UTC)
    events = [
        RecordedEvent(
            game_id="elsewhere",
            version=v,
            position=100 + 2 * v,
            type=f"Type{v}",
            schema_version=v,
            data={"n": v, "list": [v] * v},
            recorded_at=start + timedelta(minutes=v),
        )
        for v in range(1, count + 1)
    ]
    commands = [
        CommandRecord(
            game_id="elsewhere",
            command_id=f"c-{sequence}",
            actor="alice",
            payload={"card": sequence},
            outcome=outcome,
            decided_at_version=sequence,
            recorded_at=start + timedelta(minutes=sequence),
            sequence=sequence,
        )
        for sequence, outcome in [
            (70, CommandOutcome(2, 3)),
            (50, CommandOutcome(1, 1)),
            (60, rejected().outcome),
        ]
    ]
    return events, commands


def test_an_imported_game_keeps_its_events_times_and_command_log(
    store: EventStore,
) -> None:
    before = store.append(new_game(), 0, numbered(2)).last_position
    game = new_game()
    events, commands = exported()

    result = store.import_game(game, events, commands)

    assert (result.first_version, result.last_version) == (1, 3)
    last = result.last_position
    assert last > before
    assert store.read_stream(game) == [
        replace(e, game_id=game, position=position)
        for e, position in zip(events, [last - 2, last - 1, last], strict=True)
    ]
    assert store.read_all(before) == store.read_stream(game)
    logged = store.read_commands(game)
    assert [r.command_id for r in logged] == ["c-50", "c-60", "c-70"]
    assert [r.sequence for r in logged] == sorted({r.sequence for r in logged})
    by_id = {c.command_id: c for c in commands}
    assert [replace(r, sequence=0) for r in logged] == [
        replace(by_id[r.command_id], game_id=game, sequence=0) for r in logged
    ]
    assert store.find_command(game, "c-70") == logged[2]
    assert game in store.list_streams()


@pytest.mark.parametrize("versions", [[], [2, 3], [1, 3], [1, 2, 2]])
def test_an_import_without_versions_one_to_n_is_refused(
    store: EventStore, versions: list[int]
) -> None:
    events, commands = exported(4)
    game = new_game()

    with pytest.raises(ValueError):
        store.import_game(game, [events[v - 1] for v in versions], commands)

    assert store.read_stream(game) == []
    assert store.read_commands(game) == []


def test_importing_over_a_game_with_events_raises_and_writes_nothing(
    store: EventStore,
) -> None:
    game = new_game()
    last = store.append(game, 0, numbered(2), command("c-50")).last_position

    with pytest.raises(ConcurrencyError) as raised:
        store.import_game(game, *exported())

    assert raised.value.actual == 2
    assert [e.data for e in store.read_stream(game)] == [{"n": 1}, {"n": 2}]
    assert [r.command_id for r in store.read_commands(game)] == ["c-50"]
    assert store.last_position() == last


def test_importing_over_a_logged_command_raises_and_writes_nothing(
    store: EventStore,
) -> None:
    """A game without events may have logged a refusal; an import that
    logs the same command id again would replace its record."""
    game = new_game()
    first = store.record_rejection(game, rejected("c-60"))

    with pytest.raises(ConcurrencyError):
        store.import_game(game, *exported())

    assert store.read_stream(game) == []
    assert store.read_commands(game) == [first]
    assert store.last_position() == 0


def test_imported_recording_times_read_back_in_utc(store: EventStore) -> None:
    game = new_game()
    events, commands = exported()
    east = timezone(timedelta(hours=2))
    events = [replace(e, recorded_at=e.recorded_at.astimezone(east)) for e in events]
    commands = [
        replace(c, recorded_at=c.recorded_at.astimezone(east)) for c in commands
    ]

    store.import_game(game, events, commands)

    given = [e.recorded_at for e in events] + sorted(c.recorded_at for c in commands)
    stored = [e.recorded_at for e in store.read_stream(game)]
    stored += [r.recorded_at for r in store.read_commands(game)]
    assert stored == given
    assert {t.utcoffset() for t in stored} == {timedelta(0)}


@pytest.mark.parametrize("naive", ["event", "command"])
def test_an_import_with_a_time_without_zone_is_refused(
    store: EventStore, naive: str
) -> None:
    game = new_game()
    events, commands = exported()
    if naive == "event":
        events[1] = replace(events[1], recorded_at=datetime(2024, 5, 1, 12))
    else:
        commands[1] = replace(commands[1], recorded_at=datetime(2024, 5, 1, 12))

    with pytest.raises(ValueError):
        store.import_game(game, events, commands)

    assert store.read_stream(game) == []
    assert store.read_commands(game) == []
