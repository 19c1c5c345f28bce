"""LeaveGame in started games: who may, what it does, and that a verified
replay decides it again."""

from __future__ import annotations

from typing import Any

import pytest

from clients import cli
from domain.escaping_extinction.content import Dino
from domain.escaping_extinction.model import EndTurn
from domain.session import ABANDONED, OPPONENTS_LEFT, Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.bots import BotRunner
from service.callers import Caller
from service.errors import InvalidArgument, PermissionDenied
from service.verification import verify_game


def started(
    app: GameApp, game_type: str, players: int, **table: Any
) -> tuple[str, list[str], str]:
    """A started game, its seat tokens and its host token."""
    game_id, _, host = app.create_game(
        Caller(admin=True), game_type, players, seed="leave", **table
    )
    tokens = [
        app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in range(players)
    ]
    app.start_game(app.caller(tokens[0]), game_id)
    return game_id, tokens, host


def run_bots(app: GameApp) -> None:
    runner = BotRunner(app)
    for _ in range(5000):
        if runner.run_once() == 0:
            return


def test_a_seat_leaves_with_its_own_token_and_the_last_seat_in_wins() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, tokens, _ = started(app, "dinosaurs_extinct", 2)
    app.leave_game(app.caller(tokens[1]), game_id, 1)
    state = app.load(game_id).state
    assert state.status is Status.FINISHED
    assert state.outcome is not None
    assert (state.outcome.winners, state.outcome.result) == ((0,), OPPONENTS_LEFT)
    assert verify_game(app.store, game_id).ok


def test_only_the_seats_token_or_the_admin_takes_a_seat_out() -> None:
    app = GameApp(InMemoryEventStore(), admin_token="adm")
    game_id, tokens, host = started(app, "cubosaurs", 3)
    version = app.load(game_id).state.version
    for stranger in (tokens[0], host, "st_nobody"):
        with pytest.raises(PermissionDenied):
            app.leave_game(app.caller(stranger), game_id, 2)
    assert app.load(game_id).state.version == version
    app.leave_game(app.caller("adm"), game_id, 2)
    state = app.load(game_id).state
    assert state.left == (2,) and state.status is Status.ACTIVE
    assert 2 not in app.load(game_id).session.active_seats(state)
    assert verify_game(app.store, game_id).ok


def test_the_last_person_leaving_ends_the_game_as_abandoned() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, _, _ = app.create_game(
        Caller(admin=True), "happy_little_dinosaurs", 2, seed="x", bots=[(1, "random")]
    )
    _, token, _ = app.join_game(app.caller(""), game_id, 0, "ada")
    app.start_game(app.caller(token), game_id)
    app.leave_game(app.caller(token), game_id, 0)
    outcome = app.load(game_id).state.outcome
    assert outcome is not None and outcome.result == ABANDONED and not outcome.winners
    assert verify_game(app.store, game_id).ok


def test_with_replace_leavers_bot_a_bot_plays_the_seat_to_the_end() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, tokens, _ = started(
        app, "dinosaurs_extinct", 2, replace_leavers="bot", bots=()
    )
    app.leave_game(app.caller(tokens[1]), game_id, 1)
    state = app.load(game_id).state
    info = state.seats[1]
    assert info is not None and info.bot == "heuristic" and state.left == ()
    # The old token no longer acts for the seat.
    assert app.legal_actions(app.caller(tokens[1]), game_id, None)[1] == []
    # Seat 0 leaves too, to a bot: nobody is left, the game is abandoned.
    run_bots(app)
    state = app.load(game_id).state
    if state.status is Status.ACTIVE:
        app.leave_game(app.caller(tokens[0]), game_id, 0)
        state = app.load(game_id).state
    assert state.status is Status.FINISHED
    assert verify_game(app.store, game_id).ok


def test_a_bot_replacing_a_leaver_plays_through_the_runner() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, tokens, _ = started(app, "cubosaurs", 2, replace_leavers="bot")
    app.leave_game(app.caller(tokens[0]), game_id, 0)
    before = app.load(game_id).state.version
    run_bots(app)
    state = app.load(game_id).state
    # The bot moved for seat 0 until it was seat 1's turn (or the end).
    assert state.version > before
    active = app.load(game_id).session.active_seats(state)
    assert state.status is Status.FINISHED or active == {1}
    assert verify_game(app.store, game_id).ok


def test_replace_leavers_takes_only_bot() -> None:
    app = GameApp(InMemoryEventStore())
    with pytest.raises(InvalidArgument) as err:
        app.create_game(Caller(admin=True), "cubosaurs", 2, replace_leavers="human")
    assert err.value.reason == "REPLACE_LEAVERS_INVALID"


def test_in_the_cooperative_game_a_leavers_dinos_go_to_the_next_seat_in() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, tokens, _ = started(app, "escaping_extinction", 4)
    app.leave_game(app.caller(tokens[1]), game_id, 1)
    state = app.load(game_id).state
    control = {c.dino: c.seats for c in state.game.control}
    assert control[Dino.REX] == (2,)
    assert state.status is Status.ACTIVE
    # Seat 2 now plays Rex: when Terry ends his turn, Rex's turn is seat 2's.
    seat0 = app.caller(tokens[0])
    app.submit(seat0, game_id, 0, "end", EndTurn(Dino.TERRY))
    state = app.load(game_id).state
    assert app.load(game_id).session.active_seats(state) == {2}
    assert verify_game(app.store, game_id).ok


def test_strata_create_replace_leavers_and_strata_leave_a_started_game(
    target: str, client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--game", "cubosaurs", "--players", "2", "--replace-leavers", "bot"]
    assert cli.main(["create", *args, "--target", target]) == 0
    game_id = capsys.readouterr().out.strip()
    tokens = [client.join_game(game_id, f"p{s}", seat=s).seat_token for s in (0, 1)]
    client.with_token(tokens[0]).start_game(game_id)
    leave = ["leave", game_id, "--seat", "1", "--token", tokens[1]]
    assert cli.main([*leave, "--target", target]) == 0
    seat = client.get_game(game_id).seats[1]
    assert seat.bot == "heuristic" and not seat.left
