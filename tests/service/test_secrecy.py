"""Hidden information is a security property: through every RPC, a player
receives exactly what the game's redaction lets that player see — never
another player's secret — and the admin sees everything.

The games' own tests prove their redaction hides each secret; these tests
prove the service applies it on every path (views now and at earlier
versions, watched events, command responses, legal actions).
"""

from __future__ import annotations

import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient
from domain import registry
from domain.rules import Viewer
from service import protomap
from service.answers import event_to_proto, game_module
from service.server import Running
from tests.service.conftest import ADMIN_TOKEN, TRANSPORTS


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """Every case here runs over gRPC, Connect and gRPC-Web."""
    name: str = request.param
    return name


def play_through_service(
    client: StrataClient,
    game_type: str,
    players: int,
    seed: str,
    max_commands: int = 400,
) -> tuple[str, dict[int, StrataClient], list[tuple[int, pb.SubmitCommandResponse]]]:
    game_id = (
        client.with_token(ADMIN_TOKEN)
        .create_game(game_type, players, seed=seed)
        .game_id
    )
    seats = {}
    for seat in range(players):
        token = client.join_game(game_id, player_name=f"p{seat}", seat=seat).seat_token
        seats[seat] = client.with_token(token)
    seats[0].start_game(game_id)
    responses = []
    game = client.get_game(game_id)
    for step in range(max_commands):
        if game.status == pb.GAME_STATUS_FINISHED:
            break
        seat = game.active_seats[step % len(game.active_seats)]
        actions = seats[seat].list_legal_actions(game_id, seat).actions
        action = actions[(step * 7) % len(actions)]
        response = seats[seat].submit_command(
            game_id, seat, action.command, include_legal_actions=True
        )
        responses.append((seat, response))
        game = client.get_game(game_id)
    return game_id, seats, responses


@pytest.mark.parametrize("game_type", registry.game_types())
def test_every_rpc_gives_a_player_only_what_the_rules_let_them_see(
    server: Running, client: StrataClient, admin: StrataClient, game_type: str
):
    rules = registry.rules_for(game_type)
    players = max(rules.min_players, 2)
    game_id, seats, responses = play_through_service(
        client, game_type, players, "secrets"
    )
    loaded = server.app.load(game_id)
    session = loaded.session
    recorded = server.app.store.read_stream(game_id)
    events = [session.decode_event(r.type, r.data) for r in recorded]
    states = []
    state = None
    for event in events:
        state = session.evolve(state, event)
        states.append(state)

    viewers = {seat: Viewer.player(seat) for seat in seats}
    for seat, seat_client in seats.items():
        viewer = viewers[seat]
        watched = list(seat_client.watch_game(game_id, follow=False))
        expected = [
            event_to_proto(session, r, session.redact(e, viewer))
            for r, e in zip(recorded, events, strict=True)
        ]
        assert watched == expected
        for version in range(1, len(states) + 1, max(1, len(states) // 25)):
            view = seat_client.get_game(game_id, at_version=version).view
            want = rules.view(states[version - 1].game, viewer)
            assert getattr(view, game_type) == protomap.to_proto(
                want, game_module(game_type).View()
            )
        for action in seat_client.list_legal_actions(game_id).actions:
            assert action.seat == seat

    # Each command's response was redacted for the seat that sent it, and
    # lists only that seat's legal actions.
    by_version = {r.version: (r, e) for r, e in zip(recorded, events, strict=True)}
    for seat, response in responses:
        for event in response.events:
            r, e = by_version[event.version]
            assert event == event_to_proto(session, r, session.redact(e, viewers[seat]))
        assert response.legal_actions_version == response.version
        for action in response.legal_actions:
            assert action.seat == seat

    # The admin sees the events unredacted.
    full = list(admin.watch_game(game_id, follow=False))
    assert full == [
        event_to_proto(session, r, session.redact(e, Viewer.admin()))
        for r, e in zip(recorded, events, strict=True)
    ]
    assert [session.redact(e, Viewer.admin()) for e in events] == events


def test_dinosaurs_extinct_deck_order_reaches_no_player(
    client: StrataClient, admin: StrataClient
):
    game_id, seats, _ = play_through_service(client, "dinosaurs_extinct", 3, "deck")
    for viewer in (client, *seats.values()):
        for event in viewer.watch_game(game_id, follow=False):
            game_event = event.game_event.dinosaurs_extinct
            if game_event.WhichOneof("event") == "earth_events_shuffled":
                assert list(game_event.earth_events_shuffled.order) == []
                assert game_event.earth_events_shuffled.cards == 14
    orders = [
        list(e.game_event.dinosaurs_extinct.earth_events_shuffled.order)
        for e in admin.watch_game(game_id, follow=False)
        if e.game_event.dinosaurs_extinct.WhichOneof("event") == "earth_events_shuffled"
    ]
    assert orders and sorted(orders[0]) == list(range(1, 15))


@pytest.mark.parametrize("game_type", registry.game_types())
def test_replay_gives_each_viewer_only_what_the_rules_let_them_see(
    server: Running, client: StrataClient, admin: StrataClient, game_type: str
):
    rules = registry.rules_for(game_type)
    players = max(rules.min_players, 2)
    game_id, seats, _ = play_through_service(client, game_type, players, "replay")
    session = server.app.load(game_id).session
    recorded = server.app.store.read_stream(game_id)
    events = [session.decode_event(r.type, r.data) for r in recorded]
    states = []
    state = None
    for event in events:
        state = session.evolve(state, event)
        states.append(state)
    viewers: dict[object, tuple[StrataClient, Viewer]] = {
        "spectator": (client, Viewer.spectator()),
        "admin": (admin, Viewer.admin()),
    }
    for seat, seat_client in seats.items():
        viewers[seat] = (seat_client, Viewer.player(seat))
    for who, (viewer_client, viewer) in viewers.items():
        replay = list(
            viewer_client.stub.ReplayGame(
                pb.ReplayGameRequest(game_id=game_id),
                metadata=viewer_client._metadata(),
                timeout=30,
            )
        )
        assert len(replay) == len(recorded), who
        for step, r, e, s in zip(replay, recorded, events, states, strict=True):
            assert step.event == event_to_proto(session, r, session.redact(e, viewer))
            assert getattr(step.game.view, game_type) == protomap.to_proto(
                rules.view(s.game, viewer), game_module(game_type).View()
            ), (who, r.version)
