"""Limits at the door (service/limits.py): one client cannot starve the others,
oversized or malformed requests are refused, and handlers stop when their
client's deadline has passed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
from strata.v1 import game_service_pb2 as pb
from strata.v1 import integration_service_pb2 as integration_pb
from strata.v1 import integration_service_pb2_grpc as integration_grpc

from clients.client import StrataClient, StrataError
from eventstore import migrate
from eventstore.factory import open_store
from service.buckets import TokenBuckets
from service.door import Call, Door
from service.errors import Code, Refusal
from service.limits import Limits, LimitSettings
from service.server import MAX_MESSAGE_BYTES, Running, create_server
from tests.service.test_replays import random_game

GAME = "dinosaurs_extinct"
SUBMIT = "/strata.v1.GameService/SubmitCommand"


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Callable[[LimitSettings], Running]]:
    """Start servers with the given limits (closed after the test)."""
    started: list[tuple[Running, object]] = []

    def start(settings: LimitSettings) -> Running:
        url = f"sqlite:///{tmp_path / f'strata{len(started)}.sqlite3'}"
        migrate.upgrade(url)
        store = open_store(url)
        running = create_server(store, admin_token="admin", limits=settings)
        started.append((running, store))
        return running

    yield start
    for running, store in started:
        running.stop(grace=0.2)
        store.close()  # type: ignore[attr-defined]


def connect(running: Running, token: str = "") -> StrataClient:
    """A client on its own connection (its own gRPC peer: channels to one
    target share connections unless told otherwise)."""
    target = f"127.0.0.1:{running.port}"
    channel = grpc.insecure_channel(
        target, options=[("grpc.use_local_subchannel_pool", 1)]
    )
    client = StrataClient(target, token=token, timeout=5, channel=channel)
    client._owns_channel = True
    return client


def reason_of(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(StrataError) as refused:
        call()
    return refused.value.code, refused.value.reason


def test_a_bucket_allows_its_burst_then_its_rate():
    now = [0.0]
    buckets = TokenBuckets(rate=10, burst=5, clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(6)] == [True] * 5 + [False]
    assert buckets.take("b")  # another key has its own bucket
    now[0] += 0.1  # one token back
    assert buckets.take("a")
    assert not buckets.take("a")


def test_a_rate_of_zero_switches_the_limit_off():
    buckets = TokenBuckets(rate=0, burst=0)
    assert all(buckets.take("a") for _ in range(10_000))
    assert len(buckets) == 0


def test_full_buckets_are_forgotten_when_there_are_many(monkeypatch):
    monkeypatch.setattr("service.buckets._PRUNE_ABOVE", 100)
    now = [0.0]
    buckets = TokenBuckets(rate=100, burst=100, clock=lambda: now[0])
    for i in range(100):
        buckets.take(f"peer{i}")
    now[0] += 10
    buckets.take("late")
    assert len(buckets) <= 2


def test_limits_come_from_the_environment():
    settings = LimitSettings.from_env(
        {"STRATA_RATE_PER_PEER": "7", "STRATA_RATE_PER_GAME": "0"}
    )
    assert settings.rate_per_peer == 7
    assert settings.rate_per_game == 0
    assert LimitSettings.from_env({}) == LimitSettings()


def test_a_flooding_connection_is_rate_limited_and_others_are_not(limited):
    running = limited(LimitSettings(rate_per_peer=5, burst_seconds=1))
    flooder, other = connect(running), connect(running)
    with flooder, other:
        codes = []
        for _ in range(20):
            try:
                flooder.list_game_types()
                codes.append("OK")
            except StrataError as error:
                codes.append(f"{error.code.name}/{error.reason}")
        assert codes[:5] == ["OK"] * 5
        assert codes.count("RESOURCE_EXHAUSTED/RATE_LIMITED") >= 10
        assert other.list_game_types().game_types  # not starved


def test_a_flooded_game_is_rate_limited_and_other_games_are_not(limited):
    running = limited(LimitSettings(rate_per_game=3, burst_seconds=1))
    with connect(running) as client:
        busy = client.create_game(GAME, 2).game_id
        quiet = client.create_game(GAME, 2).game_id
        refused = 0
        for _ in range(15):
            # A new connection each time: the game's limit, not the peer's.
            with connect(running) as fresh:
                try:
                    fresh.get_game(busy)
                except StrataError as error:
                    assert (error.code, error.reason) == (
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        "RATE_LIMITED",
                    )
                    refused += 1
        assert refused >= 10
        assert client.get_game(quiet).game_id == quiet


def test_streams_do_not_take_the_unary_calls_capacity(limited):
    running = limited(LimitSettings(max_calls_per_peer=2))
    with connect(running) as client:
        game_id = client.create_game(GAME, 2).game_id
        request = pb.WatchGameRequest(game_id=game_id)
        streams = [client.stub.WatchGame(request, timeout=10) for _ in range(6)]
        for stream in streams:
            next(stream)  # the GameCreated event: the stream is running
        # More streams than the connection's unary calls, and it is answered.
        assert client.get_game(game_id).game_id == game_id
        assert running.limits is not None
        assert len(running.limits.streams) == 6
        for stream in streams:
            stream.cancel()
        # A client that goes away frees its streams' slots.
        assert eventually(lambda: len(running.limits.streams) == 0)


def eventually(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if check():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_a_stream_stops_working_when_its_deadline_passes(limited):
    running = limited(LimitSettings())
    with connect(running) as client:
        game_id = client.create_game(GAME, 2).game_id
        stream = client.stub.WatchGame(pb.WatchGameRequest(game_id=game_id), timeout=1)
        next(stream)
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as expired:
            next(stream)
        assert expired.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert time.monotonic() - started < 1.5
        # The handler has let go of its slot.
        assert running.limits is not None
        assert eventually(lambda: len(running.limits.streams) == 0), (
            "the expired stream kept running on the server"
        )


def test_a_batched_follower_whose_deadline_passes_mid_log_is_let_go(limited):
    """A follower in batches that reads slowly: its deadline passes while
    the feed still has most of a long log to send (reading, batching, sent
    ahead), and the stream ends with DEADLINE_EXCEEDED and lets go of its
    slot."""
    running = limited(LimitSettings())
    for n in range(12):
        random_game(running.app, GAME, 2, f"deadline-{n}")
    end = running.app.store.last_position()
    with connect(running, "admin") as admin:
        feed = integration_grpc.IntegrationServiceStub(admin.channel)
        follow = feed.FollowLog(
            integration_pb.FollowLogRequest(max_batch=2),
            metadata=(("authorization", "Bearer admin"),),
            timeout=1,
        )
        started = time.monotonic()
        received = 0
        with pytest.raises(grpc.RpcError) as expired:
            for response in follow:
                received += len(response.events)
                time.sleep(0.01)  # a slow reader: about 100 messages a second
        assert expired.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert 0 < received < end / 2, (received, end)  # ended mid-log
        assert time.monotonic() - started < 1.5
        assert running.limits is not None
        assert eventually(lambda: len(running.limits.streams) == 0), (
            "the expired follower kept running on the server"
        )


def test_a_request_over_the_size_limit_is_refused(limited):
    running = limited(LimitSettings(max_request_bytes=4096))
    with connect(running) as client:
        game_id = client.create_game(GAME, 2).game_id
        code, reason = reason_of(lambda: client.join_game(game_id, "x" * 5000))
        assert (code, reason) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "REQUEST_TOO_LARGE",
        )
        assert client.get_game(game_id).version == 1


def test_a_message_over_one_mebibyte_is_refused_by_the_transport(limited):
    running = limited(LimitSettings())
    with connect(running) as client:
        huge = pb.CreateGameRequest(game_type=GAME, players=2, seed="x" * (1 << 20))
        assert huge.ByteSize() > MAX_MESSAGE_BYTES
        with pytest.raises(grpc.RpcError) as refused:
            client.stub.CreateGame(huge, timeout=5)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert client.list_games().games == []


def test_garbage_bytes_get_invalid_argument_not_internal(limited):
    running = limited(LimitSettings())
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        raw = channel.unary_unary(SUBMIT)  # bytes in, bytes out
        for garbage in (b"\xff\xff\xff\xff", b"\x0a\x05ab", b"\x0a\x02\xc3\x28"):
            with pytest.raises(grpc.RpcError) as refused:
                raw(garbage, timeout=5)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, garbage


def _bare_door(
    method: str, time_remaining: Any, flush: Any = None
) -> tuple[Limits, Door, Call]:
    """A door of default limits, and a call of ``GameService/<method>``."""
    limits = Limits()
    call = Call(
        method=f"/strata.v1.GameService/{method}",
        headers={},
        peer="127.0.0.1",
        connection="ipv4:127.0.0.1:1",
        time_remaining=time_remaining,
        flush=flush,
    )
    return limits, Door(limits, ThreadPoolExecutor(1)), call


def test_a_call_whose_deadline_passed_in_the_queue_is_not_started():
    ran = []

    async def handler(request, call):
        ran.append(request)
        return pb.ListGameTypesResponse()

    limits, door, queued = _bare_door("ListGameTypes", lambda: -0.5)
    unary = door.unary(queued.method, handler)

    async def call() -> None:
        await unary(pb.ListGameTypesRequest(), queued)

    with pytest.raises(Refusal) as refused:
        asyncio.run(call())
    assert refused.value.code is Code.DEADLINE_EXCEEDED
    assert ran == []
    assert limits.in_flight() == 0


def test_a_stream_whose_deadline_passes_between_responses_is_refused_not_ended():
    """The caller's deadline passes while its stream is being answered: the
    stream ends DEADLINE_EXCEEDED, not as if it were complete (a client
    slow to act on its own deadline would read a short stream as whole).
    And the transport's flush runs before each wait for a response not
    made yet, never while one is ready."""
    left = [10.0]
    log: list[str] = []

    async def handler(request, call):
        for n in range(4):
            if n == 2:
                await asyncio.sleep(0.01)  # the third response is not ready
            yield f"r{n}"

    async def flush() -> None:
        log.append("flush")

    limits, door, call = _bare_door("WatchGame", lambda: left[0], flush)
    stream = door.stream(call.method, handler)

    async def watch() -> None:
        async for response in stream(pb.WatchGameRequest(game_id="g"), call):
            log.append(response)
            if response == "r2":
                left[0] = -0.1  # the deadline passes

    with pytest.raises(Refusal) as refused:
        asyncio.run(watch())
    assert refused.value.code is Code.DEADLINE_EXCEEDED
    assert log == ["flush", "r0", "r1", "flush", "r2"]
    assert limits.in_flight() == 0


def test_open_watch_streams_hold_no_worker_thread(tmp_path: Path):
    """More live WatchGame and FollowLog streams than worker threads, and
    the calls that need a thread are still answered, and every stream sees
    the new events."""
    url = f"sqlite:///{tmp_path / 'watch.sqlite3'}"
    migrate.upgrade(url)
    store = open_store(url)
    running = create_server(store, admin_token="admin", workers=2)
    try:
        admin = connect(running, "admin")
        game_id = admin.create_game(GAME, 2, seed="watchers").game_id
        streams = [
            admin.stub.WatchGame(pb.WatchGameRequest(game_id=game_id), timeout=20)
            for _ in range(8)
        ]
        for stream in streams:
            assert next(stream).event.version == 1  # open and live
        feed = integration_grpc.IntegrationServiceStub(admin.channel)
        follows = [
            feed.FollowLog(
                integration_pb.FollowLogRequest(),
                metadata=(("authorization", "Bearer admin"),),
                timeout=20,
            )
            for _ in range(4)
        ]
        for follow in follows:
            assert next(follow).event.version == 1

        for seat in range(2):  # JoinGame and GetGame run in worker threads
            admin.join_game(game_id, f"p{seat}", seat)
        assert admin.get_game(game_id).version == 3

        for stream in streams:
            assert [next(stream).event.version for _ in range(2)] == [2, 3]
            stream.cancel()
        for follow in follows:
            assert [next(follow).event.version for _ in range(2)] == [2, 3]
            follow.cancel()
        admin.close()
    finally:
        running.stop(grace=0.2)
        store.close()
