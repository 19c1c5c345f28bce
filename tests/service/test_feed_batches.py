"""The integration feed in batches (FollowLogRequest.max_batch), end to end
through a real server over gRPC, Connect and gRPC-Web: the same events as one
a message, in order, in fewer messages; a batch never waits to be filled
(a live follower gets a new event at once); a batch size out of range is
refused naming its field."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
from typing import Any

import grpc
import pytest
from strata.v1 import integration_service_pb2 as integration_pb

from clients import cli
from clients.client import StrataClient, StrataError
from eventstore import migrate
from service import admin
from service.server import Running
from tests.conftest import DEFAULT_POSTGRES_URL
from tests.service.conftest import ADMIN_TOKEN, TRANSPORTS, client_for, serve
from tests.service.test_replays import random_game


@pytest.fixture(params=TRANSPORTS)
def feed(request: pytest.FixtureRequest, server: Running) -> Any:
    with client_for(server, request.param) as client:
        yield client.with_token(ADMIN_TOKEN)


def events_of(responses: Any) -> list[Any]:
    return [e for r in responses for e in ([r.event] if r.HasField("event") else [])]


def test_batches_carry_the_same_events_in_order_in_fewer_messages(
    server: Running, feed: StrataClient
) -> None:
    for seed in ("a", "b"):
        random_game(server.app, "dinosaurs_extinct", 2, f"batches-{seed}")
    one_a_message = events_of(feed.follow_log(follow=False))
    assert len(one_a_message) == server.app.store.last_position() > 20

    batched = list(feed.follow_log(follow=False, max_batch=7))
    with_events = [r for r in batched if r.events]
    assert [e for r in with_events for e in r.events] == one_a_message
    assert all(not r.HasField("event") for r in batched)
    assert all(len(r.events) <= 7 for r in with_events)
    assert all(r.position == r.events[-1].position for r in with_events)
    # One page of the log at hand: every message but the last is full.
    assert [len(r.events) for r in with_events[:-1]] == [7] * (len(with_events) - 1)

    # Filters and resuming work the same in batches.
    finished = events_of(feed.follow_log(event_types=["GameFinished"], follow=False))
    in_batches = [
        e
        for r in feed.follow_log(
            event_types=["GameFinished"], follow=False, max_batch=500
        )
        for e in r.events
    ]
    assert in_batches == finished and len(finished) == 2
    middle = one_a_message[len(one_a_message) // 2].position
    resumed = [
        e
        for r in feed.follow_log(after_position=middle, follow=False, max_batch=500)
        for e in r.events
    ]
    assert resumed == [e for e in one_a_message if e.position > middle]


def test_a_batch_is_cut_by_bytes_too_so_large_events_stay_under_a_clients_limit(
    server: Running, feed: StrataClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of 500 large events could pass the 4 MiB a gRPC client
    receives by default, and such a follower could never resume past it; a
    batch holds at most FEED_BATCH_BYTES of events (here made small, so
    that ordinary events cross it)."""
    random_game(server.app, "dinosaurs_extinct", 2, "bytes")
    every = events_of(feed.follow_log(follow=False))
    cap = 3 * max(e.ByteSize() for e in every)
    monkeypatch.setattr(admin, "FEED_BATCH_BYTES", cap)

    batched = [r for r in feed.follow_log(follow=False, max_batch=500) if r.events]
    assert [e for r in batched for e in r.events] == every
    assert sum(e.ByteSize() for e in every) > 2 * cap  # so cut at least twice
    for response in batched:
        assert sum(e.ByteSize() for e in response.events) <= cap
        assert response.position == response.events[-1].position
    # Each message's position resumes the feed where it left off.
    middle = batched[len(batched) // 2].position
    resumed = [
        e
        for r in feed.follow_log(after_position=middle, follow=False, max_batch=500)
        for e in r.events
    ]
    assert resumed == [e for e in every if e.position > middle]


def test_a_live_follower_in_batches_gets_a_new_event_without_waiting_for_more(
    server: Running,
) -> None:
    random_game(server.app, "dinosaurs_extinct", 2, "live")
    end = server.app.store.last_position()
    received: queue.Queue[integration_pb.FollowLogResponse] = queue.Queue()
    with StrataClient(f"127.0.0.1:{server.port}", token=ADMIN_TOKEN) as client:
        stream = client.follow_log(max_batch=500)

        def follow() -> None:
            # Until the client is closed at the end of the test.
            with contextlib.suppress(StrataError, ValueError):
                for response in stream:
                    received.put(response)

        threading.Thread(target=follow, daemon=True).start()
        seen = 0
        while seen < end:
            seen = max(seen, received.get(timeout=10).position)
        game_id = random_game(server.app, "dinosaurs_extinct", 2, "live-2")
        # The new game's first event comes at once, in a batch not full.
        response = received.get(timeout=10)
        while not response.events:
            response = received.get(timeout=10)
        assert response.events[0].game_id == game_id
        assert response.events[0].position == end + 1


@pytest.mark.parametrize("size", [-1, 501])
def test_a_batch_size_out_of_range_is_refused_naming_its_field(
    feed: StrataClient, size: int
) -> None:
    with pytest.raises(StrataError) as refused:
        list(feed.follow_log(follow=False, max_batch=size))
    error = refused.value
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert (error.reason, error.field) == ("BATCH_OUT_OF_RANGE", "max_batch")


def test_strata_follow_prints_every_event_once_in_order(
    server: Running,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`strata follow` asks for batches and prints each event as a line of
    JSON, as it did one event a message."""
    random_game(server.app, "dinosaurs_extinct", 2, "cli")
    monkeypatch.setenv("STRATA_ADMIN_TOKEN", ADMIN_TOKEN)
    target = f"127.0.0.1:{server.port}"
    args = ["follow", "--no-follow", "--target", target]
    assert cli.main([*args, "--after-position", "3"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    end = server.app.store.last_position()
    assert [int(line["position"]) for line in lines] == list(range(4, end + 1))
    assert [line["type"] for line in lines].count("GameFinished") == 1


@pytest.mark.postgres
@pytest.mark.holds_cluster
def test_a_feed_to_the_end_held_back_on_postgresql_ends_at_the_end(
    postgres_server: Any,
) -> None:
    # A transaction running elsewhere in the cluster holds PostgreSQL's log
    # back: a feed without follow read nothing past the hold and ended there,
    # short of the log's end. It ends at the end the log had when it began.
    import psycopg

    url = postgres_server.create_schema()
    migrate.upgrade(url)
    holder = psycopg.connect(
        os.environ.get("STRATA_TEST_DATABASE_URL", DEFAULT_POSTGRES_URL)
    )
    served = serve(url)
    running = next(served)
    release = threading.Timer(0.8, holder.commit)
    try:
        holder.execute("SELECT txid_current()")  # an id: it holds the log back
        random_game(running.app, "dinosaurs_extinct", 2, "held-feed")
        release.start()
        with client_for(running, "grpc") as client:
            events = events_of(client.with_token(ADMIN_TOKEN).follow_log(follow=False))
        store = running.app.store
        assert events and events[-1].position == store.last_position()
        assert len(events) == len(store.read_all(0, 100_000))
    finally:
        release.cancel()
        holder.close()
        with contextlib.suppress(StopIteration):
            next(served)
