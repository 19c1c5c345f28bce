"""The lobby's attacks of the second hostile-load round (issue 26, items 4
and 9), each performed through a real server: racing joins from one
address against the open-seat bound, racing quick joins that spread over
half-full games, request ids shared by everyone behind one address, and
look-alike names in one game.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import grpc
import pytest

from clients.client import StrataClient, StrataError, deadline
from eventstore.factory import open_store
from service import matchmaking
from service.server import Running, create_server
from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS, client_for

GAME = "cubosaurs"


@pytest.fixture
def start(sqlite_url: str) -> Iterator[Callable[..., Running]]:
    """Starts servers on one SQLite store with the test limits and the given
    ones (gRPC and HTTP listeners); stops them after the test."""
    started: list[tuple[Running, Any]] = []

    def start_one(**limits: Any) -> Running:
        store = open_store(sqlite_url)
        running = create_server(
            store,
            admin_token=ADMIN_TOKEN,
            port=0,
            http_port=0,
            limits=dataclasses.replace(NO_RATE_LIMITS, **limits),
        )
        started.append((running, store))
        return running

    yield start_one
    for running, store in started:
        running.stop(grace=0.5)
        store.close()


def connection(running: Running) -> StrataClient:
    """A client on a connection of its own (channels to one target share
    one otherwise); every one calls from 127.0.0.1."""
    target = f"127.0.0.1:{running.port}"
    channel = grpc.insecure_channel(
        target, options=[("grpc.use_local_subchannel_pool", 1)]
    )
    return StrataClient(target, channel=channel, timeout=60)


def at_once(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run ``calls`` together, each in a thread of its own released by one
    barrier; each one's answer, or the StrataError it raised."""
    gate = threading.Barrier(len(calls))
    answers: list[Any] = [None] * len(calls)

    def run(n: int) -> None:
        gate.wait()
        try:
            answers[n] = calls[n]()
        except StrataError as error:
            answers[n] = error

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def reasons(answers: list[Any]) -> Counter[str]:
    return Counter(a.reason if isinstance(a, StrataError) else "OK" for a in answers)


# -- 4. the open-seat bound was check-then-act -------------------------------------


def test_racing_joins_from_one_address_take_no_more_seats_than_the_bound(
    start: Callable[..., Running],
) -> None:
    running = start(max_open_seats=8)
    admin = connection(running).with_token(ADMIN_TOKEN)
    games = [admin.create_game(GAME, 2).game_id for _ in range(40)]
    clients = [connection(running) for _ in games]
    answers = at_once(
        [
            partial(c.join_game, g, "squatter")
            for c, g in zip(clients, games, strict=True)
        ]
    )
    counted = reasons(answers)
    assert counted["OK"] == 8, counted
    assert counted["OPEN_SEATS_LIMIT"] == 32, counted
    taken = sum(1 for g in games for seat in admin.get_game(g).seats if seat.taken)
    assert taken == 8
    # A seat given back makes room for exactly one more.
    n = next(n for n, a in enumerate(answers) if not isinstance(a, StrataError))
    joined_game, seated = games[n], answers[n]
    clients[n].with_token(seated.seat_token).leave_game(joined_game, seated.seat)
    again = at_once([partial(c.join_game, joined_game, "again") for c in clients])
    assert reasons(again)["OK"] == 1


def test_racing_quick_joins_from_one_address_take_no_more_seats_than_the_bound(
    start: Callable[..., Running],
) -> None:
    running = start(max_open_seats=8)
    clients = [connection(running) for _ in range(40)]
    answers = at_once([partial(c.find_game, GAME, 2, "quick") for c in clients])
    counted = reasons(answers)
    assert counted["OK"] == 8, counted
    assert counted["OPEN_SEATS_LIMIT"] == 32, counted
    admin = clients[0].with_token(ADMIN_TOKEN)
    taken = sum(
        1
        for game_id in running.app.store.list_streams("", 1000)
        for seat in admin.get_game(game_id).seats
        if seat.taken
    )
    assert taken == 8


# -- 9. quick joins spread over many half-full games ----------------------------------


def test_racing_quick_joins_fill_one_game_before_opening_another(
    start: Callable[..., Running],
) -> None:
    running = start()
    players = 4
    clients = [connection(running) for _ in range(3 * players)]
    answers = at_once(
        [partial(c.find_game, GAME, players, f"q{n}") for n, c in enumerate(clients)]
    )
    assert reasons(answers) == Counter({"OK": 3 * players})
    by_game = Counter(a.game_id for a in answers)
    # Twelve callers, four seats a game: three full games, not twelve
    # games of one player each.
    assert sorted(by_game.values()) == [players] * 3, by_game
    # (a caller whose creation others filled first sits in the next game)
    assert 1 <= sum(a.created for a in answers) <= 3
    admin = clients[0].with_token(ADMIN_TOKEN)
    for game_id in by_game:
        assert all(s.taken for s in admin.get_game(game_id).seats)
    # The next caller starts a fourth game.
    late = clients[0].find_game(GAME, players, "late")
    assert late.game_id not in by_game and late.created and late.seat == 0


def test_quick_joins_over_every_transport_meet_in_one_game(
    start: Callable[..., Running],
) -> None:
    running = start()
    found = [
        client_for(running, transport).find_game(GAME, 3, transport)
        for transport in ("grpc", "connect", "grpc-web")
    ]
    assert len({f.game_id for f in found}) == 1
    assert sorted(f.seat for f in found) == [0, 1, 2]


# -- 9. anonymous request ids were shared by everyone behind one address --------------


def test_two_callers_behind_one_address_never_meet_in_a_request_id(
    start: Callable[..., Running],
) -> None:
    running = start()
    ada, bob = connection(running), connection(running)  # both 127.0.0.1
    first = ada.create_game(GAME, 2, request_id="game-1")
    assert first.host_token
    # Bob's client numbers its requests the same way: a game of his own,
    # as he asked, with a host token of his own (it was ALREADY_EXISTS).
    theirs = bob.create_game("happy_little_dinosaurs", 3, request_id="game-1")
    assert theirs.game_id != first.game_id
    assert theirs.host_token and theirs.host_token != first.host_token
    game = bob.get_game(theirs.game_id)
    assert (game.game_type, game.players) == ("happy_little_dinosaurs", 3)
    # Ada's retry, on this connection or over Connect, is her first answer:
    # her game (the host token only ever comes with the first).
    for retry in (ada, client_for(running, "connect")):
        again = retry.create_game(GAME, 2, request_id="game-1")
        assert (again.game_id, again.host_token) == (first.game_id, "")
    # Each host token frees seats of its own game only.
    seat = bob.join_game(first.game_id, "Bob").seat
    with pytest.raises(StrataError) as refused:
        bob.with_token(theirs.host_token).leave_game(first.game_id, seat)
    assert refused.value.reason == "NOT_YOUR_SEAT"
    ada.with_token(first.host_token).leave_game(first.game_id, seat)


# -- 5. anyone could outrun the timekeeper with timed games --------------------------


def test_one_caller_creates_a_bounded_number_of_timed_games(
    start: Callable[..., Running],
) -> None:
    running = start(max_timed_games=3)
    client = connection(running)
    timed = [client.create_game(GAME, 2, time_control=deadline(30)) for _ in range(3)]
    for who in (client, client.with_token("st_another-token")):  # one address
        with pytest.raises(StrataError) as refused:
            who.create_game(GAME, 2, time_control=deadline(30))
        assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused.value.reason == "TIMED_GAMES_LIMIT"
    assert client.create_game(GAME, 2).game_id  # a game without a clock
    admin = client.with_token(ADMIN_TOKEN)
    assert admin.create_game(GAME, 2, time_control=deadline(30)).game_id
    # A timed game that ends makes room for one more.
    game_id = timed[0].game_id
    tokens = [client.join_game(game_id, f"p{s}", seat=s).seat_token for s in (0, 1)]
    client.with_token(tokens[0]).start_game(game_id)
    client.with_token(tokens[1]).leave_game(game_id, 1)
    assert client.create_game(GAME, 2, time_control=deadline(30)).game_id
    with pytest.raises(StrataError):
        client.create_game(GAME, 2, time_control=deadline(30))


def test_racing_timed_creations_from_one_address_stop_at_the_bound(
    start: Callable[..., Running],
) -> None:
    running = start(max_timed_games=5)
    clients = [connection(running) for _ in range(30)]
    answers = at_once(
        [partial(c.create_game, GAME, 2, time_control=deadline(30)) for c in clients]
    )
    assert reasons(answers) == Counter({"OK": 5, "TIMED_GAMES_LIMIT": 25})


# -- 9. look-alike names were accepted in one game ----------------------------------

CYRILLIC_A = "\u0410"  # looks like the Latin A


def test_a_name_mixing_scripts_with_a_look_alike_letter_is_refused(
    start: Callable[..., Running],
) -> None:
    running = start()
    client = connection(running)
    game_id = client.create_game(GAME, 3).game_id
    for call in (
        partial(client.join_game, game_id, CYRILLIC_A + "da"),
        partial(client.find_game, GAME, 3, CYRILLIC_A + "da"),
        partial(client.join_game, game_id, "P\u0430ul"),  # a Cyrillic a
    ):
        with pytest.raises(StrataError) as refused:
            call()
        assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.reason == "NAME_MIXED_SCRIPTS"
        assert refused.value.field == "player_name"
    assert not any(s.taken for s in client.get_game(game_id).seats)
    # Scripts written together, and one script alone, are names.
    for name in ("Ada 田中", "山田 太郎", "Иван"):
        assert client.join_game(client.create_game(GAME, 2).game_id, name).seat == 0


def test_one_game_never_seats_two_names_that_look_alike(
    start: Callable[..., Running],
) -> None:
    running = start()
    client = connection(running)
    game_id = client.create_game(GAME, 4).game_id
    ada = client.join_game(game_id, "Ada")
    # All Cyrillic (one script: a name anywhere else), "B0b" with a zero,
    # another case, the same name.
    client.join_game(game_id, "Bob")
    for name in ("\u0410\u0501\u0430", "ada", "Ada", "B0b", "BOB"):
        with pytest.raises(StrataError) as refused:
            client.join_game(game_id, name)
        assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert refused.value.reason == "NAME_TAKEN", name
    assert client.join_game(client.create_game(GAME, 2).game_id, "\u0410\u0501\u0430")
    # The same player may take another seat under its own name; names not
    # given may repeat.
    assert client.with_token(ada.seat_token).join_game(game_id, "Ada").seat == 2
    assert client.join_game(game_id, "").seat == 3
    names = [s.player_name for s in client.get_game(game_id).seats]
    assert names == ["Ada", "Bob", "Ada", "player"]


def test_a_quick_join_under_a_look_alike_name_sits_in_another_game(
    start: Callable[..., Running],
) -> None:
    running = start()
    client = connection(running)
    first = client.find_game(GAME, 3, "Ada")
    other = client.find_game(GAME, 3, "\u0410\u0501\u0430")  # all Cyrillic
    assert other.game_id != first.game_id
    assert client.find_game(GAME, 3, "Bob").game_id == first.game_id


def test_quick_join_looks_at_the_oldest_open_games_not_all_of_them(
    start: Callable[..., Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anyone may create open games. FindGame loaded every open game of the
    type and size (to see whether the caller sat there already): with 150
    of them, one call cost 150 loads, and each created game made every
    quick join dearer. It looks at the FIND_LOOKS oldest for a caller's own
    token (none for a token made for the call), and still seats the caller
    in the oldest with a free seat."""
    running = start()
    admin = connection(running).with_token(ADMIN_TOKEN)
    made = []
    for n in range(150):
        game_id = admin.create_game(GAME, 3).game_id
        admin.join_game(game_id, f"early{n}", 0)  # a seat taken, two free
        made.append(game_id)
    games = running.app.games
    loads: list[str] = []
    real_load = games.load

    def counted(game_id: str, *args: Any, **kwargs: Any) -> Any:
        loads.append(game_id)
        return real_load(game_id, *args, **kwargs)

    monkeypatch.setattr(games, "load", counted)
    player = connection(running)
    found = player.find_game(GAME, 3, "Late")
    assert found.game_id == made[0]  # the oldest open game with a free seat
    # Without a token of its own the caller sits nowhere yet: no game is
    # loaded to look for it, only the one it joins.
    assert len(loads) <= 5, len(loads)
    # Asked again with its seat token, the same seat: each of the oldest
    # open games is looked at for it, no more.
    loads.clear()
    again = player.with_token(found.seat_token).find_game(GAME, 3, "Late")
    assert (again.game_id, again.seat) == (found.game_id, found.seat)
    assert len(loads) <= matchmaking.FIND_LOOKS + 5, len(loads)
    assert set(loads) <= set(made[: matchmaking.FIND_LOOKS])
