"""Time controls: deadlines, clocks, and the service acting on a timeout as a
logged command, with an injected clock (no test sleeps but the last two,
which run the timekeeper's loop beside a busy log)."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from clients import cli
from clients.client import deadline
from domain import registry
from domain.errors import InvalidCommand
from domain.session import OPPONENTS_LEFT, Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.callers import Caller
from service.clocks import (
    BOT,
    FORFEIT,
    RETRY,
    SERVICE,
    TimeControl,
    Timekeeper,
    movers,
    seat_clocks,
    timeout_id,
)
from service.errors import Code, InvalidArgument, classify
from service.verification import verify_game


def timed_game(
    app: GameApp,
    control: TimeControl,
    game_type: str = "dinosaurs_extinct",
    seed: str = "clock",
) -> tuple[str, list[str]]:
    game_id, _, _ = app.create_game(
        Caller(admin=True), game_type, 2, seed=seed, time_control=control
    )
    tokens = [app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in (0, 1)]
    app.start_game(app.caller(tokens[0]), game_id)
    return game_id, tokens


def later(seconds: float) -> Any:
    """A clock ``seconds`` ahead of the real one (the store stamps events
    with the real time)."""
    return lambda: datetime.now(UTC) + timedelta(seconds=seconds)


def timeouts(app: GameApp, game_id: str) -> list[Any]:
    return [
        c
        for c in app.store.read_commands(game_id)
        if c.command_id.startswith("timeout-seat-")
    ]


def test_within_the_deadline_nothing_happens() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, _ = timed_game(app, TimeControl(decision_seconds=30))
    version = app.load(game_id).state.version
    assert Timekeeper(app, clock=later(0)).sweep() == 0
    assert Timekeeper(app, clock=later(20)).sweep() == 0
    assert app.load(game_id).state.version == version


def test_past_the_deadline_the_bot_decides_for_the_seat_once() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, _ = timed_game(app, TimeControl(decision_seconds=30))
    state = app.load(game_id).state
    active = sorted(app.load(game_id).session.active_seats(state))
    keeper = Timekeeper(app, clock=later(31))
    assert keeper.act(game_id, TimeControl(decision_seconds=30), later(31)()) == 1
    logged = timeouts(app, game_id)
    assert [c.command_id for c in logged] == [timeout_id(active[0], state.version)]
    assert logged[0].actor == "service"
    assert logged[0].payload["timeout"]["policy"] == BOT
    # The seat stays its player's.
    after = app.load(game_id).state
    assert after.seats == state.seats and after.left == ()
    assert verify_game(app.store, game_id).ok


def test_forfeit_on_time_takes_the_seat_out() -> None:
    app = GameApp(InMemoryEventStore())
    control = TimeControl(decision_seconds=30, on_timeout=FORFEIT)
    game_id, _ = timed_game(app, control)
    assert Timekeeper(app, clock=later(60)).sweep() == 1
    state = app.load(game_id).state
    assert state.status is Status.FINISHED
    assert state.outcome is not None and state.outcome.result == OPPONENTS_LEFT
    assert verify_game(app.store, game_id).ok


def test_a_clock_per_seat_counts_base_plus_increments_minus_time_used() -> None:
    app = GameApp(InMemoryEventStore())
    control = TimeControl(base_seconds=60, increment_seconds=10)
    game_id, tokens = timed_game(app, control, seed="clock-2")
    loaded = app.load(game_id)
    session = loaded.session
    assert session.active_seats(loaded.state) == {0}
    _, actions = app.legal_actions(app.caller(tokens[0]), game_id, 0)
    app.submit(app.caller(tokens[0]), game_id, 0, "roll", actions[0][1])
    # (with this seed the roll ends seat 0's turn)
    assert session.active_seats(app.load(game_id).state) == {1}
    # The stored times, rewritten: every event 5 s after the one before.
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    events = [
        dataclasses.replace(e, recorded_at=t0 + timedelta(seconds=5 * i))
        for i, e in enumerate(app.store.read_stream(game_id))
    ]
    moved = movers(app.store.read_commands(game_id))
    _, clocks = seat_clocks(session, events, control, moved)
    # Seat 0 had to act from the last set-up event (version `started`) to
    # its roll (the events of one command share their time: the last).
    started = app.store.find_command(game_id, "start")
    roll = app.store.find_command(game_id, "roll")
    assert started is not None and roll is not None
    thought = 5 * (roll.outcome.last_version - started.outcome.last_version)
    assert clocks[0].remaining == timedelta(seconds=60 + 10 - thought)
    assert clocks[0].deadline is None  # not to act now
    # Seat 1 has its whole base, its clock running since the roll.
    assert clocks[1].remaining == timedelta(seconds=60)
    assert clocks[1].deadline == events[-1].recorded_at + timedelta(seconds=60)


def test_the_time_control_is_checked_at_creation() -> None:
    app = GameApp(InMemoryEventStore())
    for wrong in (
        TimeControl(decision_seconds=-1),
        TimeControl(decision_seconds=30, base_seconds=60),
        TimeControl(increment_seconds=5),
        TimeControl(decision_seconds=30, on_timeout="sulk"),
    ):
        with pytest.raises(InvalidCommand) as err:
            app.create_game(Caller(admin=True), "cubosaurs", 2, time_control=wrong)
        assert err.value.reason == "TIME_CONTROL_INVALID"
        # The API answers INVALID_ARGUMENT naming the field.
        refusal = classify(err.value)
        assert refusal is not None and refusal.code is Code.INVALID_ARGUMENT
        assert refusal.field == "time_control"


def test_no_caller_may_use_the_timeout_ids() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, tokens = timed_game(app, TimeControl(decision_seconds=30))
    loaded = app.load(game_id)
    seat = sorted(loaded.session.active_seats(loaded.state))[0]
    _, actions = app.legal_actions(app.caller(tokens[seat]), game_id, seat)
    with pytest.raises(InvalidArgument) as err:
        app.submit(
            app.caller(tokens[seat]),
            game_id,
            seat,
            "timeout-seat-0-at-9",
            actions[0][1],
        )
    assert err.value.reason == "COMMAND_ID_RESERVED"
    assert SERVICE.service


def test_three_racing_deciders_make_exactly_one_timeout_command() -> None:
    store = InMemoryEventStore()
    app = GameApp(store)
    control = TimeControl(decision_seconds=30)
    game_id, _ = timed_game(app, control)
    replicas = [GameApp(store) for _ in range(3)]
    for replica in replicas:
        replica.load(game_id)  # each with its own cache of the game
    # The very instant the decision's deadline passes (the next decision,
    # begun by the timeout's own event, is not out of time then).
    now = store.read_stream(game_id)[-1].recorded_at + timedelta(seconds=30)
    gate = threading.Barrier(3)
    acted: list[int] = []

    def decide(replica: GameApp) -> None:
        gate.wait()
        acted.append(Timekeeper(replica).act(game_id, control, now))

    threads = [threading.Thread(target=decide, args=(r,)) for r in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(acted) == [0, 0, 1]
    assert len(timeouts(app, game_id)) == 1
    assert verify_game(store, game_id).ok


def test_verification_refuses_a_timeout_logged_before_the_deadline() -> None:
    app = GameApp(InMemoryEventStore())
    control = TimeControl(decision_seconds=30)
    game_id, _ = timed_game(app, control)
    loaded = app.load(game_id)
    state = loaded.state
    seat = sorted(loaded.session.active_seats(state))[0]
    # The service acting early (a wrong clock): VerifyGame catches it.
    assert app.timeout(game_id, state, seat, BOT, later(1)(), loaded.session)
    result = verify_game(app.store, game_id)
    assert not result.ok
    assert "had not run out" in result.message


@pytest.mark.parametrize("policy", [BOT, FORFEIT])
@pytest.mark.parametrize(
    "game_type",
    ["dinosaurs_extinct", "cubosaurs", "happy_little_dinosaurs", "escaping_extinction"],
)
def test_a_game_whose_seats_go_silent_still_ends(game_type: str, policy: str) -> None:
    app = GameApp(InMemoryEventStore())
    control = TimeControl(decision_seconds=10, on_timeout=policy)
    game_id, _ = timed_game(app, control, game_type)
    keeper = Timekeeper(app, clock=later(3600))
    for _ in range(3000):
        if app.load(game_id).state.status is Status.FINISHED:
            break
        assert keeper.sweep() == 1
    state = app.load(game_id).state
    assert state.status is Status.FINISHED
    assert verify_game(app.store, game_id).ok
    assert registry.rules_for(game_type)


def test_get_game_carries_the_time_control_and_each_seats_deadline(
    target: str, client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--game", "cubosaurs", "--players", "2", "--deadline", "45"]
    timing = ["--on-timeout", "forfeit"]
    assert cli.main(["create", *args, *timing, "--target", target]) == 0
    game_id = capsys.readouterr().out.strip()
    tokens = [client.join_game(game_id, f"p{s}", seat=s).seat_token for s in (0, 1)]
    client.with_token(tokens[0]).start_game(game_id)
    game = client.get_game(game_id)
    assert game.time_control.decision_seconds == 45
    assert game.time_control.on_timeout == FORFEIT
    by_seat = {c.seat: c for c in game.clocks}
    for seat in game.active_seats:
        deadline = by_seat[seat].deadline.ToDatetime(tzinfo=UTC)
        assert timedelta(0) < deadline - datetime.now(UTC) <= timedelta(seconds=45)
    waiting = set(by_seat) - set(game.active_seats)
    assert all(not by_seat[s].HasField("deadline") for s in waiting)


def test_strata_create_clock_sets_base_and_increment(
    target: str, client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--game", "dinosaurs_extinct", "--players", "2", "--clock", "300+5"]
    assert cli.main(["create", *args, "--target", target]) == 0
    game_id = capsys.readouterr().out.strip()
    for s in (0, 1):
        client.join_game(game_id, f"p{s}", seat=s)
    control = client.get_game(game_id).time_control
    assert (control.base_seconds, control.increment_seconds) == (300, 5)
    assert control.on_timeout == BOT
    remaining = {c.seat: c.remaining_ms for c in client.get_game(game_id).clocks}
    assert remaining == {0: 300_000, 1: 300_000}


def test_watching_a_timed_game_carries_the_clocks_on_its_newest_event(
    client: Any, admin: Any
) -> None:
    game_id = admin.create_game(
        "dinosaurs_extinct", 2, time_control=deadline(40)
    ).game_id
    for s in (0, 1):
        admin.join_game(game_id, f"p{s}", seat=s)
    admin.start_game(game_id)
    responses = list(client.watch_game_with_clocks(game_id, follow=False))
    assert all(not r.clocks for r in responses[:-1])
    clocks = {c.seat: c for c in responses[-1].clocks}
    assert set(clocks) == {0, 1}
    active = client.get_game(game_id).active_seats
    assert all(clocks[s].HasField("deadline") == (s in active) for s in clocks)


def test_in_a_simultaneous_window_every_seat_still_to_act_has_its_clock() -> None:
    app = GameApp(InMemoryEventStore())
    control = TimeControl(decision_seconds=30)
    game_id, tokens = timed_game(app, control, "happy_little_dinosaurs")
    loaded = app.load(game_id)
    assert loaded.session.active_seats(loaded.state) == {0, 1}  # both commit
    before = app.clocks_of(game_id)[1]
    assert before[0].deadline == before[1].deadline is not None
    _, actions = app.legal_actions(app.caller(tokens[0]), game_id, 0)
    app.submit(app.caller(tokens[0]), game_id, 0, "commit", actions[0][1])
    after = app.clocks_of(game_id)[1]
    # Seat 1's decision goes on: the same deadline; seat 0 waits.
    assert after[1].deadline == before[1].deadline
    assert after[0].deadline is None


@pytest.mark.parametrize("policy", [BOT, FORFEIT])
def test_a_players_record_checks_the_services_timeouts_offline(policy: str) -> None:
    """The record holds each event's time, the time control and each
    timeout's instant: the offline verifier (domain alone) checks that the
    seat's time had run out, and refuses a timeout moved before its
    deadline or a time control made longer."""
    import copy

    from domain.fairness import verify_record

    app = GameApp(InMemoryEventStore())
    control = TimeControl(decision_seconds=10, on_timeout=policy)
    game_id, tokens = timed_game(app, control, "cubosaurs")
    keeper = Timekeeper(app, clock=later(3600))
    for _ in range(3000):
        if app.load(game_id).state.status is Status.FINISHED:
            break
        assert keeper.sweep() == 1
    record = app.queries.player_record(app.caller(tokens[0]), game_id)
    assert record["time_control"]["decision_seconds"] == 10
    timed_out = [c for c in record["commands"] if "timeout" in c]
    assert timed_out and all(e["at"] for e in record["events"])
    check = verify_record(record)
    assert check.ok, check.message

    early = copy.deepcopy(record)
    first = next(c for c in early["commands"] if "timeout" in c)
    started = early["events"][first["first_version"] - 2]["at"]
    first["timeout"]["at"] = started  # the instant the decision began
    check = verify_record(early)
    assert not check.ok and "had not run out" in check.message
    assert check.version == first["first_version"]

    slower = copy.deepcopy(record)
    slower["time_control"]["decision_seconds"] = 7200  # two hours to think
    check = verify_record(slower)
    assert not check.ok and "timeout" in check.message


def test_the_timekeeper_reads_a_waiting_games_history_once() -> None:
    """Twice a second the timekeeper checks every timed game; one waiting
    for a person is checked against its clocks as of its version, without
    reading its events and commands again, until something happens."""
    app = GameApp(InMemoryEventStore())
    game_id, tokens = timed_game(app, TimeControl(decision_seconds=30))
    reads: list[str] = []
    read_stream, read_commands = app.store.read_stream, app.store.read_commands

    def stream(game: str, from_version: int = 1, to: Any = None) -> Any:
        if from_version == 1 and to is None:
            reads.append("events")
        return read_stream(game, from_version, to)

    def commands(game: str, *args: Any, **kwargs: Any) -> Any:
        reads.append("commands")
        return read_commands(game, *args, **kwargs)

    app.store.read_stream = stream  # type: ignore[method-assign,assignment]
    app.store.read_commands = commands  # type: ignore[method-assign,assignment]
    keeper = Timekeeper(app, clock=later(10))  # not out of time yet
    for _ in range(20):
        assert keeper.sweep() == 0
    assert reads == ["events", "commands"]
    # A move changes the version: the clocks are worked out again, once.
    loaded = app.load(game_id)
    seat = sorted(loaded.session.active_seats(loaded.state))[0]
    _, actions = app.legal_actions(app.caller(tokens[seat]), game_id, seat)
    app.submit(app.caller(tokens[seat]), game_id, seat, "m1", actions[0][1])
    for _ in range(5):
        keeper.sweep()
    assert reads.count("events") == 2
    # Out of time: it acts, as before.
    assert Timekeeper(app, clock=later(3600)).sweep() == 1


def test_a_timeout_comes_due_among_many_idle_timed_games_without_looking_at_them() -> (
    None
):
    """The timekeeper keeps each timed game's next deadline in a heap: the
    one game whose time runs out is acted on, and the idle ones are not
    loaded again (the sweep that loaded every timed game twice a second
    acted seconds late with hundreds of them)."""
    app = GameApp(InMemoryEventStore())
    idle = [
        timed_game(app, TimeControl(decision_seconds=3600), seed=f"idle-{n}")[0]
        for n in range(150)
    ]
    urgent, _ = timed_game(app, TimeControl(decision_seconds=30), seed="urgent")
    keeper = Timekeeper(app, clock=later(0))
    assert keeper.sweep() == 0
    assert keeper.tracked == 151
    _, clocks = app.clocks_of(urgent)
    deadline = min(c.deadline for c in clocks.values() if c.deadline is not None)
    assert keeper.next_due() == deadline  # the earliest of all

    loaded: list[str] = []
    load = app.load

    def counting(game_id: str, *args: Any, **kwargs: Any) -> Any:
        loaded.append(game_id)
        return load(game_id, *args, **kwargs)

    app.load = counting
    keeper.clock = lambda: deadline
    assert keeper.sweep() == 1
    assert keeper.checks == 1 and set(loaded) == {urgent}
    assert len(timeouts(app, urgent)) == 1
    # The timeout's own events set the game's next deadline; nothing else
    # is due, and no idle game was looked at.
    for _ in range(5):
        assert keeper.sweep() == 0
    assert set(loaded) == {urgent}
    later_due = keeper.next_due()
    assert later_due is not None and later_due > deadline
    assert all(not timeouts(app, g) for g in idle)


def test_a_move_moves_the_deadline_the_timekeeper_waits_for() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, tokens = timed_game(app, TimeControl(decision_seconds=30))
    keeper = Timekeeper(app, clock=later(0))
    keeper.sweep()
    first = keeper.next_due()
    assert first is not None
    loaded = app.load(game_id)
    seat = sorted(loaded.session.active_seats(loaded.state))[0]
    _, actions = app.legal_actions(app.caller(tokens[seat]), game_id, seat)
    app.submit(app.caller(tokens[seat]), game_id, seat, "m1", actions[0][1])
    keeper.sweep()
    moved = keeper.next_due()
    _, clocks = app.clocks_of(game_id)
    assert moved == min(c.deadline for c in clocks.values() if c.deadline)
    assert moved is not None and moved > first
    # The old deadline passing is nothing now (the move reset it).
    keeper.clock = lambda: first
    assert keeper.sweep() == 0 and keeper.checks == 0


def test_the_timekeeper_sleeps_until_the_next_deadline_or_an_append() -> None:
    app = GameApp(InMemoryEventStore())
    timed_game(app, TimeControl(decision_seconds=3600), seed="idle")
    urgent, _ = timed_game(app, TimeControl(decision_seconds=30), seed="urgent")
    now = datetime.now(UTC)
    keeper = Timekeeper(app, clock=lambda: now, every=24 * 3600)
    stop = threading.Event()
    waits: list[tuple[int, float]] = []

    def wait_for_append(after_position: int, timeout: float) -> bool:
        waits.append((after_position, timeout))
        stop.set()
        return False

    app.store.wait_for_append = wait_for_append  # type: ignore[method-assign]
    keeper.run_forever(stop)
    _, clocks = app.clocks_of(urgent)
    deadline = min(c.deadline for c in clocks.values() if c.deadline is not None)
    # One wait: for appends past the end of the log, until the deadline.
    assert waits == [(app.store.last_position(), (deadline - now).total_seconds())]


def test_a_timeout_that_could_not_be_taken_is_tried_again_shortly() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, _ = timed_game(app, TimeControl(decision_seconds=30))
    keeper = Timekeeper(app, clock=later(0))
    keeper.sweep()
    due = keeper.next_due()
    assert due is not None
    timeout, tries = app.timeout, []

    def refused(*args: Any) -> bool:
        tries.append(args[0])
        return False  # as when the bot finds no move: nothing is appended

    app.timeout = refused  # type: ignore[assignment]
    keeper.clock = lambda: due
    assert keeper.sweep() == 0 and tries == [game_id]
    keeper.clock = lambda: due + RETRY / 2
    assert keeper.sweep() == 0 and tries == [game_id]  # not before the retry
    app.timeout = timeout
    keeper.clock = lambda: due + RETRY
    assert keeper.sweep() == 1 and len(timeouts(app, game_id)) == 1


def test_the_deadline_heap_keeps_to_what_is_still_due() -> None:
    """A deadline moved again and again leaves stale entries behind; the
    heap is rebuilt from what is still due before they pile up."""
    app = GameApp(InMemoryEventStore())
    game_id, _ = timed_game(app, TimeControl(decision_seconds=7 * 24 * 3600))
    keeper = Timekeeper(app, clock=later(0))
    keeper.sweep()
    base = datetime.now(UTC) + timedelta(days=1)
    for n in range(5000):  # each a later deadline, as moves would set
        keeper._schedule(game_id, retry=base + timedelta(seconds=n))
    assert len(keeper._heap) <= 2 * 1 + 1024
    assert keeper.next_due() == base + timedelta(seconds=4999)


@contextlib.contextmanager
def _keeping(keeper: Timekeeper) -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(target=keeper.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        keeper.app.store.interrupt_waits()
        thread.join(10)


def _busy(
    app: GameApp, seconds: float, until: Callable[[], bool] = lambda: True
) -> float:
    """Append (a new untimed game) every ~5 ms for at least ``seconds`` and
    at least 50 appends, and until ``until()``; returns the time it took."""
    begun = time.monotonic()
    made = 0
    while time.monotonic() - begun < seconds or made < 50 or not until():
        assert time.monotonic() < begun + 60, "never came"
        app.create_game(Caller(admin=True), "dinosaurs_extinct", 2)
        made += 1
        time.sleep(0.005)
    return time.monotonic() - begun


def test_a_busy_log_of_untimed_games_is_read_once_a_linger() -> None:
    # Given a timekeeper that lets appends gather for 0.25 s, and a store
    # whose log reads are counted
    app = GameApp(InMemoryEventStore())
    keeper = Timekeeper(app, linger=0.25)
    reads: list[int] = []
    original = app.store.read_all_matching

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args[0])
        return original(*args, **kwargs)

    app.store.read_all_matching = counted  # type: ignore[method-assign]
    with _keeping(keeper):
        # When games without a clock are created every ~5 ms for a second
        elapsed = _busy(app, 1.0)
    # Then it read the log about once a linger, not once an append
    assert len(reads) <= elapsed / 0.25 + 4, len(reads)
    assert keeper.position > 0


def test_a_timeout_is_not_late_by_a_linger_on_a_busy_log() -> None:
    # Given a timekeeper with a long linger and a timed game (one second a
    # decision) among games appended to every ~5 ms
    app = GameApp(InMemoryEventStore())
    keeper = Timekeeper(app, linger=2.0)
    game_id, _ = timed_game(app, TimeControl(decision_seconds=1))
    started = app.store.read_stream(game_id)[-1].recorded_at
    with _keeping(keeper):
        # When its deadline passes while the appends keep waking it
        _busy(app, 0.0, until=lambda: bool(timeouts(app, game_id)))
        acted = datetime.now(UTC)
    # Then it acted at the deadline, not a linger after it
    late = (acted - (started + timedelta(seconds=1))).total_seconds()
    assert late < 0.6, late


def test_a_timed_games_clocks_are_worked_out_once_a_version() -> None:
    # Given a timed game, and its full reads counted (the clocks come from
    # the whole game: every event and command)
    app = GameApp(InMemoryEventStore())
    game_id, tokens = timed_game(app, TimeControl(base_seconds=60, increment_seconds=1))
    full_reads = []
    read_stream = app.store.read_stream

    def counting(game: str, from_version: int = 1, *args: Any) -> Any:
        if from_version <= 1:
            full_reads.append(game)
        return read_stream(game, from_version, *args)

    setattr(app.store, "read_stream", counting)  # noqa: B010

    # When its clocks are asked for ten times (a GetGame, a watcher's newest
    # event each), then again after a move
    first = [app.clocks_of(game_id)[1] for _ in range(10)]
    loaded = app.load(game_id)
    seat = min(loaded.session.active_seats(loaded.state))
    _, actions = app.legal_actions(app.caller(tokens[seat]), game_id, seat)
    app.submit(app.caller(tokens[seat]), game_id, seat, "m1", actions[0][1])
    after = [app.clocks_of(game_id)[1] for _ in range(10)]

    # Then the game was read in full once a version, and the clocks are
    # what a full working-out gives at each
    assert full_reads == [game_id, game_id], full_reads
    assert all(clocks == first[0] for clocks in first)
    assert all(clocks == after[0] for clocks in after)
    fresh = seat_clocks(
        app.load(game_id).session,
        read_stream(game_id),
        TimeControl(base_seconds=60, increment_seconds=1),
        movers(app.store.read_commands(game_id)),
    )[1]
    assert after[0] == fresh
    assert after[0][seat].remaining != first[0][seat].remaining  # its move counted
    # ... and what a caller does with its clocks is its own
    after[0].clear()
    assert app.clocks_of(game_id)[1] == fresh
    # ... and a watcher that names the version of its newest event gets the
    # clocks kept as of it without a read of the store
    version = app.load(game_id).state.version
    reads = []
    setattr(app.store, "read_stream", lambda *args: reads.append(args))  # noqa: B010
    assert [app.clocks_of(game_id, version)[1] for _ in range(10)] == [fresh] * 10
    assert reads == []
