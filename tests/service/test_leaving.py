"""LeaveGame in started games: who may, what it does, and that a verified
replay decides it again; a seat that left never wins, by either way out
(LeaveGame, a forfeit on time), in each game where its pieces play on."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients import cli
from domain import codec, cubosaurs, happy_little_dinosaurs
from domain.escaping_extinction.content import Dino
from domain.escaping_extinction.model import EndTurn
from domain.session import ABANDONED, OPPONENTS_LEFT, Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.bots import BotRunner
from service.callers import Caller
from service.clocks import FORFEIT, TimeControl, Timekeeper
from service.errors import InvalidArgument, PermissionDenied
from service.verification import verify_game
from tests.games.cubosaurs.test_leaving import last_round
from tests.games.happy_little_dinosaurs.test_leaving import leaver_on_49
from tests.service.conftest import play_first_actions
from tests.service.test_positions import seat_everyone


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


# -- a seat that left never wins -------------------------------------------------

#: Per game, a position where seat 2's pieces would win if it stayed: Happy
#: Little Dinosaurs' seat 2 escapes at the end of the round (one Disaster
#: from 50, its passive stand-in moving it there), Cubosaurs' seat 2 leads
#: by far in the last round (and is to act: its stand-in takes the packet).
LEADING_LEAVER: dict[str, Any] = {
    "happy_little_dinosaurs": happy_little_dinosaurs.model.Scenario(
        position=happy_little_dinosaurs.model.Position(
            players=leaver_on_49(),
            rounds_played=6,
            disaster_deck=("natural_2",),
            shuffle_rest=True,
        )
    ),
    "cubosaurs": cubosaurs.model.Scenario(
        position=dataclasses.replace(last_round(12, 15, 60), turn=2)
    ),
}


def out_of_time(app: GameApp, game_id: str, tokens: list[str], seat: int) -> None:
    """The seats before ``seat`` move in time; ``seat``'s time runs out and
    the service forfeits it."""
    control = TimeControl(decision_seconds=30, on_timeout=FORFEIT)
    for n in range(10):
        loaded = app.load(game_id)
        active = sorted(loaded.session.active_seats(loaded.state))
        if active == [seat]:
            break
        first = loaded.session.legal_actions(loaded.state, active[0])[0]
        app.submit(app.caller(tokens[active[0]]), game_id, active[0], f"t{n}", first)
    later = datetime.now(UTC) + timedelta(hours=1)
    assert Timekeeper(app, clock=lambda: later).act(game_id, control, later) == 1


@pytest.mark.parametrize("way_out", ["leave_game", "forfeit"])
@pytest.mark.parametrize("game_type", sorted(LEADING_LEAVER))
def test_a_seat_that_left_never_wins_the_best_seat_still_in_does(
    game_type: str, way_out: str
) -> None:
    app = GameApp(InMemoryEventStore())
    control = TimeControl(decision_seconds=30, on_timeout=FORFEIT)
    game_id, tokens, _ = started(
        app,
        game_type,
        3,
        scenario=LEADING_LEAVER[game_type],
        time_control=control,
    )
    if way_out == "leave_game":
        app.leave_game(app.caller(tokens[2]), game_id, 2)
    else:
        out_of_time(app, game_id, tokens, 2)
    assert app.load(game_id).state.left == (2,)

    for n in range(500):  # the seats still in play their first legal move
        loaded = app.load(game_id)
        active = sorted(loaded.session.active_seats(loaded.state))
        if not active:
            break
        command = loaded.session.legal_actions(loaded.state, active[0])[0]
        app.submit(app.caller(tokens[active[0]]), game_id, active[0], f"m{n}", command)

    state = app.load(game_id).state
    assert state.status is Status.FINISHED and state.outcome is not None
    ahead = best_still_in(game_type, state.game)
    assert state.outcome.winners == ahead and 2 not in ahead
    assert leader(game_type, state.game) == 2  # staying, seat 2 would have won
    assert verify_game(app.store, game_id).ok


def best_still_in(game_type: str, game: Any) -> tuple[int, ...]:
    """Seats 0 and 1 with the furthest escape or the highest total."""
    standing = [score(game_type, game, s) for s in (0, 1)]
    return tuple(s for s in (0, 1) if standing[s] == max(standing))


def leader(game_type: str, game: Any) -> int:
    return max(range(3), key=lambda s: score(game_type, game, s))


def score(game_type: str, game: Any, seat: int) -> int:
    if game_type == "cubosaurs":
        return int(cubosaurs.RULES.totals(game)[seat])
    return int(game.players[seat].escape)


def test_through_the_api_a_leader_who_left_loses_to_the_best_seat_still_in(
    client: Any, admin: Any
) -> None:
    position = dataclasses.replace(last_round(12, 15, 60), turn=2)
    game_id = admin.create_game(
        "cubosaurs", 3, position=json.loads(json.dumps(codec.encode(position)))
    ).game_id
    tokens = seat_everyone(client, game_id, 3)

    client.with_token(tokens[2]).leave_game(game_id, 2)
    play_first_actions(client, game_id, tokens, 100)

    game = client.get_game(game_id)
    totals = [p.total for p in game.view.cubosaurs.players]
    assert game.status == pb.GAME_STATUS_FINISHED and game.seats[2].left
    assert totals[2] > max(totals[:2])
    best = max(totals[:2])
    assert list(game.outcome.winners) == [s for s in (0, 1) if totals[s] == best]
    # The game's own event records it (and the lifecycle's follows it).
    scored = [
        e.game_event.cubosaurs.game_scored
        for e in admin.watch_game(game_id, follow=False)
        if e.type == "GameScored"
    ]
    assert list(scored[0].winners) == list(game.outcome.winners)
    assert admin.verify_game(game_id).verdict == admin_pb.VERDICT_VERIFIED
