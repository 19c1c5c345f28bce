"""The service's sentences count seats from 1, as players do, through a real
server and over every transport: the API's seat 0 is "seat 1" in a message,
while the reason and the field stay the API's (domain/seats.py)."""

from __future__ import annotations

import grpc
import pytest
from strata.games.dinosaurs_extinct.v1 import dinosaurs_extinct_pb2 as de_pb
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from tests.service.conftest import TRANSPORTS

GAME = "dinosaurs_extinct"


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def refusal(call: object) -> StrataError:
    assert callable(call)
    with pytest.raises(StrataError) as refused:
        call()
    return refused.value


def test_the_lobbys_refusals_name_seats_as_players_count_them(
    client: StrataClient,
) -> None:
    game_id = client.create_game(GAME, 2).game_id
    ada = client.with_token(client.join_game(game_id, "Ada", seat=0).seat_token)

    taken = refusal(lambda: client.join_game(game_id, "Bob", seat=0))
    assert taken.reason == "SEAT_TAKEN"
    assert taken.message == "Seat 1 is taken: choose another."

    free = refusal(lambda: ada.leave_game(game_id, 1))
    assert free.reason == "SEAT_FREE" and free.message == "Seat 2 is not taken."

    early = refusal(lambda: ada.start_game(game_id))
    assert early.reason == "SEATS_NOT_FILLED"
    assert early.message == "Not every seat is taken; still free: seat 2."

    # A seat number that names no seat is quoted as sent, with both ranges.
    nowhere = refusal(lambda: client.join_game(game_id, "Cy", seat=2))
    assert nowhere.code == grpc.StatusCode.INVALID_ARGUMENT
    assert nowhere.reason == "SEAT_OUT_OF_RANGE"
    assert "no seat 2 in the API's numbering" in nowhere.message
    assert "0 to 1 (seat 1 to seat 2 as players count them)" in nowhere.message


def test_a_move_refused_for_its_seat_names_it_from_one(client: StrataClient) -> None:
    game_id = client.create_game(GAME, 2).game_id
    ada = client.with_token(client.join_game(game_id, "Ada", seat=0).seat_token)
    bob = client.with_token(client.join_game(game_id, "Bob", seat=1).seat_token)
    ada.start_game(game_id)
    roll = pb.GameCommand(dinosaurs_extinct=de_pb.Command(roll_die=de_pb.RollDie()))

    not_yours = refusal(lambda: ada.submit_command(game_id, 1, roll))
    assert not_yours.code == grpc.StatusCode.PERMISSION_DENIED
    assert not_yours.reason == "NOT_YOUR_SEAT"
    assert not_yours.message == "Your token does not act for seat 2."

    not_now = refusal(lambda: bob.submit_command(game_id, 1, roll))
    assert not_now.reason == "NOT_YOUR_TURN"
    assert not_now.message == "It is seat 1's turn."

    listing = refusal(lambda: ada.list_legal_actions(game_id, 1))
    assert listing.message == "Your token does not act for seat 2."
