"""The lobby: ListGames' filters and seats, and FindGame (quick join) under
races on several replicas."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import grpc
import pytest
from strata.v1 import game_service_pb2 as pb

from clients import cli
from clients.client import StrataError
from domain.session import Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.callers import Caller, hash_token
from service.matchmaking import Found

GAME = "cubosaurs"


def test_find_game_fills_the_oldest_open_game_then_creates_one() -> None:
    app = GameApp(InMemoryEventStore())
    older, _, _ = app.create_game(Caller(admin=True), GAME, 3)
    app.create_game(Caller(admin=True), GAME, 2)  # another size: not this one
    seats = [
        app.find_game(Caller(token=f"st_p{n}"), GAME, 3, f"p{n}") for n in range(4)
    ]
    assert [(f.game_id, f.seat) for f in seats[:3]] == [
        (older, 0),
        (older, 1),
        (older, 2),
    ]
    assert not any(f.created for f in seats[:3])
    assert seats[3].game_id != older and seats[3].created and seats[3].seat == 0


def test_find_game_never_seats_a_token_twice() -> None:
    app = GameApp(InMemoryEventStore())
    first = app.find_game(Caller(token="st_ada"), GAME, 3, "Ada")
    again = app.find_game(Caller(token="st_ada"), GAME, 3, "Ada")
    assert again[:3] == first[:3]
    state = app.load(first.game_id).state
    assert state.seats_of(hash_token("st_ada")) == {first.seat}


def test_find_game_without_a_token_hands_out_a_new_seat_token() -> None:
    app = GameApp(InMemoryEventStore())
    found = app.find_game(Caller(), GAME, 2, "anon")
    assert found.token.startswith("st_")
    state = app.load(found.game_id).state
    assert state.seats_of(hash_token(found.token)) == {found.seat}


def race(apps: list[GameApp], callers: list[Caller], players: int) -> list[Found]:
    gate = threading.Barrier(len(callers))
    found: list[Found] = []
    errors: list[BaseException] = []

    def one(n: int) -> None:
        gate.wait()
        try:
            found.append(
                apps[n % len(apps)].find_game(callers[n], GAME, players, f"p{n}")
            )
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(len(callers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return found


def test_racing_callers_on_three_replicas_overfill_nothing_and_sit_once() -> None:
    store = InMemoryEventStore()
    apps = [GameApp(store) for _ in range(3)]
    callers = [Caller(token=f"st_racer{n}") for n in range(12)]
    found = race(apps, callers, 3)
    assert len(found) == 12
    by_game: dict[str, list[int]] = {}
    for f in found:
        by_game.setdefault(f.game_id, []).append(f.seat)
    for game_id, seats in by_game.items():
        state = apps[0].load(game_id).state
        assert len(seats) == len(set(seats)) <= 3  # nobody overfilled a game
        taken = [s for s in state.seats if s is not None]
        assert len(taken) == len(seats)
    # Every caller holds exactly one seat in all the games together.
    holders: Counter[str] = Counter()
    for game_id in by_game:
        for info in apps[0].load(game_id).state.seats:
            if info is not None:
                holders[info.token_hash] += 1
    assert holders == Counter({hash_token(c.token): 1 for c in callers})


def test_one_token_racing_itself_on_three_replicas_gets_one_seat() -> None:
    store = InMemoryEventStore()
    apps = [GameApp(store) for _ in range(3)]
    found = race(apps, [Caller(token="st_eager")] * 6, 2)
    assert len({(f.game_id, f.seat) for f in found}) == 1
    state = apps[0].load(found[0].game_id).state
    assert len(state.seats_of(hash_token("st_eager"))) == 1
    assert len(store.list_streams("", 100)) == 1  # one game was created


def test_list_games_filters_by_open_seats_and_size_and_shows_seats(
    client: Any, admin: Any, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    full = admin.create_game(GAME, 2, bots={1: "random"}).game_id
    admin.join_game(full, "Ada")
    open_two = admin.create_game(GAME, 2, bots={0: "heuristic"}).game_id
    open_three = admin.create_game(GAME, 3).game_id
    listed = client.list_games(GAME, open_seats=True).games
    ids = [g.game_id for g in listed]
    assert open_two in ids and open_three in ids and full not in ids
    two = next(g for g in listed if g.game_id == open_two)
    assert [(s.seat, s.taken, s.bot) for s in two.seats] == [
        (0, True, "heuristic"),
        (1, False, ""),
    ]
    sized = client.list_games(GAME, open_seats=True, players=3).games
    assert [g.game_id for g in sized if g.game_id in (open_two, open_three)] == [
        open_three
    ]
    with pytest.raises(StrataError) as err:
        client.list_games(GAME, pb.GAME_STATUS_FINISHED, open_seats=True)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert cli.main(["games", "--game", GAME, "--open", "--target", target]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(f'"game_id": "{open_two}"' in line for line in lines)
    assert all(f'"game_id": "{full}"' not in line for line in lines)


def _pages(list_page: Any, page_size: int) -> list[list[str]]:
    """Every page ``list_page(page_size, token)`` gives, as game ids."""
    pages: list[list[str]] = []
    token = ""
    while True:
        ids, token = list_page(page_size, token)
        pages.append(ids)
        if not token:
            return pages
        assert len(pages) < 20, pages


def test_a_page_of_games_of_a_size_or_with_a_free_seat_is_full(
    client: Any, admin: Any
) -> None:
    # Over a real server (the game list read model): the filters apply
    # before the page is cut, so a page holds page_size matching games
    # while more follow, and the pages hold them all, in creation order.
    twos, threes = [], []
    for _ in range(5):
        twos.append(admin.create_game(GAME, 2).game_id)
        threes.append(admin.create_game(GAME, 3).game_id)
    full = admin.create_game(GAME, 2, bots={1: "random"}).game_id
    admin.join_game(full, "Ada")

    def sized(page_size: int, token: str) -> tuple[list[str], str]:
        page = client.list_games(GAME, players=3, page_size=page_size, page_token=token)
        return [g.game_id for g in page.games], page.next_page_token

    def joinable_twos(page_size: int, token: str) -> tuple[list[str], str]:
        page = client.list_games(
            GAME, open_seats=True, players=2, page_size=page_size, page_token=token
        )
        return [g.game_id for g in page.games], page.next_page_token

    assert _pages(sized, 2) == [threes[0:2], threes[2:4], threes[4:5]]
    assert [i for page in _pages(joinable_twos, 2) for i in page] == twos
    assert all(len(page) == 2 for page in _pages(joinable_twos, 2)[:-1])


def test_folded_lists_filter_by_size_and_free_seats_before_the_page_too() -> None:
    # Without a read model (the in-memory store) the list folds each game:
    # the same filters, before the same cut.
    app = GameApp(InMemoryEventStore())
    admin = Caller(admin=True)
    twos, threes = [], []
    for n in range(4):
        twos.append(app.create_game(admin, GAME, 2, seed=f"two-{n}")[0])
        threes.append(app.create_game(admin, GAME, 3, seed=f"three-{n}")[0])

    def sized(page_size: int, token: str) -> tuple[list[str], str]:
        rows, after = app.queries.list_games(
            GAME, None, page_size, token, players=3, open_seats=True
        )
        return [r.game_id for r in rows], after

    pages = _pages(sized, 2)
    assert [i for page in pages for i in page] == threes
    assert all(len(page) == 2 for page in pages[:-1])


def test_a_lobby_lists_the_newest_games_first_a_page_at_a_time(
    client: Any, admin: Any, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """ListGames' newest_first through the read model (a real server on
    SQLite): the newest game first, the next page older, no game twice or
    missed; and the same order from a store without read models."""
    made = [admin.create_game(GAME, 2).game_id for _ in range(5)]
    pages, token = [], ""
    while True:
        page = client.list_games(GAME, page_size=2, page_token=token, newest_first=True)
        pages.append([g.game_id for g in page.games])
        token = page.next_page_token
        if not token:
            break
    listed = [game_id for page in pages for game_id in page]
    assert listed == sorted(listed, reverse=True)
    assert listed[:5] == made[::-1]
    assert all(len(page) <= 2 for page in pages)
    oldest_first = [g.game_id for g in client.all_games(GAME)]
    assert listed == oldest_first[::-1]
    assert cli.main(["games", "--game", GAME, "--newest", "--target", target]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split('"')[3] for line in lines][:5] == made[::-1]

    app = GameApp(InMemoryEventStore())  # no read models: by folding
    ids = [app.create_game(Caller(admin=True), GAME, 2)[0] for _ in range(4)]
    first, token = app.list_games(GAME, None, 3, "", newest_first=True)
    rest, last = app.list_games(GAME, None, 3, token, newest_first=True)
    assert [g.game_id for g in first + rest] == ids[::-1] and not last
    assert ids == sorted(ids)  # ids made by one process increase


def test_strata_find_seats_the_caller(
    client: Any, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["find", "--game", GAME, "--players", "2", "--name", "Ada"]
    assert cli.main([*args, "--target", target]) == 0
    captured = capsys.readouterr()
    token = captured.out.strip()
    assert token.startswith("st_") and "seat 0" in captured.err
    game_id = captured.err.split()[1]
    game = client.with_token(token).get_game(game_id)
    assert list(game.your_seats) == [0]
    assert game.status == pb.GAME_STATUS_OPEN
    assert Status.OPEN
