"""Bot levels (random, heuristic, strong) wherever a bot takes a seat:
CreateGame's bot seats, replace_leavers and the timeout policy, through a
real server; and the strong bot's time budget (STRATA_BOT_MOVE_MS)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import grpc
import pytest
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from domain import bots as domain_bots
from domain.clocks import TimeControl
from domain.errors import InvalidCommand
from domain.session import Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.callers import Caller
from service.clocks import Timekeeper
from service.errors import InvalidArgument
from service.limits import LimitSettings
from service.verification import verify_game
from tests.service.conftest import ADMIN_TOKEN
from tests.service.test_bot_seats import wait_until_finished
from tests.service.test_leaving import run_bots, started


def _create(client: StrataClient, *seats: pb.BotSeat) -> pb.CreateGameResponse:
    request = pb.CreateGameRequest(
        game_type="dinosaurs_extinct", players=len(seats), seed="levels", bots=seats
    )
    return client._call(client.stub.CreateGame, request)  # type: ignore[no-any-return]


def test_bot_seats_take_a_level_by_name_or_by_level(client: StrataClient) -> None:
    admin = client.with_token(ADMIN_TOKEN)
    created = _create(
        admin,
        pb.BotSeat(seat=0, level=pb.BOT_LEVEL_STRONG),
        pb.BotSeat(seat=1, bot="random"),
        pb.BotSeat(seat=2),  # neither: the default level, heuristic
        pb.BotSeat(seat=3, bot="strong", level=pb.BOT_LEVEL_STRONG),
    )
    game = wait_until_finished(client, created.game_id)
    assert [s.bot for s in game.seats] == ["strong", "random", "heuristic", "strong"]
    assert admin.verify_game(created.game_id).verdict == admin_pb.VERDICT_VERIFIED


@pytest.mark.parametrize(
    ("seat", "reason"),
    [
        (
            pb.BotSeat(seat=0, bot="random", level=pb.BOT_LEVEL_STRONG),
            "BOT_LEVEL_CONFLICT",
        ),
        (pb.BotSeat(seat=0, level=42), "ENUM_VALUE_INVALID"),  # type: ignore[arg-type]
        (pb.BotSeat(seat=0, bot="grandmaster"), "UNKNOWN_BOT"),
    ],
)
def test_a_bot_seat_naming_no_level_is_an_invalid_argument(
    client: StrataClient, seat: pb.BotSeat, reason: str
) -> None:
    with pytest.raises(StrataError) as error:
        _create(client.with_token(ADMIN_TOKEN), seat, pb.BotSeat(seat=1))
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.value.reason == reason


def test_replace_leavers_names_the_level_that_takes_the_seat() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, tokens, _ = started(
        app, "dinosaurs_extinct", 2, replace_leavers="bot:strong"
    )
    app.leave_game(app.caller(tokens[1]), game_id, 1)
    info = app.load(game_id).state.seats[1]
    assert info is not None and info.bot == domain_bots.STRONG
    run_bots(app)
    app.leave_game(app.caller(tokens[0]), game_id, 0)
    assert app.load(game_id).state.status is Status.FINISHED
    assert verify_game(app.store, game_id).ok
    for named in ("bot:clairvoyant", "bot:", "strong"):
        with pytest.raises(InvalidArgument) as err:
            app.create_game(Caller(admin=True), "cubosaurs", 2, replace_leavers=named)
        assert err.value.reason == "REPLACE_LEAVERS_INVALID"


def test_a_strong_timeout_is_logged_with_its_samples_and_verifies() -> None:
    """The strong bot stops at its time budget; the samples it searched
    are logged with the timeout, and a verification decides the same move
    again from them."""
    app = GameApp(InMemoryEventStore(), bot_move_ms=1)
    control = TimeControl(decision_seconds=5, on_timeout="bot:strong")
    game_id, _, _ = started(app, "happy_little_dinosaurs", 2, time_control=control)
    before = app.load(game_id).state.version
    later = datetime.now(UTC) + timedelta(hours=1)
    assert Timekeeper(app, clock=lambda: later).act(game_id, control, later) == 1
    logged = [c for c in app.store.read_commands(game_id) if "timeout" in c.payload]
    assert logged and logged[0].payload["timeout"]["policy"] == "bot:strong"
    # One millisecond: the search stopped after its first sample.
    assert logged[0].payload["timeout"]["samples"] == 1
    assert app.load(game_id).state.version > before
    assert verify_game(app.store, game_id).ok


def test_the_timeout_policy_takes_a_level_or_nothing_else() -> None:
    for policy in ("bot", "bot:random", "bot:heuristic", "bot:strong", "forfeit"):
        assert TimeControl(decision_seconds=5, on_timeout=policy).check()
    with pytest.raises(InvalidCommand) as err:
        TimeControl(decision_seconds=5, on_timeout="bot:oracle").check()
    assert "bot:strong" in str(err.value)


def test_the_bots_time_to_think_is_an_environment_setting() -> None:
    assert LimitSettings().bot_move_ms == 250
    assert LimitSettings.from_env({"STRATA_BOT_MOVE_MS": "40"}).bot_move_ms == 40
    with pytest.raises(ValueError, match="STRATA_BOT_MOVE_MS"):
        LimitSettings.from_env({"STRATA_BOT_MOVE_MS": "soon"})


def test_strong_bots_are_paid_for_by_their_creators_thinking_time() -> None:
    """The attack: an anonymous caller fills games with strong bots. Moves
    alone were the budget (20 a second, each thinking up to 250 ms: five
    cores' worth from one address); each move's think time is charged to
    its creator, who may use STRATA_BOT_THINK_SHARE seconds a second."""
    from service.bots import BotRunner

    app = GameApp(InMemoryEventStore())
    attacker = Caller(peer="203.0.113.7")
    strong = app.create_game(
        attacker, "cubosaurs", 2, bots=[(0, "strong"), (1, "strong")]
    ).game_id
    other = Caller(peer="198.51.100.9")
    plain = app.create_game(
        other, "cubosaurs", 2, bots=[(0, "heuristic"), (1, "heuristic")]
    ).game_id
    # A fast move rate, so only the thinking can hold the strong bots back.
    runner = BotRunner(app, moves_per_creator=1000, move_ms=150, think_share=0.01)
    strong_moves = sum(runner.move(strong) for _ in range(40))
    assert runner.throttled > 0, "the strong bots thought without bound"
    # The burst (one second of thinking) went on a handful of strong moves.
    assert 0 < strong_moves < 40
    throttled = runner.throttled
    # Another creator's heuristic bots think next to nothing: not held back.
    plain_moves = sum(runner.move(plain) for _ in range(20))
    assert plain_moves == 20 and runner.throttled == throttled
