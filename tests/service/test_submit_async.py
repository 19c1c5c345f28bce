"""GameApp.submit_async, the command path on the event loop, on both stores:
its answers are the ones GameApp.submit gives, whatever the cache holds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from domain.errors import DomainError
from eventstore.base import EventStore
from service.application import GameApp
from service.commands import Submitted
from service.errors import Aborted, AlreadyExists, PermissionDenied
from tests.service.test_application import _next_move, seated


def _submit(
    app: GameApp,
    token: str,
    game_id: str,
    seat: int,
    command_id: str,
    command: Any,
    expected_version: int | None = None,
) -> Submitted:
    return asyncio.run(
        app.submit_async(
            app.caller(token), game_id, seat, command_id, command, expected_version
        )
    )


def test_a_command_on_the_cached_state_is_appended_and_logged(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
):
    app = GameApp(store)
    game_id, tokens = seated(app)
    version = store.stream_version(game_id)
    seat, command = _next_move(app, game_id, tokens)

    def slow_path(*args: object) -> Submitted:
        raise AssertionError("the common case left the event loop")

    monkeypatch.setattr(app.commands, "_submit", slow_path)

    submitted = _submit(app, tokens[seat], game_id, seat, "c-1", command)

    assert not submitted.duplicate
    assert submitted.version == store.stream_version(game_id) > version
    assert [r.version for r, _ in submitted.events] == list(
        range(version + 1, submitted.version + 1)
    )
    assert [r.position for r, _ in submitted.events] == [
        e.position for e in store.read_stream(game_id, version + 1)
    ]
    record = store.find_command(game_id, "c-1")
    assert record is not None and record.outcome.last_version == submitted.version
    assert app.cached(game_id) is not None
    assert app.cached(game_id).state == GameApp(store).load(game_id).state  # type: ignore[union-attr]


def test_a_repeated_command_id_gets_the_first_answer(store: EventStore):
    app = GameApp(store)
    game_id, tokens = seated(app)
    seat, command = _next_move(app, game_id, tokens)
    first = _submit(app, tokens[seat], game_id, seat, "again", command)

    second = _submit(app, tokens[seat], game_id, seat, "again", command)

    assert second.duplicate
    assert second.version == first.version == store.stream_version(game_id)
    assert [r.version for r, _ in second.events] == [r.version for r, _ in first.events]


def test_a_stale_cache_decides_again_on_the_latest_state(store: EventStore):
    here, there = GameApp(store), GameApp(store)
    game_id, tokens = seated(here)
    here.load(game_id)  # cached here; the other replica moves the game on
    for n in range(3):
        seat, command = _next_move(there, game_id, tokens)
        there.submit(there.caller(tokens[seat]), game_id, seat, f"there-{n}", command)
    seat, command = _next_move(there, game_id, tokens)
    version = store.stream_version(game_id)

    submitted = _submit(here, tokens[seat], game_id, seat, "here", command)

    assert submitted.version > version
    assert here.cached(game_id).state == there.load(game_id).state  # type: ignore[union-attr]


def test_refusals_and_mismatches_are_those_of_submit(store: EventStore):
    app = GameApp(store)
    game_id, tokens = seated(app)
    seat, command = _next_move(app, game_id, tokens)
    other = 1 - seat
    version = store.stream_version(game_id)

    with pytest.raises(PermissionDenied):
        _submit(app, tokens[other], game_id, seat, "not-mine", command)
    with pytest.raises(Aborted):
        _submit(app, tokens[seat], game_id, seat, "pinned", command, version - 1)
    with pytest.raises(DomainError) as refused:
        _submit(app, tokens[other], game_id, other, "not-my-turn", command)

    assert store.stream_version(game_id) == version
    record = store.find_command(game_id, "not-my-turn")
    assert record is not None and record.outcome.error_reason == refused.value.reason


def test_concurrent_commands_on_one_loop_write_no_version_twice(store: EventStore):
    app = GameApp(store)
    game_id, tokens = seated(app)
    seat, command = _next_move(app, game_id, tokens)

    async def race() -> list[Submitted | BaseException]:
        return await asyncio.gather(
            *(
                app.submit_async(
                    app.caller(tokens[seat]), game_id, seat, f"race-{n}", command
                )
                for n in range(6)
            ),
            return_exceptions=True,
        )

    answers = asyncio.run(race())

    accepted = [a for a in answers if isinstance(a, Submitted)]
    assert accepted, answers
    versions = [e.version for e in store.read_stream(game_id)]
    assert versions == list(range(1, len(versions) + 1))
    logged = {c.command_id for c in store.read_commands(game_id)}
    for n, answer in enumerate(answers):
        assert f"race-{n}" in logged
        if isinstance(answer, Submitted):
            assert answer.version <= versions[-1]
        else:
            assert isinstance(answer, DomainError | Aborted), answer


@pytest.mark.parametrize("cache", ["cached", "uncached"])
def test_another_tokens_command_id_is_refused_on_the_fast_and_the_slow_path(
    store: EventStore, monkeypatch: pytest.MonkeyPatch, cache: str
):
    app = GameApp(store, admin_token="the-admin")
    game_id, tokens = seated(app)
    a, command = _next_move(app, game_id, tokens)
    first = _submit(app, tokens[a], game_id, a, "a-move", command)
    for n in range(200):  # moves until the other seat's turn
        seat, command = _next_move(app, game_id, tokens)
        if seat != a:
            break
        app.submit(app.caller(tokens[a]), game_id, a, f"a-{n}", command)
    b = 1 - a
    assert seat == b
    # "cached": the game as the last append left it; "uncached": a replica
    # that has not loaded it.
    here = app if cache == "cached" else GameApp(store, admin_token="the-admin")
    tried: list[str] = []
    fast_append = store.append_async

    async def append_async(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fast_append(*args, **kwargs)
        except Exception as error:
            tried.append(type(error).__name__)
            raise

    slow_submit = here.commands._submit

    def submit(*args: Any, **kwargs: Any) -> Submitted:
        tried.append("submit")
        return slow_submit(*args, **kwargs)

    monkeypatch.setattr(store, "append_async", append_async)
    monkeypatch.setattr(here.commands, "_submit", submit)
    version = store.stream_version(game_id)
    log = store.read_commands(game_id)

    with pytest.raises(AlreadyExists) as taken:
        _submit(here, tokens[b], game_id, b, "a-move", command)

    assert taken.value.reason == "COMMAND_ID_TAKEN"
    # The fast path finds the id logged and starts over in submit, which
    # refuses it; without a cached game submit is the only path.
    assert tried == (
        ["DuplicateCommand", "submit"] if cache == "cached" else ["submit"]
    )
    assert store.stream_version(game_id) == version
    assert store.read_commands(game_id) == log
    for token, at in ((tokens[a], a), ("the-admin", b)):
        again = _submit(here, token, game_id, at, "a-move", command)
        assert again.duplicate and again.version == first.version
        assert [r.version for r, _ in again.events] == [
            r.version for r, _ in first.events
        ]
    assert store.stream_version(game_id) == version
    assert store.read_commands(game_id) == log


def _counting_decisions(
    app: GameApp, game_id: str, monkeypatch: pytest.MonkeyPatch
) -> list[int]:
    """The version of each state the rules decide a command on, as they do."""
    decided: list[int] = []
    # Of another app: a load of ``app``'s own would refresh its cache.
    session = type(GameApp(app.store).load(game_id).session)
    advance = session.advance

    def counted(self: Any, state: Any, *args: Any) -> Any:
        decided.append(state.version)
        return advance(self, state, *args)

    monkeypatch.setattr(session, "advance", counted)
    return decided


def test_a_refusal_on_the_latest_state_is_decided_once(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
):
    app = GameApp(store)
    game_id, tokens = seated(app)
    seat, command = _next_move(app, game_id, tokens)
    other = 1 - seat
    version = store.stream_version(game_id)
    decided = _counting_decisions(app, game_id, monkeypatch)

    with pytest.raises(DomainError) as refused:
        _submit(app, tokens[other], game_id, other, "not-my-turn", command)

    # Decided on the cached state; the store's state is that one: its answer
    # stands (it was decided three times before).
    assert decided == [version]
    record = store.find_command(game_id, "not-my-turn")
    assert record is not None and record.outcome.error_reason == refused.value.reason
    with pytest.raises(DomainError) as again:
        _submit(app, tokens[other], game_id, other, "not-my-turn", command)
    assert again.value.reason == refused.value.reason


def test_a_refusal_on_a_stale_cache_is_decided_again_on_the_latest_state(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
):
    here, there = GameApp(store), GameApp(store)
    game_id, tokens = seated(here)
    first, _ = _next_move(here, game_id, tokens)  # cached here at this version
    cached = store.stream_version(game_id)
    for n in range(200):  # the other replica plays until the other seat's turn
        seat, command = _next_move(there, game_id, tokens)
        if seat != first:
            break
        there.submit(there.caller(tokens[seat]), game_id, seat, f"there-{n}", command)
    assert seat != first
    latest = store.stream_version(game_id)
    decided = _counting_decisions(here, game_id, monkeypatch)

    submitted = _submit(here, tokens[seat], game_id, seat, "now-mine", command)

    # Refused on the stale cache (not this seat's turn there), accepted on
    # the latest state.
    assert decided == [cached, latest]
    assert submitted.version > latest == submitted.events[0][0].version - 1
