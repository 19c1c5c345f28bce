"""The attacks of the abuse-proofing issue, each performed against a real
server on both backends, as an attacker with no token (or with one) would.

Each test is an attack that worked before: it must now be refused with a
clear status, change nothing, cost nothing unbounded and never answer
INTERNAL or someone else's game.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb
from strata.v1 import game_service_pb2_grpc as pb_grpc

from clients.client import StrataClient, StrataError
from eventstore.factory import open_store
from service.housekeeping import Housekeeper
from service.server import Running, create_server
from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS

GAME = "dinosaurs_extinct"


@pytest.fixture
def server(store_url: str) -> Iterator[Running]:
    """A server on each backend (SQLite and PostgreSQL)."""
    store = open_store(store_url)
    running = create_server(
        store, admin_token=ADMIN_TOKEN, port=0, limits=NO_RATE_LIMITS
    )
    try:
        yield running
    finally:
        running.stop(grace=0.5)
        store.close()


def refused(call, code: grpc.StatusCode, reason: str) -> StrataError:
    with pytest.raises(StrataError) as error:
        call()
    assert (error.value.code, error.value.reason) == (code, reason), error.value
    return error.value


# -- 1. anyone could choose a game's seed ---------------------------------------


def test_an_anonymous_creator_cannot_choose_the_seed(client, admin):
    refused(
        lambda: client.create_game(GAME, 2, seed="I-know-what-comes"),
        grpc.StatusCode.PERMISSION_DENIED,
        "SEED_NEEDS_ADMIN",
    )
    seated = client.with_token("st_some-player-token")
    refused(
        lambda: seated.create_game(GAME, 2, seed="I-know-what-comes"),
        grpc.StatusCode.PERMISSION_DENIED,
        "SEED_NEEDS_ADMIN",
    )
    assert not admin.list_games().games  # nothing was created


def test_the_admin_still_chooses_a_seed_and_the_service_draws_the_others(admin):
    chosen = admin.create_game(GAME, 2, seed="lab-seed").game_id
    drawn = [admin.create_game(GAME, 2).game_id for _ in range(2)]
    seeds = [
        admin.get_audit_log(g).events[0].game_created.seed for g in [chosen, *drawn]
    ]
    assert seeds[0] == "lab-seed"
    assert len(set(seeds)) == 3 and all(len(s) >= 32 for s in seeds[1:])


# -- 3. request_id could be claimed by anyone first ------------------------------


def test_a_request_id_belongs_to_its_caller(client):
    ada = client.with_token("st_ada-identity")
    first = ada.create_game("happy_little_dinosaurs", 2, request_id="r-1")
    ada_game = first.game_id
    client.join_game(ada_game, "Ada", seat=0)
    # Another caller with the same key gets a game of its own, as it asked.
    theirs = client.create_game("cubosaurs", 4, request_id="r-1").game_id
    assert theirs != ada_game
    game = client.get_game(theirs)
    assert (game.game_type, game.players) == ("cubosaurs", 4)
    assert not any(s.taken for s in game.seats)
    # The same caller's retry is answered with its own game.
    assert ada.create_game("happy_little_dinosaurs", 2, request_id="r-1").game_id == (
        ada_game
    )


def test_a_different_request_under_a_used_request_id_is_already_exists(
    client: StrataClient,
) -> None:
    ada = client.with_token("st_ada-identity")
    ada.create_game("happy_little_dinosaurs", 2, request_id="r-2")
    others: list[Callable[[], object]] = [
        lambda: ada.create_game("cubosaurs", 4, request_id="r-2"),
        lambda: ada.create_game("happy_little_dinosaurs", 3, request_id="r-2"),
        # With bots (this gave INTERNAL, IndexError).
        lambda: ada.create_game(
            "happy_little_dinosaurs", 2, request_id="r-2", bots={2: "random"}
        ),
        lambda: ada.create_game(
            "happy_little_dinosaurs", 2, request_id="r-2", bots={1: "random"}
        ),
    ]
    for other in others:
        with pytest.raises(StrataError) as error:
            other()
        assert error.value.code in (
            grpc.StatusCode.ALREADY_EXISTS,
            grpc.StatusCode.INVALID_ARGUMENT,  # seat 2 of 2 players
        ), error.value
    bots = ada.create_game("cubosaurs", 3, request_id="r-3", bots={1: "random"})
    again = ada.create_game("cubosaurs", 3, request_id="r-3", bots={1: "random"})
    assert again.game_id == bots.game_id
    refused(
        lambda: ada.create_game("cubosaurs", 3, request_id="r-3", bots={2: "random"}),
        grpc.StatusCode.ALREADY_EXISTS,
        "REQUEST_ID_REUSED",
    )


# -- 7. a NUL character gave INTERNAL on PostgreSQL ------------------------------


def test_a_nul_character_is_refused_on_either_backend(client, admin):
    game_id = client.create_game(GAME, 2).game_id
    before = admin.get_game(game_id)
    refused(
        lambda: client.join_game(game_id, "Ada\x00"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "NUL_CHARACTER",
    )
    refused(
        lambda: client.create_game(GAME, 2, request_id="a\x00b"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_INVALID",
    )
    refused(
        lambda: client.create_game(GAME + "\x00", 2),
        grpc.StatusCode.INVALID_ARGUMENT,
        "NUL_CHARACTER",
    )
    assert admin.get_game(game_id) == before


def test_a_nul_character_in_an_import_is_refused_and_nothing_is_stored(admin):
    game_id = admin.create_game(GAME, 2).game_id
    document = json.loads(admin.export_game(game_id).document)
    document["events"][0]["data"]["seed"] = "a\x00b"
    refused(
        lambda: admin.import_game(json.dumps(document).encode(), "imported"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "EXPORT_MALFORMED",
    )
    refused(
        lambda: admin.get_game("imported"),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )


# -- 8. player names were stored raw --------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "\x1b[2J\x1b[31mAdmin",  # terminal escapes
        "Ada\u202eevil",  # a right-to-left override
        "Ad\u200ba",  # a zero-width space
        "Ada\u2066x\u2069",  # a bidi isolate
        "line\nbreak",
    ],
)
def test_a_name_with_control_or_invisible_characters_is_refused(client, name):
    game_id = client.create_game(GAME, 2).game_id
    refused(
        lambda: client.join_game(game_id, name),
        grpc.StatusCode.INVALID_ARGUMENT,
        "NAME_INVALID",
    )
    assert not any(s.taken for s in client.get_game(game_id).seats)


def test_names_are_stored_in_nfc(client):
    game_id = client.create_game(GAME, 2).game_id
    client.join_game(game_id, "Zoe\u0301", seat=0)  # e + combining acute
    assert client.get_game(game_id).seats[0].player_name == "Zo\u00e9"


# -- 9. huge ids cost memory and logs --------------------------------------------


def test_a_huge_game_id_is_refused_before_any_bucket_or_cache(server, client):
    huge = "g" * 60_000
    error = refused(
        lambda: client.get_game(huge),
        grpc.StatusCode.INVALID_ARGUMENT,
        "GAME_ID_INVALID",
    )
    assert len(error.message) < 200
    for bad in ("a b", "../etc", "x" * 65, "é"):
        refused(
            lambda bad=bad: client.get_game(bad),
            grpc.StatusCode.INVALID_ARGUMENT,
            "GAME_ID_INVALID",
        )
    assert server.app.cached(huge) is None
    assert server.limits is not None
    assert huge not in server.limits.games


# -- 10. errors repeated the input -----------------------------------------------


def test_an_error_quotes_only_a_short_prefix_of_a_long_input(client):
    error = refused(
        lambda: client.create_game("x" * 50_000, 2),
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_GAME_TYPE",
    )
    assert len(error.message) < 200
    game_id = client.create_game(GAME, 2).game_id
    error = refused(
        lambda: client.create_game(GAME, 2, bots={1: "b" * 50_000}),
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_BOT",
    )
    assert len(error.message) < 200
    assert client.get_game(game_id).version == 1


# -- 11. deeply nested JSON gave INTERNAL ----------------------------------------


def test_a_deeply_nested_import_is_invalid_argument(admin):
    for document in (b"[" * 300_000 + b"]" * 300_000, b'{"a":' * 5_000 + b"1"):
        refused(
            lambda document=document: admin.import_game(document, "deep"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "EXPORT_MALFORMED",
        )


def test_a_whole_game_imports_although_it_is_larger_than_other_requests(admin):
    game_id = admin.create_game(GAME, 2, seed="big").game_id
    document = json.loads(admin.export_game(game_id).document)
    document["padding"] = "x" * 150_000  # a long game's size; unknown keys pass
    imported = admin.import_game(json.dumps(document).encode(), "big-copy")
    assert imported.verification.verdict == admin_pb.VERDICT_VERIFIED


def test_an_import_under_an_id_of_the_wrong_shape_is_refused(admin):
    game_id = admin.create_game(GAME, 2).game_id
    document = json.loads(admin.export_game(game_id).document)
    document["game_id"] = "x" * 500
    refused(
        lambda: admin.import_game(json.dumps(document).encode()),
        grpc.StatusCode.INVALID_ARGUMENT,
        "GAME_ID_INVALID",
    )
    assert admin.import_game(
        json.dumps(document).encode(), "a-good-id"
    ).verification.verdict == (admin_pb.VERDICT_VERIFIED)


def test_unknown_fields_do_not_reach_anything(client):
    # A status value no enum has: refused at the edge, not INTERNAL.
    with pytest.raises(StrataError) as error:
        request = pb.ListGamesRequest(status=77)  # type: ignore[arg-type]
        client._call(client.stub.ListGames, request)
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT


# -- 4. refused commands were logged without limit ------------------------------


@pytest.fixture
def few_refusals(store_url: str) -> Iterator[Running]:
    """A server whose games keep at most 20 refusals each."""
    store = open_store(store_url)
    settings = dataclasses.replace(NO_RATE_LIMITS, max_refusals_per_game=20)
    running = create_server(store, admin_token=ADMIN_TOKEN, port=0, limits=settings)
    try:
        yield running
    finally:
        running.stop(grace=0.5)
        store.close()


def test_refused_commands_are_kept_small_and_few(few_refusals: Running) -> None:
    with StrataClient(f"127.0.0.1:{few_refusals.port}", timeout=30) as client:
        admin = client.with_token(ADMIN_TOKEN)
        game_id = client.create_game("happy_little_dinosaurs", 2).game_id
        token = client.join_game(game_id, "Ada", seat=0).seat_token
        client.join_game(game_id, "Bob", seat=1)
        ada = client.with_token(token)
        ada.start_game(game_id)
        before = admin.get_game(game_id).version
        # 60 kB commands, refused by the rules: the body came back twice in
        # each log entry, and 300 of them broke the audit log and export.
        command = pb.GameCommand()
        command.happy_little_dinosaurs.discard_cards.cards.extend(["x" * 1000] * 58)
        for n in range(60):
            with pytest.raises(StrataError) as error:
                ada.submit_command(game_id, 0, command, command_id=f"junk-{n}")
            assert error.value.code in (
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.INVALID_ARGUMENT,
            )
            assert len(error.value.message) < 500
        # A refusal logged is answered again as it was.
        with pytest.raises(StrataError) as again:
            ada.submit_command(game_id, 0, command, command_id="junk-0")
        assert again.value.reason == error.value.reason
        log = admin.get_audit_log(game_id)
        refusals = [c for c in log.commands if not c.accepted]
        assert len(refusals) == 20
        assert log.ByteSize() < 100_000
        assert admin.get_game(game_id).version == before
        assert len(admin.export_game(game_id).document) < 100_000
        assert admin.verify_game(game_id).verdict == admin_pb.VERDICT_VERIFIED


def test_the_audit_log_and_the_export_come_in_pages(client, admin) -> None:
    game_id = admin.create_game(GAME, 2, bots={0: "random", 1: "random"}).game_id
    deadline = time.monotonic() + 60
    while admin.get_game(game_id).status != pb.GAME_STATUS_FINISHED:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    whole = admin.get_audit_log(game_id)
    pages = []
    token = ""
    while True:
        page = admin.get_audit_log_page(game_id, page_size=7, page_token=token)
        assert len(page.events) <= 7 and len(page.commands) <= 7
        pages.append(page)
        token = page.next_page_token
        if not token:
            break
    assert len(pages) > 3
    assert [e for p in pages for e in p.events] == list(whole.events)
    assert [c for p in pages for c in p.commands] == list(whole.commands)
    assert len(whole.events) == admin.get_game(game_id).version
    # The export in pages of 5 joins into a document that imports and verifies.
    paged = admin.export_game(game_id, page_size=5).document
    assert (
        json.loads(paged)["events"]
        == json.loads(admin.export_game(game_id).document)["events"]
    )
    imported = admin.import_game(paged, "paged-copy")
    assert imported.verification.verdict == admin_pb.VERDICT_VERIFIED
    for bad in ("not-a-token", "Zm9v", "LTEuMg"):
        refused(
            lambda bad=bad: admin.get_audit_log_page(game_id, page_token=bad),
            grpc.StatusCode.INVALID_ARGUMENT,
            "PAGE_TOKEN_INVALID",
        )


# -- 2. 256 open WatchGame streams took the whole service down ---------------------


def _connection(target: str) -> grpc.Channel:
    """A connection of its own (channels to one target share one otherwise)."""
    return grpc.insecure_channel(
        target, options=[("grpc.use_local_subchannel_pool", 1)]
    )


def _first_answer(stream: Any) -> str:
    """'event', or the reason a stream was ended with."""
    try:
        next(stream)
        return "event"
    except grpc.RpcError as error:
        return StrataError.from_rpc_error(error).reason


def test_hundreds_of_anonymous_streams_leave_unary_calls_and_health_alone(
    server: Running, target: str, client: StrataClient
) -> None:
    game_id = client.create_game(GAME, 2).game_id
    channels = [_connection(target) for _ in range(4)]
    try:
        streams = [
            pb_grpc.GameServiceStub(channel).WatchGame(
                pb.WatchGameRequest(game_id=game_id), timeout=60
            )
            for channel in channels
            for _ in range(64)
        ]
        answers = Counter(_first_answer(stream) for stream in streams)
        # The address's oldest streams made room for its newest.
        assert set(answers) <= {"event", "STREAM_SHED"}, answers
        assert server.limits is not None
        assert len(server.limits.streams) <= 64
        # Health and every other call are answered while the streams stay.
        health = health_pb2_grpc.HealthStub(channels[0])
        status = health.Check(health_pb2.HealthCheckRequest(), timeout=5).status
        assert status == health_pb2.HealthCheckResponse.SERVING
        assert client.list_game_types().game_types
        assert client.get_game(game_id).version == 1
        client.join_game(game_id, "Ada", seat=0)
        # Every live watcher sees the join, from one reader of the game.
        assert server.app.feeds.watchers(game_id) == len(server.limits.streams)
        live = [s for s in streams if s.is_active()]
        assert live and all(next(s).event.version == 2 for s in live)
        assert len(server.app.feeds) == 1
        for stream in streams:
            stream.cancel()
    finally:
        for channel in channels:
            channel.close()


@pytest.fixture
def few_streams(store_url: str) -> Iterator[Running]:
    """A server with room for four streams in all, three on a game."""
    store = open_store(store_url)
    settings = dataclasses.replace(
        NO_RATE_LIMITS,
        max_streams=4,
        max_streams_per_address=0,
        max_streams_per_game=3,
    )
    running = create_server(store, admin_token=ADMIN_TOKEN, port=0, limits=settings)
    try:
        yield running
    finally:
        running.stop(grace=0.5)
        store.close()


def test_a_stream_over_a_bound_sheds_a_lower_rank_or_is_refused(
    few_streams: Running,
) -> None:
    target = f"127.0.0.1:{few_streams.port}"
    with StrataClient(target, timeout=10) as client, _connection(target) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        one, two = (client.create_game(GAME, 2).game_id for _ in range(2))

        def watch(game_id: str, token: str = "") -> Any:
            metadata = (("authorization", f"Bearer {token}"),) if token else ()
            request = pb.WatchGameRequest(game_id=game_id)
            return stub.WatchGame(request, timeout=30, metadata=metadata)

        anonymous = []
        for _ in range(3):  # one by one: the server sees them in this order
            anonymous.append(watch(one))
            assert _first_answer(anonymous[-1]) == "event"
        # The game's bound: a fourth anonymous watcher of `one` is refused...
        assert _first_answer(watch(one)) == "TOO_MANY_STREAMS"
        # ... and another game has room.
        other = watch(two)
        assert _first_answer(other) == "event"
        # The service's bound (4): an anonymous stream is refused, and so is
        # one with a made-up token (free tokens buy no rank); a seat's player
        # sheds the oldest anonymous stream.
        assert _first_answer(watch(two)) == "TOO_MANY_STREAMS"
        assert _first_answer(watch(two, token="st_made-up")) == "TOO_MANY_STREAMS"
        seat_token = client.join_game(two, "Ada").seat_token
        player = watch(two, token=seat_token)
        assert _first_answer(player) == "event"
        assert _first_answer(anonymous[0]) == "STREAM_SHED"
        # The admin sheds an anonymous stream too, never a player's.
        admin = watch(one, token=ADMIN_TOKEN)
        assert _first_answer(admin) == "event"
        assert _first_answer(anonymous[1]) == "STREAM_SHED"
        assert player.is_active() and anonymous[2].is_active()
        # Unary calls never wait for a stream slot.
        assert client.get_game(one).version == 1
        for stream in (*anonymous, other, player, admin):
            stream.cancel()


# -- 5. no quotas on anonymous work -----------------------------------------------


def limited_server(store_url: str, **settings: Any) -> Running:
    store = open_store(store_url)
    running = create_server(
        store,
        admin_token=ADMIN_TOKEN,
        port=0,
        limits=dataclasses.replace(NO_RATE_LIMITS, **settings),
    )
    running.stores = [store]  # type: ignore[attr-defined]
    return running


@pytest.fixture
def start_limited(store_url: str) -> Iterator[Callable[..., Running]]:
    started: list[Running] = []

    def start(**settings: Any) -> Running:
        running = limited_server(store_url, **settings)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop(grace=0.5)
        for store in running.stores:  # type: ignore[attr-defined]
            store.close()


def _codes(calls: Iterator[Callable[[], object]]) -> Counter[str]:
    out: Counter[str] = Counter()
    for call in calls:
        try:
            call()
            out["OK"] += 1
        except StrataError as error:
            out[error.reason] += 1
    return out


def test_more_connections_from_one_address_buy_no_more_requests(start_limited):
    running = start_limited(rate_per_address=5, burst_seconds=1)
    target = f"127.0.0.1:{running.port}"
    clients = [StrataClient(target, channel=_connection(target)) for _ in range(4)]
    started = time.monotonic()
    codes = _codes(clients[n % 4].list_game_types for n in range(24))
    # The bucket's 5, and 5 a second while the calls took (a busy machine
    # makes them slow).
    allowed = 5 + 5 * (time.monotonic() - started) + 1
    assert codes["OK"] <= allowed and codes["RATE_LIMITED"] >= 24 - allowed, codes
    for c in clients:
        c.channel.close()


def test_more_connections_with_one_token_buy_no_more_requests(start_limited):
    running = start_limited(rate_per_token=5, burst_seconds=1)
    target = f"127.0.0.1:{running.port}"
    tokens = [
        StrataClient(target, token="st_one", channel=_connection(target))
        for _ in range(4)
    ]
    started = time.monotonic()
    codes = _codes(tokens[n % 4].list_game_types for n in range(24))
    allowed = 5 + 5 * (time.monotonic() - started) + 1
    assert codes["OK"] <= allowed and codes["RATE_LIMITED"] >= 24 - allowed, codes
    other = StrataClient(target, token="st_other", channel=_connection(target))
    assert other.list_game_types().game_types
    for c in (*tokens, other):
        c.channel.close()


def test_games_of_bots_cost_their_creator_more(start_limited):
    running = start_limited(creations_per_minute=40)
    with StrataClient(f"127.0.0.1:{running.port}") as client:
        bots = {0: "random", 1: "random", 2: "random"}
        client.create_game("happy_little_dinosaurs", 3, bots=bots)  # costs 31
        refused(
            lambda: client.create_game("happy_little_dinosaurs", 3, bots=bots),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "CREATION_LIMITED",
        )
        for _ in range(9):  # what is left: 9 plain games
            client.create_game(GAME, 2)
        refused(
            lambda: client.create_game(GAME, 2),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "CREATION_LIMITED",
        )
        # The admin is not counted.
        admin = client.with_token(ADMIN_TOKEN)
        assert admin.create_game("happy_little_dinosaurs", 3, bots=bots).game_id


def test_the_bot_moves_of_a_creators_games_share_one_budget(start_limited):
    running = start_limited(bot_moves_per_second=4)
    with StrataClient(f"127.0.0.1:{running.port}") as client:
        admin = client.with_token(ADMIN_TOKEN)
        bots = {0: "random", 1: "random", 2: "random"}
        # The budget is spent from the first game's creation on.
        started = time.monotonic()
        games = [
            client.create_game("happy_little_dinosaurs", 3, bots=bots).game_id
            for _ in range(3)
        ]
        fast = admin.create_game("happy_little_dinosaurs", 3, bots=bots).game_id
        deadline = started + 60
        while admin.get_game(fast).status != pb.GAME_STATUS_FINISHED:
            assert time.monotonic() < deadline, "the admin's bot game was held back"
            time.sleep(0.05)
        elapsed = time.monotonic() - started
        moves = sum(
            1
            for game_id in games
            for c in admin.get_audit_log(game_id).commands
            if c.actor.startswith("bot:") and c.command_id.startswith("bot-seat-")
        )
        # The three games together: the budget's burst, then 4 a second.
        assert moves <= 8 + 4 * (elapsed + 1), (moves, elapsed)
        assert all(admin.get_game(g).status == pb.GAME_STATUS_ACTIVE for g in games), (
            "a throttled game is still played, slowly"
        )


# -- 6. lobby squatting ------------------------------------------------------------


def test_one_caller_cannot_hold_every_open_seat(start_limited):
    running = start_limited(max_open_seats=3)
    with StrataClient(f"127.0.0.1:{running.port}") as client:
        created = [client.create_game(GAME, 2) for _ in range(5)]
        for game in created[:3]:
            client.join_game(game.game_id, "squatter")
        refused(
            lambda: client.join_game(created[3].game_id, "squatter"),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "OPEN_SEATS_LIMIT",
        )
        # The host frees the squatted seat of its game: room for one more.
        host = client.with_token(created[0].host_token)
        host.leave_game(created[0].game_id, 0)
        client.join_game(created[3].game_id, "squatter")
        refused(
            lambda: client.join_game(created[4].game_id, "squatter"),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "OPEN_SEATS_LIMIT",
        )


def test_the_host_the_seat_and_the_admin_may_free_a_seat_before_the_start(
    client: StrataClient, admin: StrataClient
) -> None:
    created = client.create_game(GAME, 3)
    game_id = created.game_id
    assert created.host_token.startswith("st_")
    tokens = [client.join_game(game_id, f"p{s}", seat=s).seat_token for s in range(3)]
    stranger = client.with_token("st_a-stranger")
    other_seat = client.with_token(tokens[1])
    for who in (client, stranger, other_seat):
        refused(
            lambda who=who: who.leave_game(game_id, 0),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
        )
    client.with_token(created.host_token).leave_game(game_id, 0)
    client.with_token(tokens[1]).leave_game(game_id, 1)
    admin.leave_game(game_id, 2)
    game = client.get_game(game_id)
    assert not any(s.taken for s in game.seats)
    refused(
        lambda: admin.leave_game(game_id, 2),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SEAT_FREE",
    )
    events = [e.type for e in client.watch_game(game_id, follow=False)]
    assert events.count("PlayerLeft") == 3
    # Seated again, started: the host frees no seat any more (only the
    # seat's own token or the admin takes a seat out of a started game).
    tokens = [client.join_game(game_id, f"q{s}", seat=s).seat_token for s in range(3)]
    client.with_token(tokens[0]).start_game(game_id)
    refused(
        lambda: client.with_token(created.host_token).leave_game(game_id, 1),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    assert admin.verify_game(game_id).verdict == admin_pb.VERDICT_VERIFIED


def test_a_game_nobody_starts_expires(server: Running, admin: StrataClient) -> None:
    open_game = admin.create_game(GAME, 2).game_id
    admin.join_game(open_game, "Ada")
    started = admin.create_game(GAME, 2).game_id
    for seat in range(2):
        admin.join_game(started, f"p{seat}", seat=seat)
    admin.start_game(started)
    later = datetime.now(UTC) + timedelta(hours=25)
    keeper = Housekeeper(server.app, open_game_hours=24, clock=lambda: later)
    assert keeper.sweep() == 1
    assert keeper.sweep() == 0  # once
    game = admin.get_game(open_game)
    assert game.status == pb.GAME_STATUS_FINISHED
    assert game.outcome.result == "expired" and not game.outcome.winners
    assert admin.get_game(started).status == pb.GAME_STATUS_ACTIVE
    assert admin.verify_game(open_game).verdict == admin_pb.VERDICT_VERIFIED
    log = admin.get_audit_log(open_game)
    expiry = [c for c in log.commands if c.command_id == "expire"]
    assert len(expiry) == 1 and expiry[0].actor == "service"
    refused(
        lambda: admin.join_game(open_game, "Bob"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "GAME_ALREADY_STARTED",
    )
