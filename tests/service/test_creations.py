"""A game's logged creation (its table settings, its host, what it is a
rematch of) is read once and kept: ``GetGame`` and ``JoinGame`` asked the
store for it on every call. Through a real server."""

from __future__ import annotations

from typing import Any

import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from service.commands import CREATE
from service.server import Running


def counting(server: Running, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The games whose creation the store is asked for, in order."""
    asked: list[str] = []
    store = server.app.lobby.creations.store
    find = store.find_command

    def find_command(game_id: str, command_id: str) -> Any:
        if command_id == CREATE:
            asked.append(game_id)
        return find(game_id, command_id)

    monkeypatch.setattr(store, "find_command", find_command)
    return asked


def test_a_games_creation_is_read_once_for_its_calls(
    server: Running, client: StrataClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a timed game, and the store's creation lookups counted
    control = pb.TimeControl(decision_seconds=30, on_timeout="forfeit")
    game_id = client.create_game("dinosaurs_extinct", 2, time_control=control).game_id
    asked = counting(server, monkeypatch)

    # When it is joined twice and looked at five times
    first = client.join_game(game_id, "Ann")
    client.join_game(game_id, "Bob")
    games = [client.get_game(game_id) for _ in range(5)]

    # Then the store was asked for its creation at most once
    assert asked.count(game_id) <= 1, asked
    # ... and every answer still carries what it was created with
    assert first.seat == 0
    for game in games:
        assert game.time_control.decision_seconds == 30
        assert game.time_control.on_timeout == "forfeit"


def test_a_creation_not_found_is_asked_for_again(
    server: Running, client: StrataClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a creation looked for before its game exists
    asked = counting(server, monkeypatch)
    creations = server.app.lobby.creations
    assert creations.creation_of("g-not-yet") == {}
    assert creations.creation_of("g-not-yet") == {}

    # Then each lookup asked the store (nothing kept of an absence)
    assert asked == ["g-not-yet", "g-not-yet"]
    with pytest.raises(StrataError):
        client.get_game("g-not-yet")


def test_a_kept_creation_is_each_callers_own_copy(server: Running) -> None:
    # Given a game created with a time control
    app = server.app
    creations = app.lobby.creations
    with StrataClient(f"127.0.0.1:{server.port}") as client:
        control = pb.TimeControl(decision_seconds=30, on_timeout="forfeit")
        game_id = client.create_game(
            "dinosaurs_extinct", 2, time_control=control
        ).game_id

    # When a caller changes what it was given
    creations.settings_of(game_id)["time_control"]["decision_seconds"] = 1
    creations.creation_of(game_id).clear()

    # Then the next caller gets the creation as it was logged
    assert creations.settings_of(game_id)["time_control"]["decision_seconds"] == 30
    assert creations.time_control_of(game_id).decision_seconds == 30
