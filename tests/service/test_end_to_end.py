"""The whole path of a command, through a real gRPC server on a free port."""

from __future__ import annotations

import threading

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from tests.service.conftest import ADMIN_TOKEN, TRANSPORTS


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """Every case here runs over gRPC, Connect and gRPC-Web."""
    name: str = request.param
    return name


GAME = "dinosaurs_extinct"


def seated_game(
    client: StrataClient, players: int = 2, seed: str = "e2e"
) -> tuple[str, dict[int, StrataClient]]:
    game_id = (
        client.with_token(ADMIN_TOKEN).create_game(GAME, players, seed=seed).game_id
    )
    seats = {}
    for seat in range(players):
        joined = client.join_game(game_id, player_name=f"p{seat}", seat=seat)
        assert joined.seat == seat
        seats[seat] = client.with_token(joined.seat_token)
    return game_id, seats


def play_to_end(
    client: StrataClient, game_id: str, seats: dict[int, StrataClient]
) -> pb.Game:
    game = client.get_game(game_id)
    for _ in range(5000):
        if game.status == pb.GAME_STATUS_FINISHED:
            return game
        seat = game.active_seats[0]
        legal = seats[seat].list_legal_actions(game_id, seat)
        action = legal.actions[0]
        seats[seat].submit_command(game_id, seat, action.command)
        game = client.get_game(game_id)
    raise AssertionError("game did not end")


def bodies(client: StrataClient, game_id: str) -> list[dict[str, object]]:
    out = []
    for event in client.watch_game(game_id, follow=False):
        data = json_format.MessageToDict(event)
        for key in ("gameId", "recordedAt", "position"):
            data.pop(key, None)
        # Each game commits to its seed with a salt of its own.
        for body in ("gameCreated", "seedRevealed"):
            for key in ("salt", "commitment"):
                data.get(body, {}).pop(key, None)
        out.append(data)
    return out


def test_health_check_answers_serving(target):
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in ("", "strata.v1.GameService"):
            response = stub.Check(health_pb2.HealthCheckRequest(service=service))
            assert response.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_game_service(target):
    with grpc.insecure_channel(target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (response,) = list(stub.ServerReflectionInfo(iter([request])))
        names = {s.name for s in response.list_services_response.service}
        assert "strata.v1.GameService" in names


def test_list_game_types_includes_dinosaurs_extinct(client):
    types = {t.game_type: t for t in client.list_game_types().game_types}
    assert types[GAME].min_players == 2
    assert types[GAME].max_players == 4


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_whole_game_plays_through_the_service(client, players):
    game_id, seats = seated_game(client, players)
    seats[0].start_game(game_id)
    game = play_to_end(client, game_id, seats)
    assert game.status == pb.GAME_STATUS_FINISHED
    assert len(game.outcome.winners) == 1
    events = list(client.watch_game(game_id, follow=False))
    assert [e.version for e in events] == list(range(1, game.version + 1))
    assert [e.WhichOneof("body") for e in events[-2:]] == [
        "game_finished",
        "seed_revealed",
    ]


def test_a_command_can_answer_with_the_next_legal_actions(client):
    game_id, seats = seated_game(client, 3, seed="next-actions")
    seats[0].start_game(game_id)
    for step in range(30):
        game = client.get_game(game_id)
        if game.status == pb.GAME_STATUS_FINISHED:
            break
        seat = game.active_seats[0]
        action = seats[seat].list_legal_actions(game_id).actions[0]
        asked = step % 2 == 0

        response = seats[seat].submit_command(
            game_id, seat, action.command, include_legal_actions=asked
        )

        if asked:
            listed = seats[seat].list_legal_actions(game_id)
            assert response.legal_actions_version == listed.version == response.version
            assert list(response.legal_actions) == list(listed.actions)
        else:
            assert not response.legal_actions
            assert response.legal_actions_version == 0


def test_the_same_seed_and_commands_give_the_same_events(client):
    runs = []
    for _ in range(2):
        game_id, seats = seated_game(client, 3, seed="same-seed")
        seats[0].start_game(game_id)
        play_to_end(client, game_id, seats)
        runs.append(bodies(client, game_id))
    assert runs[0] == runs[1]


def test_a_seat_token_cannot_act_for_another_seat(client):
    game_id, seats = seated_game(client)
    seats[0].start_game(game_id)
    game = client.get_game(game_id)
    active = game.active_seats[0]
    other = 1 - active
    action = seats[active].list_legal_actions(game_id, active).actions[0]
    with pytest.raises(StrataError) as refused:
        seats[other].submit_command(game_id, active, action.command)
    assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert refused.value.reason == "NOT_YOUR_SEAT"
    with pytest.raises(StrataError) as listing:
        seats[other].list_legal_actions(game_id, active)
    assert listing.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert client.get_game(game_id).version == game.version


def test_a_command_without_a_token_is_unauthenticated(client):
    game_id, seats = seated_game(client)
    seats[0].start_game(game_id)
    action = seats[0].list_legal_actions(game_id).actions
    command = (action or seats[1].list_legal_actions(game_id).actions)[0]
    with pytest.raises(StrataError) as refused:
        client.submit_command(game_id, command.seat, command.command)
    assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED


def test_a_move_out_of_turn_is_a_failed_precondition_with_a_reason(client):
    game_id, seats = seated_game(client)
    seats[0].start_game(game_id)
    game = client.get_game(game_id)
    active = game.active_seats[0]
    waiting = 1 - active
    action = seats[active].list_legal_actions(game_id, active).actions[0]
    with pytest.raises(StrataError) as refused:
        seats[waiting].submit_command(game_id, waiting, action.command)
    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.reason
    assert client.get_game(game_id).version == game.version


def test_the_same_command_id_returns_the_first_outcome_and_appends_nothing(client):
    game_id, seats = seated_game(client)
    seats[0].start_game(game_id)
    active = client.get_game(game_id).active_seats[0]
    action = seats[active].list_legal_actions(game_id, active).actions[0]
    first = seats[active].submit_command(
        game_id, active, action.command, command_id="c-1"
    )
    again = seats[active].submit_command(
        game_id, active, action.command, command_id="c-1"
    )
    assert not first.duplicate and again.duplicate
    assert again.version == first.version
    assert [e.version for e in again.events] == [e.version for e in first.events]
    assert client.get_game(game_id).version == first.version


def test_a_stale_expected_version_is_aborted(client):
    game_id, seats = seated_game(client)
    seats[0].start_game(game_id)
    game = client.get_game(game_id)
    active = game.active_seats[0]
    action = seats[active].list_legal_actions(game_id, active).actions[0]
    with pytest.raises(StrataError) as refused:
        seats[active].submit_command(
            game_id, active, action.command, expected_version=game.version - 1
        )
    assert refused.value.code == grpc.StatusCode.ABORTED
    assert client.get_game(game_id).version == game.version


def test_unknown_game_is_not_found(client):
    with pytest.raises(StrataError) as refused:
        client.get_game("no-such-game")
    assert refused.value.code == grpc.StatusCode.NOT_FOUND


def test_unknown_game_type_is_an_invalid_argument(client):
    with pytest.raises(StrataError) as refused:
        client.create_game("chess", 2)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == "UNKNOWN_GAME_TYPE"


def test_too_many_players_is_an_invalid_argument(client):
    with pytest.raises(StrataError) as refused:
        client.create_game(GAME, 9)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_a_scenario_needs_the_admin_token(client, admin):
    scenario = pb.GameScenario()
    scenario.dinosaurs_extinct.SetInParent()
    with pytest.raises(StrataError) as refused:
        client.create_game(GAME, 2, scenario=scenario)
    assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert admin.create_game(GAME, 2, scenario=scenario).game_id


def test_a_taken_seat_cannot_be_taken_again(client):
    game_id, _ = seated_game(client)
    with pytest.raises(StrataError) as refused:
        client.join_game(game_id, seat=0)
    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert (
        refused.value.reason == "GAME_ALREADY_STARTED"
        or refused.value.reason == "SEAT_TAKEN"
    )


def test_the_seed_is_shown_to_the_admin_only(client, admin):
    game_id, seats = seated_game(client, seed="secret-seed")
    for viewer in (client, seats[0], seats[1]):
        created = next(iter(viewer.watch_game(game_id, follow=False)))
        assert created.game_created.seed == ""
    created = next(iter(admin.watch_game(game_id, follow=False)))
    assert created.game_created.seed == "secret-seed"


def test_get_game_at_an_earlier_version(client):
    game_id, seats = seated_game(client)
    seats[0].start_game(game_id)
    assert client.get_game(game_id, at_version=1).status == pb.GAME_STATUS_OPEN
    assert (
        len([s for s in client.get_game(game_id, at_version=2).seats if s.taken]) == 1
    )
    with pytest.raises(StrataError) as refused:
        client.get_game(game_id, at_version=999)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_watch_resumes_from_a_version_and_follows_live(client):
    game_id, seats = seated_game(client)
    tail = list(client.watch_game(game_id, from_version=2, follow=False))
    assert [e.version for e in tail] == [2, 3]
    received: list[pb.Event] = []
    done = threading.Event()

    def follow() -> None:
        for event in client.watch_game(game_id, from_version=4):
            received.append(event)
            if event.WhichOneof("body") == "game_started":
                done.set()
                return

    watcher = threading.Thread(target=follow, daemon=True)
    watcher.start()
    seats[0].start_game(game_id)
    assert done.wait(10)
    assert received[0].version == 4


def test_list_games_filters_and_pages(client):
    ids = [client.create_game(GAME, 2).game_id for _ in range(5)]
    first = client.list_games(game_type=GAME, page_size=3)
    assert len(first.games) == 3 and first.next_page_token
    second = client.list_games(
        game_type=GAME, page_size=3, page_token=first.next_page_token
    )
    listed = [g.game_id for g in (*first.games, *second.games)]
    assert listed == ids
    assert not client.list_games(game_type=GAME, status=pb.GAME_STATUS_FINISHED).games


def test_joining_again_with_a_token_adds_the_seat_to_it(client):
    game_id = client.create_game(GAME, 2).game_id
    first = client.join_game(game_id, seat=0)
    second = client.with_token(first.seat_token).join_game(game_id, seat=1)
    assert second.seat_token == first.seat_token
    assert list(client.with_token(first.seat_token).get_game(game_id).your_seats) == [
        0,
        1,
    ]
