"""CreateGame with the creator's seat (CreateGameRequest.creator_seat, the
web table's "me"), through a real server on both stores, over gRPC,
Connect (the web table's transport) and gRPC-Web: the seat is taken in the same call,
and at the caller's open-seat limit the creation is refused before anything
is written, so no public game is left with nobody seated."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import grpc
import pytest

from clients.client import StrataClient, StrataError
from eventstore.factory import open_store
from service.server import Running, create_server
from tests.service.conftest import (
    ADMIN_TOKEN,
    NO_RATE_LIMITS,
    TRANSPORTS,
    client_for,
)

GAME = "dinosaurs_extinct"


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def limited(store_url: str) -> Iterator[Running]:
    """A server whose callers may each hold two open seats."""
    store = open_store(store_url)
    running = create_server(
        store,
        admin_token=ADMIN_TOKEN,
        port=0,
        http_port=0,
        limits=dataclasses.replace(NO_RATE_LIMITS, max_open_seats=2),
    )
    try:
        yield running
    finally:
        running.stop(grace=0.5)
        store.close()


def game_ids(client: StrataClient) -> set[str]:
    listed = client.list_games(page_size=100)
    assert not listed.next_page_token
    return {game.game_id for game in listed.games}


def test_the_creators_seat_is_taken_with_the_game(
    limited: Running, transport: str
) -> None:
    with client_for(limited, transport) as client:
        created = client.create_game(
            GAME, 3, bots={2: "random"}, creator_seat=(1, "Ada")
        )
        game = client.get_game(created.game_id)
        assert [(s.seat, s.player_name) for s in game.seats if s.taken] == [
            (1, "Ada"),
            (2, "random bot"),
        ]
        # The host token acts for the creator's seat.
        mine = client.with_token(created.host_token).get_game(created.game_id)
        assert list(mine.your_seats) == [1]


def test_at_the_open_seat_limit_create_is_refused_and_no_game_appears(
    limited: Running, transport: str
) -> None:
    with client_for(limited, transport) as client:
        for _ in range(2):
            client.create_game(GAME, 2, creator_seat=(0, "Ada"))
        before = game_ids(client)
        with pytest.raises(StrataError) as refused:
            client.create_game(GAME, 2, creator_seat=(0, "Ada"))
        assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused.value.reason == "OPEN_SEATS_LIMIT"
        assert game_ids(client) == before
        # Without a seat for the creator a game may still be made (for
        # others to join): the refusal was the seat's.
        hosted = client.create_game(GAME, 2)
        assert game_ids(client) == before | {hosted.game_id}


def test_a_creators_seat_that_is_not_free_for_a_person_is_refused(
    limited: Running, transport: str
) -> None:
    with client_for(limited, transport) as client:
        before = game_ids(client)
        for seat, bots in ((2, {}), (-1, {}), (1, {1: "random"})):
            with pytest.raises(StrataError) as refused:
                client.create_game(GAME, 2, bots=bots, creator_seat=(seat, "Ada"))
            assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert refused.value.reason == "CREATOR_SEAT_INVALID"
            assert refused.value.field == "creator_seat.seat"
        assert game_ids(client) == before
