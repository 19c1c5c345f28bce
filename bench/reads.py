"""Reads that must not grow with the data, each measured as a ratio.

``listgames``: ListGames at a random full page (a random game id with a
page's worth of games after it as the page token) with few games and with
many, through ``strata serve``: the median
call with ``large`` games ÷ with ``small`` (the service keeps its game list
in a read model; a page costs the same whatever lies beside it).

``follow``: FollowLog from position 0 to the end of the log (``no_follow``)
to a gRPC client, the log's events a second, ÷ the store's own read rate
of the same log (``PostgresEventStore.read_all`` in pages of the feed's
size, in this process): rounds taking turns, the median ratio kept.
"""

from __future__ import annotations

import random
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from strata.v1 import game_service_pb2 as pb
from strata.v1 import game_service_pb2_grpc as pb_grpc
from strata.v1 import integration_service_pb2 as integration_pb
from strata.v1 import integration_service_pb2_grpc as integration_grpc

from bench.db import Database, start_service
from bench.store import long_game
from eventstore.postgres import PostgresEventStore
from service.application import GameApp
from service.callers import Caller

GAME = "cubosaurs"
ADMIN = (("authorization", "Bearer bench-admin"),)
#: Threads creating the games (the setup, not measured).
CREATORS = 8
#: The page ListGames is asked for (its default).
PAGE = 50
#: The page the store is read in: the feed's own (service/administration.py).
FEED_PAGE = 500


def listgames(database: Database, small: int, large: int, calls: int) -> dict[str, Any]:
    """ListGames' median and p90 at a random page with ``small`` games, then
    with ``large`` (see the module's docstring)."""
    service = start_service(database, workers=8)
    store = PostgresEventStore(database.url)
    try:
        app = GameApp(store)
        with grpc.insecure_channel(service.target) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            ids = _create(app, small)
            few = _pages(stub, ids, calls)
            ids += _create(app, large - small)
            many = _pages(stub, ids, calls)
    finally:
        service.stop()
        store.close()
    return {
        "games": {"small": small, "large": large},
        "calls": calls,
        "page_size": PAGE,
        "small_ms": few,
        "large_ms": many,
        "large_over_small": round(many["p50"] / few["p50"], 3),
    }


def _create(app: GameApp, games: int) -> list[str]:
    """``games`` two-seat games, one seat taken by a bot, one free."""
    admin = Caller(admin=True)

    def one(n: int) -> str:
        return app.create_game(admin, GAME, 2, bots=[(1, "random")]).game_id

    with ThreadPoolExecutor(CREATORS) as pool:
        return list(pool.map(one, range(games)))


def _pages(
    stub: pb_grpc.GameServiceStub, ids: list[str], calls: int
) -> dict[str, float]:
    """The call's median and p90 (ms) at random pages, once the listing
    shows every game (the projection caught up; not measured)."""
    newest = max(ids)
    deadline = time.monotonic() + 120
    while True:
        top = stub.ListGames(pb.ListGamesRequest(newest_first=True, page_size=1))
        if top.games and top.games[0].game_id == newest:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("the game list did not catch up within 120 s")
        time.sleep(0.2)
    rng = random.Random(calls)
    tokens = sorted(ids)[:-PAGE] or ids  # every page a full one
    seconds = []
    for _ in range(calls):
        request = pb.ListGamesRequest(page_token=rng.choice(tokens), page_size=PAGE)
        started = time.perf_counter()
        stub.ListGames(request)
        seconds.append(time.perf_counter() - started)
    seconds.sort()
    return {
        "p50": round(statistics.median(seconds) * 1000, 3),
        "p90": round(seconds[int(len(seconds) * 0.9)] * 1000, 3),
    }


def follow(database: Database, events: int, rounds: int) -> dict[str, Any]:
    """FollowLog's rate ÷ the store's read rate over a log of at least
    ``events`` events (see the module's docstring)."""
    store = PostgresEventStore(database.url)
    service = start_service(database, workers=8)
    try:
        long_game(store, events, snapshot=False)
        with grpc.insecure_channel(service.target) as channel:
            stub = integration_grpc.IntegrationServiceStub(channel)
            _follow_once(stub)  # warm: the service's first reads
            per_round = []
            for _ in range(rounds):
                in_store = _read_once(store)
                per_round.append((_follow_once(stub), in_store))
    finally:
        service.stop()
        store.close()
    # Both cover the whole log: the rate of each is the log's events over
    # its time (FollowLog sends those of the games this service runs).
    ratios = [r[1] / f[1] for f, r in per_round]
    kept = sorted(range(rounds), key=lambda k: ratios[k])[rounds // 2]
    (sent, follow_s), (log_events, read_s) = per_round[kept]
    return {
        "log_events": log_events,
        "follow_log_events_sent": sent,
        "follow_log_events_per_second": round(log_events / follow_s),
        "store_events_per_second": round(log_events / read_s),
        "follow_over_store": round(ratios[kept], 3),
        "rounds": [round(r, 3) for r in ratios],
    }


def _read_once(store: PostgresEventStore) -> tuple[int, float]:
    """Events read and seconds: the whole log, a page at a time."""
    position, count = 0, 0
    started = time.perf_counter()
    while page := store.read_all(position, FEED_PAGE):
        count += len(page)
        position = page[-1].position
    return count, time.perf_counter() - started


def _follow_once(stub: integration_grpc.IntegrationServiceStub) -> tuple[int, float]:
    """Events received and seconds: FollowLog from the start to the end."""
    count = 0
    started = time.perf_counter()
    request = integration_pb.FollowLogRequest(no_follow=True)
    for message in stub.FollowLog(request, metadata=ADMIN):
        if message.HasField("event"):
            count += 1
    return count, time.perf_counter() - started


__all__ = ["follow", "listgames"]
