"""The use cases over the in-memory store: loading, snapshots, idempotency,
retries on concurrent changes."""

from __future__ import annotations

import threading

import pytest

from domain.errors import RuleViolation
from eventstore.base import Snapshot
from eventstore.memory import InMemoryEventStore
from service import callers, games, seating
from service.application import GameApp
from service.callers import Caller
from service.errors import PermissionDenied

GAME = "dinosaurs_extinct"


def seated(app: GameApp, players: int = 2, seed: str = "app") -> tuple[str, list[str]]:
    game_id, _, _ = app.create_game(Caller(admin=True), GAME, players, seed=seed)
    tokens = []
    for seat in range(players):
        _, token, _ = app.join_game(app.caller(""), game_id, seat, f"p{seat}")
        tokens.append(token)
    app.start_game(app.caller(tokens[0]), game_id)
    return game_id, tokens


def play(app: GameApp, game_id: str, tokens: list[str], commands: int) -> None:
    for n in range(commands):
        loaded = app.load(game_id)
        active = sorted(loaded.session.active_seats(loaded.state))
        if not active:
            return
        seat = active[0]
        _, actions = app.legal_actions(app.caller(tokens[seat]), game_id, seat)
        app.submit(app.caller(tokens[seat]), game_id, seat, f"c{n}", actions[0][1])


def test_a_cold_load_starts_from_the_snapshot(monkeypatch):
    monkeypatch.setattr(games, "SNAPSHOT_EVERY", 10)
    store = InMemoryEventStore()
    app = GameApp(store)
    game_id, tokens = seated(app)
    play(app, game_id, tokens, 40)
    snapshot = store.load_snapshot(game_id)
    assert snapshot is not None and snapshot.version >= 10
    reads: list[int] = []
    original = store.read_stream

    def spy(game_id: str, from_version: int = 1, to_version: int | None = None):
        reads.append(from_version)
        return original(game_id, from_version, to_version)

    monkeypatch.setattr(store, "read_stream", spy)
    cold = GameApp(store).load(game_id)
    assert cold.state == app.load(game_id).state
    assert snapshot.version + 1 in reads
    assert all(v == 1 or v > snapshot.version for v in reads)


def test_a_stale_snapshot_is_ignored_and_the_game_rebuilt(monkeypatch):
    store = InMemoryEventStore()
    app = GameApp(store)
    game_id, tokens = seated(app)
    play(app, game_id, tokens, 10)
    version = store.stream_version(game_id)
    store.save_snapshot(Snapshot(game_id, version, 999, {"not": "a state"}))
    assert GameApp(store).load(game_id).state == app.load(game_id).state


def test_a_refused_command_is_refused_again_with_the_same_reason():
    app = GameApp(InMemoryEventStore())
    game_id, tokens = seated(app)
    loaded = app.load(game_id)
    active = sorted(loaded.session.active_seats(loaded.state))[0]
    waiting = 1 - active
    _, actions = app.legal_actions(app.caller(tokens[active]), game_id, active)
    command = actions[0][1]
    for _ in range(2):
        with pytest.raises(RuleViolation) as refused:
            app.submit(app.caller(tokens[waiting]), game_id, waiting, "same", command)
    assert refused.value.reason
    assert app.store.find_command(game_id, "same") is not None


def test_a_token_cannot_start_a_game_it_is_not_seated_at():
    app = GameApp(InMemoryEventStore())
    game_id, _, _ = app.create_game(Caller(admin=True), GAME, 2, seed="x")
    for seat in range(2):
        app.join_game(app.caller(""), game_id, seat, f"p{seat}")
    with pytest.raises(PermissionDenied):
        app.start_game(app.caller("stranger"), game_id)


def test_concurrent_commands_on_one_game_lose_nothing_and_write_no_version_twice():
    store = InMemoryEventStore()
    apps = [GameApp(store) for _ in range(3)]  # three replicas, one store
    game_id, tokens = seated(apps[0], players=4, seed="race")
    accepted: list[tuple[int, int]] = []
    lock = threading.Lock()

    def player(replica: GameApp, worker: int) -> None:
        for n in range(30):
            loaded = replica.load(game_id)
            active = sorted(loaded.session.active_seats(loaded.state))
            if not active:
                return
            seat = active[0]
            _, actions = replica.legal_actions(
                replica.caller(tokens[seat]), game_id, seat
            )
            if not actions:
                continue
            try:
                result = replica.submit(
                    replica.caller(tokens[seat]),
                    game_id,
                    seat,
                    f"w{worker}-{n}",
                    actions[0][1],
                )
            except RuleViolation:
                continue  # another worker moved first: the move is no longer legal
            with lock:
                accepted.extend((e.version, worker) for e, _ in result.events)

    threads = [threading.Thread(target=player, args=(apps[i % 3], i)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    versions = [r.version for r in store.read_stream(game_id)]
    assert versions == list(range(1, len(versions) + 1))
    assert sorted(v for v, _ in accepted) == sorted(set(v for v, _ in accepted))
    assert {v for v, _ in accepted} <= set(versions)
    final = GameApp(store).load(game_id).state
    assert final == apps[0].load(game_id).state


def _next_move(app: GameApp, game_id: str, tokens: list[str]) -> tuple[int, object]:
    loaded = app.load(game_id)
    seat = sorted(loaded.session.active_seats(loaded.state))[0]
    _, actions = app.legal_actions(app.caller(tokens[seat]), game_id, seat)
    return seat, actions[0][1]


def test_a_replica_with_a_stale_cache_decides_again_on_the_latest_state():
    store = InMemoryEventStore()
    here, there = GameApp(store), GameApp(store)
    game_id, tokens = seated(here)
    here.load(game_id)  # cached here; the other replica moves the game on
    for n in range(3):
        seat, command = _next_move(there, game_id, tokens)
        there.submit(there.caller(tokens[seat]), game_id, seat, f"there-{n}", command)
    seat, command = _next_move(there, game_id, tokens)
    version = store.stream_version(game_id)

    submitted = here.submit(here.caller(tokens[seat]), game_id, seat, "here", command)

    assert submitted.version > version
    assert not submitted.duplicate
    assert store.find_command(game_id, "here") is not None
    assert here.load(game_id, refresh=False).state == there.load(game_id).state


def test_a_stale_cache_never_logs_a_refusal_the_latest_state_would_not_give():
    store = InMemoryEventStore()
    here, there = GameApp(store), GameApp(store)
    game_id, tokens = seated(here)
    cached = here.load(game_id).state
    # Moves until the turn passes to another seat than the cached state's.
    n = 0
    while True:
        seat, command = _next_move(there, game_id, tokens)
        there.submit(there.caller(tokens[seat]), game_id, seat, f"there-{n}", command)
        n += 1
        loaded = there.load(game_id)
        active = sorted(loaded.session.active_seats(loaded.state))
        if active and active != sorted(
            here.load(game_id, refresh=False).session.active_seats(cached)
        ):
            break
    seat, command = _next_move(there, game_id, tokens)

    here.submit(here.caller(tokens[seat]), game_id, seat, "here", command)

    record = store.find_command(game_id, "here")
    assert record is not None and record.outcome.accepted


def test_a_pinned_version_older_than_the_game_is_aborted_but_a_retry_is_answered():
    from service.errors import Aborted

    store = InMemoryEventStore()
    app = GameApp(store)
    game_id, tokens = seated(app)
    seat, command = _next_move(app, game_id, tokens)
    version = store.stream_version(game_id)
    first = app.submit(
        app.caller(tokens[seat]), game_id, seat, "pinned", command, version
    )

    again = app.submit(
        app.caller(tokens[seat]), game_id, seat, "pinned", command, version
    )
    assert again.duplicate and again.version == first.version
    with pytest.raises(Aborted):
        other_seat, other = _next_move(app, game_id, tokens)
        app.submit(
            app.caller(tokens[other_seat]), game_id, other_seat, "new", other, version
        )


def test_seat_tokens_begin_with_the_st_prefix_and_never_with_a_dash():
    app = GameApp(InMemoryEventStore())
    tokens = []
    for n in range(160):
        game_id, _, _ = app.create_game(Caller(admin=True), GAME, 2, seed=f"t{n}")
        for seat in range(2):
            tokens.append(app.join_game(app.caller(""), game_id, seat, f"p{seat}")[1])
    # 320 tokens: without the prefix about five would begin with "-".
    assert all(t.startswith(callers.SEAT_TOKEN_PREFIX) for t in tokens)
    assert len(set(tokens)) == len(tokens)


def test_a_seat_token_issued_before_the_prefix_still_acts(monkeypatch):
    monkeypatch.setattr(seating, "new_seat_token", lambda: "-legacy-token")
    app = GameApp(InMemoryEventStore())
    game_id, tokens = seated(app)
    assert tokens[0] == "-legacy-token" == tokens[1]  # hot-seat: one token
    _, actions = app.legal_actions(app.caller(tokens[0]), game_id, 0)
    assert actions
