"""Rematches: CreateGame with rematch_of."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients import cli
from clients.client import StrataError
from domain.errors import RuleViolation
from domain.session import Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.callers import Caller, hash_token
from service.clocks import TimeControl
from service.errors import PermissionDenied
from service.verification import verify_game

GAME = "dinosaurs_extinct"


def finished(app: GameApp, **table: Any) -> tuple[str, list[str]]:
    """A finished 3-seat game: seat 2 a bot, seats 0 and 1 people (seat 1
    left, so seat 0 won)."""
    game_id, _, _ = app.create_game(
        Caller(admin=True), GAME, 3, seed="old", bots=[(2, "random")], **table
    )
    tokens = [app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in (0, 1)]
    app.start_game(app.caller(tokens[0]), game_id)
    app.leave_game(app.caller(tokens[1]), game_id, 1)
    app.leave_game(app.caller(tokens[0]), game_id, 0)
    assert app.load(game_id).state.status is Status.FINISHED
    return game_id, tokens


def test_a_rematch_keeps_type_options_settings_bots_and_seats_for_the_old_tokens():
    app = GameApp(InMemoryEventStore())
    control = TimeControl(decision_seconds=60)
    old, tokens = finished(app, time_control=control)
    new = app.rematch(app.caller(tokens[1]), old).game_id
    state = app.load(new).state
    assert state.game_type == GAME and len(state.seats) == 3
    bot = state.seats[2]
    assert bot is not None and bot.bot == "random"
    assert state.seats[0] is None and state.seats[1] is None
    assert app.lobby.settings_of(new) == app.lobby.settings_of(old)
    # Linked both ways.
    assert app.load(old).state.rematch == new
    assert app.lobby.creation_of(new)["rematch_of"] == old
    # A stranger cannot take a kept seat; the old tokens claim theirs.
    with pytest.raises(PermissionDenied) as err:
        app.join_game(app.caller("st_stranger"), new, 0, "Eve")
    assert err.value.reason == "SEAT_RESERVED"
    seat, token, _ = app.join_game(app.caller(tokens[1]), new, None, "whoever")
    assert (seat, token) == (1, tokens[1])
    info = app.load(new).state.seats[1]
    assert info is not None and info.name == "p1"
    assert info.token_hash == hash_token(tokens[1])
    app.join_game(app.caller(tokens[0]), new, 0, "p0")
    app.start_game(app.caller(tokens[0]), new)
    assert app.load(new).state.status is Status.ACTIVE
    assert verify_game(app.store, old).ok and verify_game(app.store, new).ok


def test_one_rematch_a_game_whoever_asks() -> None:
    app = GameApp(InMemoryEventStore())
    old, tokens = finished(app)
    first = app.rematch(app.caller(tokens[0]), old).game_id
    again = app.rematch(app.caller(tokens[1]), old).game_id
    assert first == again
    assert len(app.store.list_streams("", 10)) == 2


def test_only_a_finished_games_players_or_the_admin_ask_for_a_rematch() -> None:
    app = GameApp(InMemoryEventStore(), admin_token="adm")
    old, _ = finished(app)
    with pytest.raises(PermissionDenied):
        app.rematch(app.caller("st_stranger"), old)
    assert app.rematch(app.caller("adm"), old).game_id
    running, _, _ = app.create_game(Caller(admin=True), GAME, 2, bots=[(1, "random")])
    _, token, _ = app.join_game(app.caller(""), running, 0, "Ada")
    with pytest.raises(RuleViolation) as err:
        app.rematch(app.caller(token), running)
    assert err.value.reason == "GAME_NOT_FINISHED"


def test_rematch_through_grpc_and_the_cli(
    client: Any, admin: Any, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    created = admin.create_game(GAME, 2, bots={1: "random"})
    token = client.join_game(created.game_id, "Ada").seat_token
    player = client.with_token(token)
    player.start_game(created.game_id)
    player.leave_game(created.game_id, 0)  # the last person: abandoned
    args = ["rematch", created.game_id, "--token", token, "--target", target]
    assert cli.main(args) == 0
    new = capsys.readouterr().out.strip()
    assert player.get_game(created.game_id).rematch == new
    assert player.get_game(new).rematch_of == created.game_id
    assert player.join_game(new).seat == 0
    assert [s.bot for s in player.get_game(new).seats] == ["", "random"]
    wrong = pb.CreateGameRequest(rematch_of=created.game_id, players=3)
    with pytest.raises(StrataError) as err:
        player._call(player.stub.CreateGame, wrong)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.reason == "REMATCH_MISMATCH"
    for game_id in (created.game_id, new):
        verdict = admin.verify_game(game_id).verdict
        assert verdict == admin_pb.VERDICT_VERIFIED


def test_a_seat_a_bot_took_over_is_that_bot_in_the_rematch() -> None:
    app = GameApp(InMemoryEventStore())
    old, tokens = finished(app, replace_leavers="bot")
    # Seat 1 went to the heuristic bot; seat 0, the last person, kept its
    # seat (the game was abandoned): the rematch keeps seat 0 for it.
    new = app.rematch(app.caller(tokens[0]), old).game_id
    seats = app.load(new).state.seats
    assert seats[0] is None
    assert [s.bot if s else None for s in seats[1:]] == ["heuristic", "random"]
    assert app.lobby.settings_of(new) == {"replace_leavers": "bot"}
    with pytest.raises(PermissionDenied):
        app.join_game(app.caller(tokens[1]), new, 0, "p1")
    assert app.join_game(app.caller(tokens[0]), new, None, "p0")[0] == 0
    assert app.load(new).state.status is Status.OPEN
