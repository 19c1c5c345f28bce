"""Reads that must not grow with the data, each measured as a ratio.

``listgames``: ListGames at a random full page (a random game id with a
page's worth of games after it as the page token) with few games and with
many, through ``strata serve``: the median
call with ``large`` games ÷ with ``small`` (the service keeps its game list
in a read model; a page costs the same whatever lies beside it).

``follow``: FollowLog from position 0 to the end of the log (``no_follow``)
to a gRPC client, the log's events a second, ÷ the store's own read rate
of the same log (``PostgresEventStore.read_all`` in pages of the feed's
size, in this process): rounds taking turns, the median ratio kept. The
follower asks for batches of 500 events a message (``max_batch``), as a
feed's client of a long log would; the same with one event a message is
reported beside it (a service from before batches sends one a message
whatever is asked).
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
    listed = _listing(stub, ids)
    rng = random.Random(calls)
    tokens = listed[:-PAGE] or listed  # every page a full one
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


def _listing(stub: pb_grpc.GameServiceStub, ids: list[str]) -> list[str]:
    """Every game's id in the listing's order (creation order), once it
    lists every game of ``ids``."""
    deadline = time.monotonic() + 120
    while True:
        listed, token = [], ""
        while True:
            page = stub.ListGames(pb.ListGamesRequest(page_size=500, page_token=token))
            listed += [g.game_id for g in page.games]
            token = page.next_page_token
            if not token:
                break
        if set(ids) <= set(listed):
            return listed
        if time.monotonic() > deadline:
            raise RuntimeError("the game list did not catch up within 120 s")
        time.sleep(0.2)


def follow(database: Database, events: int, rounds: int) -> dict[str, Any]:
    """FollowLog's rate ÷ the store's read rate over a log of at least
    ``events`` events (see the module's docstring)."""
    store = PostgresEventStore(database.url)
    # No background work: the timed games an earlier phase left in play
    # would be timed out meanwhile, and the log grow between a round's read
    # of the store and its FollowLog (more events followed than read).
    service = start_service(
        database, workers=8, extra_env={"STRATA_BACKGROUND": "none"}
    )
    try:
        long_game(store, events, snapshot=False)
        with grpc.insecure_channel(service.target) as channel:
            stub = integration_grpc.IntegrationServiceStub(channel)
            _follow_once(stub, BATCH)  # warm: the service's first reads
            per_round = []
            for _ in range(rounds):
                in_store = _read_once(store)
                batched = _follow_once(stub, BATCH)
                per_round.append((batched, in_store, _follow_once(stub, 0)))
    finally:
        service.stop()
        store.close()
    # Both cover the whole log: the rate of each is the log's events over
    # its time (FollowLog sends those of the games this service runs).
    ratios = [r[1] / f[1] for f, r, _ in per_round]
    singles = [r[1] / o[1] for _, r, o in per_round]
    kept = sorted(range(rounds), key=lambda k: ratios[k])[rounds // 2]
    (sent, follow_s), (log_events, read_s), (_, single_s) = per_round[kept]
    return {
        "log_events": log_events,
        "follow_log_events_sent": sent,
        "max_batch": BATCH,
        "follow_log_events_per_second": round(log_events / follow_s),
        "one_a_message_events_per_second": round(log_events / single_s),
        "store_events_per_second": round(log_events / read_s),
        "follow_over_store": round(ratios[kept], 3),
        "one_a_message_over_store": round(singles[kept], 3),
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


#: The follower's batch size (``FollowLogRequest.max_batch``).
BATCH = 500


def _follow_once(
    stub: integration_grpc.IntegrationServiceStub, batch: int
) -> tuple[int, float]:
    """Events received and seconds: FollowLog from the start to the end,
    ``batch`` events a message at most (0: one a message)."""
    count = 0
    started = time.perf_counter()
    request = integration_pb.FollowLogRequest(no_follow=True)
    # A checkout from before batches (``--ab``) has no max_batch to ask.
    if "max_batch" in request.DESCRIPTOR.fields_by_name:
        request.max_batch = batch
    for message in stub.FollowLog(request, metadata=ADMIN):
        count += len(getattr(message, "events", ())) + message.HasField("event")
    return count, time.perf_counter() - started


__all__ = ["follow", "listgames"]
