"""ListGames lists games in the order they were created (or imported),
whatever their ids: a game made with a request_id has an id derived from
it, and an imported game keeps its id, so neither sorts by age. Through a
real server on each SQL store (the game list read model), and by folding
on the in-memory store; a page token naming no game is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from clients.client import StrataClient, StrataError
from domain.session import Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.callers import Caller
from service.errors import InvalidArgument
from service.server import Running
from tests.conftest import BACKENDS, empty_store_url
from tests.service.conftest import ADMIN_TOKEN, serve

GAME = "cubosaurs"
OTHER = "dinosaurs_extinct"


@pytest.fixture(params=BACKENDS)
def running(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Running]:
    """A real server on an empty store of each SQL backend."""
    yield from serve(empty_store_url(request.param, request, tmp_path))


@pytest.fixture
def admin(running: Running) -> Iterator[StrataClient]:
    with StrataClient(f"127.0.0.1:{running.port}", timeout=10) as client:
        yield client.with_token(ADMIN_TOKEN)


def every_page(
    client: StrataClient, page_size: int, newest_first: bool, game_type: str = ""
) -> list[list[str]]:
    """The ids of each page, following next_page_token to the last."""
    pages, token = [], ""
    while True:
        page = client.list_games(
            game_type, page_size=page_size, page_token=token, newest_first=newest_first
        )
        pages.append([g.game_id for g in page.games])
        token = page.next_page_token
        if not token:
            return pages


def made_in_a_known_order(admin: StrataClient) -> list[str]:
    """Games made one after another, with request ids and without, one of
    another type, and an import under an id that sorts before them all."""
    made = []
    for n in range(4):
        made.append(admin.create_game(GAME, 2, request_id=f"order-{n}").game_id)
        made.append(admin.create_game(GAME, 2).game_id)
    made.append(admin.create_game(OTHER, 2, request_id="order-other").game_id)
    document = admin.export_game(made[1]).document
    made.append(admin.import_game(document, "0-imported").game_id)
    made.append(admin.create_game(GAME, 3).game_id)
    # By id they would come in another order: the test would see it.
    assert made != sorted(made) and made[::-1] != sorted(made, reverse=True)
    return made


@pytest.mark.parametrize("page_size", [1, 3, 50])
def test_games_are_listed_in_creation_order_whatever_their_ids(
    admin: StrataClient, page_size: int
) -> None:
    made = made_in_a_known_order(admin)

    oldest_first = every_page(admin, page_size, newest_first=False)
    newest_first = every_page(admin, page_size, newest_first=True)

    assert [g for page in oldest_first for g in page] == made
    assert [g for page in newest_first for g in page] == made[::-1]
    assert all(len(page) <= page_size for page in oldest_first + newest_first)
    of_type = [g for g in made if g != made[8]]  # made[8] is of another type
    assert [g for p in every_page(admin, 2, False, GAME) for g in p] == of_type
    assert [g for p in every_page(admin, 2, True, GAME) for g in p] == of_type[::-1]


def test_a_page_token_naming_no_game_is_an_invalid_argument(
    admin: StrataClient,
) -> None:
    made = [admin.create_game(GAME, 2).game_id for _ in range(3)]
    for newest_first in (False, True):
        for token in ("no-such-game", made[0] + "0", "' OR 1=1 --"):
            with pytest.raises(StrataError) as refused:
                admin.list_games(page_token=token, newest_first=newest_first)
            assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert refused.value.reason == "PAGE_TOKEN_INVALID"
    # A token of the last game listed is a valid one: the page after is empty.
    assert not admin.list_games(page_token=made[-1]).games
    assert not admin.list_games(page_token=made[0], newest_first=True).games


def test_a_store_without_read_models_lists_in_creation_order_too() -> None:
    app = GameApp(InMemoryEventStore())
    admin = Caller(admin=True)
    made = []
    for n in range(3):
        made.append(app.create_game(admin, GAME, 2, request_id=f"order-{n}")[0])
        made.append(app.create_game(admin, GAME, 2)[0])
    assert made != sorted(made)

    for newest_first, expected in ((False, made), (True, made[::-1])):
        listed, token = [], ""
        while True:
            page, token = app.list_games(GAME, None, 2, token, newest_first)
            listed += [g.game_id for g in page]
            if not token:
                break
        assert listed == expected
    page, _ = app.list_games(GAME, Status.OPEN, 10, made[3])
    assert [g.game_id for g in page] == made[4:]
    with pytest.raises(InvalidArgument) as refused:
        app.list_games(GAME, None, 2, "no-such-game")
    assert refused.value.reason == "PAGE_TOKEN_INVALID"
