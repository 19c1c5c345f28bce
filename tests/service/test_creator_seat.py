"""CreateGame with the creator's seat (CreateGameRequest.creator_seat, the
web table's "me"), through a real server on both stores, over gRPC,
Connect (the web table's transport) and gRPC-Web: the seat is taken in the same call,
and at the caller's open-seat limit the creation is refused before anything
is written, so no public game is left with nobody seated; a creation retried
after its seat's append failed takes the seat then."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from clients.client import StrataClient, StrataError
from eventstore.base import StoreUnavailable
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


def test_a_retried_creation_takes_the_seat_its_first_attempt_could_not(
    limited: Running, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store that goes away after the game is appended and before the
    # creator's seat is (once), and a caller with a token of its own
    seating = limited.app.lobby.seating
    real = seating.join_reserved
    failures: list[str] = []

    def once_unavailable(*args: Any, **kwargs: Any) -> Any:
        if not failures:
            failures.append("seat")
            raise StoreUnavailable("the database went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(seating, "join_reserved", once_unavailable)
    with client_for(limited, transport) as anonymous:
        ada = anonymous.with_token("st_ada-retries")
        # When its creation fails after the game was made, and it retries
        # with the same request_id
        with pytest.raises(StrataError) as failed:
            ada.create_game(GAME, 2, request_id="ada-1", creator_seat=(1, "Ada"))
        assert failed.value.code == grpc.StatusCode.UNAVAILABLE
        retried = ada.create_game(GAME, 2, request_id="ada-1", creator_seat=(1, "Ada"))

        # Then the retry answers with the same game, its seat taken now
        game = ada.get_game(retried.game_id)
        assert list(game.your_seats) == [1]
        assert [(s.seat, s.player_name) for s in game.seats if s.taken] == [(1, "Ada")]
        assert retried.version == game.version
        # And asked once more, the same seat, no second one
        again = ada.create_game(GAME, 2, request_id="ada-1", creator_seat=(1, "Ada"))
        assert again.game_id == retried.game_id
        assert list(ada.get_game(retried.game_id).your_seats) == [1]
        assert [s.seat for s in ada.get_game(retried.game_id).seats if s.taken] == [1]
