"""Command ids belong to whoever logged them, through real servers.

A repeated command id is answered with the first answer (``duplicate``)
only for the token that logged it (for any of its seats) and for the admin;
any other token gets ALREADY_EXISTS with reason COMMAND_ID_TAKEN, and
nothing is written. Each case runs on the replica the command was first
sent to (the game cached and current there), on another replica that
cached the game before the command (stale), and on one that had not loaded
the game at all (cold).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator

import grpc
import pytest
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from eventstore.factory import open_store
from service.server import Running, create_server
from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS
from tests.service.test_end_to_end import seated_game

#: A token no seat has: a spectator's.
SPECTATOR = "a-token-of-no-seat"
REPLICAS = ["same replica", "stale replica", "cold replica"]


@pytest.fixture
def replicas(sqlite_url: str) -> Iterator[Callable[[], StrataClient]]:
    """Starts more servers on ``server``'s database; returns a client (no
    token) of each."""
    started: list[tuple[Running, StrataClient]] = []

    def start() -> StrataClient:
        store = open_store(sqlite_url)
        running = create_server(
            store,
            admin_token=ADMIN_TOKEN,
            port=0,
            limits=NO_RATE_LIMITS,
            background=(),
        )
        client = StrataClient(f"127.0.0.1:{running.port}", timeout=10)
        started.append((running, client))
        return client

    yield start
    for running, client in started:
        client.close()
        running.stop(grace=0.5)
        running.app.store.close()


@dataclasses.dataclass
class Logged:
    """A game where seat ``a`` logged ``command_id`` (answered ``first``),
    and the replica (``there``, no token) that later calls go to."""

    game_id: str
    seats: dict[int, StrataClient]
    a: int
    command_id: str
    first: pb.SubmitCommandResponse
    there: StrataClient

    @property
    def b(self) -> int:
        return 1 - self.a

    def on_replica(self, token: str) -> StrataClient:
        return self.there.with_token(token)

    def token(self, seat: int) -> str:
        return self.seats[seat].token


def active_seat(client: StrataClient, game_id: str) -> int:
    (seat,) = client.get_game(game_id).active_seats
    return int(seat)


def play_until_active(
    client: StrataClient, game_id: str, seats: dict[int, StrataClient], seat: int
) -> None:
    """Legal moves (with fresh ids) until ``seat`` may act."""
    for _ in range(200):
        active = active_seat(client, game_id)
        if active == seat:
            return
        action = seats[active].list_legal_actions(game_id, active).actions[0]
        seats[active].submit_command(game_id, active, action.command)
    raise AssertionError(f"seat {seat} never got to act")


def logged_by_a(
    client: StrataClient,
    replicas: Callable[[], StrataClient],
    where: str,
    then_active: str,
) -> Logged:
    """Seat A's first move, logged as ``a-move``; then moves until seat
    ``then_active`` ("a" or "b") may act."""
    game_id, seats = seated_game(client)
    seats[0].start_game(game_id)
    there = client
    if where == "stale replica":
        there = replicas()
        there.get_game(game_id)  # cached there, before every move
    a = active_seat(client, game_id)
    action = seats[a].list_legal_actions(game_id, a).actions[0]
    first = seats[a].submit_command(game_id, a, action.command, command_id="a-move")
    assert not first.duplicate
    play_until_active(client, game_id, seats, a if then_active == "a" else 1 - a)
    if where == "cold replica":
        there = replicas()
    return Logged(game_id, seats, a, "a-move", first, there)


def written(
    admin: StrataClient, game_id: str
) -> tuple[int, list[admin_pb.CommandEntry]]:
    """What the game has written: its version and its command log."""
    return admin.get_game(game_id).version, list(admin.get_audit_log(game_id).commands)


def assert_taken(error: StrataError, command_id: str) -> None:
    assert error.code == grpc.StatusCode.ALREADY_EXISTS, error
    assert error.reason == "COMMAND_ID_TAKEN"
    assert repr(command_id) in error.message


def assert_first_answer(
    logged: Logged, token: str, seat: int, command: pb.GameCommand
) -> None:
    """``token`` sending ``logged``'s command id again gets its first answer."""
    again = logged.on_replica(token).submit_command(
        logged.game_id, seat, command, command_id=logged.command_id
    )
    assert again.duplicate
    assert again.version == logged.first.version
    assert [e.version for e in again.events] == [e.version for e in logged.first.events]


@pytest.mark.parametrize("where", REPLICAS)
@pytest.mark.parametrize(
    "how",
    [
        "its own move",
        "out of turn",
        "pinned to an old version",
        "for the other seat",
        "as a spectator",
    ],
)
def test_another_tokens_reuse_of_a_command_id_is_refused_and_writes_nothing(
    client: StrataClient,
    admin: StrataClient,
    replicas: Callable[[], StrataClient],
    where: str,
    how: str,
) -> None:
    # "its own move" is accepted by the rules (the append finds the id
    # taken); "out of turn" is refused by them (the refusal is not logged);
    # the pinned one is a version mismatch; the last two are not the
    # caller's seat to act for.
    b_acts = how in ("its own move", "pinned to an old version")
    logged = logged_by_a(client, replicas, where, then_active="b" if b_acts else "a")
    game_id, a, b = logged.game_id, logged.a, logged.b
    active = active_seat(client, game_id)
    action = logged.seats[active].list_legal_actions(game_id, active).actions[0]
    token, seat = {
        "its own move": (logged.token(b), b),
        "out of turn": (logged.token(b), b),
        "pinned to an old version": (logged.token(b), b),
        "for the other seat": (logged.token(b), a),
        "as a spectator": (SPECTATOR, a),
    }[how]
    before = written(admin, game_id)
    pinned = before[0] - 1 if how == "pinned to an old version" else None

    with pytest.raises(StrataError) as refused:
        logged.on_replica(token).submit_command(
            game_id,
            seat,
            action.command,
            command_id=logged.command_id,
            expected_version=pinned,
        )

    assert_taken(refused.value, logged.command_id)
    assert written(admin, game_id) == before  # A's entry untouched, none added
    assert_first_answer(logged, logged.token(a), a, action.command)
    assert written(admin, game_id) == before


@pytest.mark.parametrize("where", REPLICAS)
def test_the_admin_gets_the_first_answer_to_anyones_command_id(
    client: StrataClient,
    admin: StrataClient,
    replicas: Callable[[], StrataClient],
    where: str,
) -> None:
    logged = logged_by_a(client, replicas, where, then_active="b")
    game_id, b = logged.game_id, logged.b
    action = logged.seats[b].list_legal_actions(game_id, b).actions[0]
    before = written(admin, game_id)

    assert_first_answer(logged, ADMIN_TOKEN, b, action.command)

    assert written(admin, game_id) == before


@pytest.mark.parametrize("where", REPLICAS)
def test_a_refused_command_id_is_its_senders_too(
    client: StrataClient,
    admin: StrataClient,
    replicas: Callable[[], StrataClient],
    where: str,
) -> None:
    game_id, seats = seated_game(client, players=3)
    seats[0].start_game(game_id)
    there = replicas() if where == "stale replica" else client
    there.get_game(game_id)  # cached there, before the next move
    first_seat = active_seat(client, game_id)
    first_move = seats[first_seat].list_legal_actions(game_id, first_seat).actions[0]
    seats[first_seat].submit_command(game_id, first_seat, first_move.command)
    active = active_seat(client, game_id)
    waiting, also_waiting = (s for s in range(3) if s != active)
    action = seats[active].list_legal_actions(game_id, active).actions[0]
    with pytest.raises(StrataError) as early:
        seats[waiting].submit_command(
            game_id, waiting, action.command, command_id="too-early"
        )
    assert early.value.code == grpc.StatusCode.FAILED_PRECONDITION
    if where == "cold replica":
        there = replicas()
    before = written(admin, game_id)
    assert [c.command_id for c in before[1] if not c.accepted] == ["too-early"]

    # The seat whose turn it is, with the waiting seat's id: before command
    # ids had owners it got the waiting seat's refusal, its move not made.
    with pytest.raises(StrataError) as taken:
        there.with_token(seats[active].token).submit_command(
            game_id, active, action.command, command_id="too-early"
        )

    assert_taken(taken.value, "too-early")
    assert written(admin, game_id) == before
    # Another waiting seat, refused by the rules just as the first was (the
    # same reason and message): the id is still not its own.
    with pytest.raises(StrataError) as taken:
        there.with_token(seats[also_waiting].token).submit_command(
            game_id, also_waiting, action.command, command_id="too-early"
        )
    assert_taken(taken.value, "too-early")
    assert written(admin, game_id) == before
    with pytest.raises(StrataError) as again:
        there.with_token(seats[waiting].token).submit_command(
            game_id, waiting, action.command, command_id="too-early"
        )
    assert (again.value.code, again.value.reason) == (
        early.value.code,
        early.value.reason,
    )
    assert written(admin, game_id) == before


def test_a_token_owns_its_command_ids_for_every_seat_it_acts_for(
    client: StrataClient, admin: StrataClient
) -> None:
    # The actor is the token, not the seat: a hot-seat token reusing an id
    # for its other seat gets the first answer, not a second move.
    game_id = (
        client.with_token(ADMIN_TOKEN)
        .create_game("dinosaurs_extinct", 2, seed="e2e")
        .game_id
    )
    token = client.join_game(game_id, seat=0).seat_token
    both = client.with_token(token)
    both.join_game(game_id, seat=1)
    both.start_game(game_id)
    seats = {0: both, 1: both}
    first_seat = active_seat(client, game_id)
    action = both.list_legal_actions(game_id, first_seat).actions[0]
    first = both.submit_command(
        game_id, first_seat, action.command, command_id="hot-seat"
    )
    play_until_active(client, game_id, seats, 1 - first_seat)
    other_seat = 1 - first_seat
    action = both.list_legal_actions(game_id, other_seat).actions[0]
    before = written(admin, game_id)

    again = both.submit_command(
        game_id, other_seat, action.command, command_id="hot-seat"
    )

    assert again.duplicate and again.version == first.version
    assert written(admin, game_id) == before
    fresh = both.submit_command(
        game_id, other_seat, action.command, command_id=uuid.uuid4().hex
    )
    assert not fresh.duplicate and fresh.version > before[0]
