"""A hostile client against a real server, for every registered game type.

A Hypothesis state machine plays a game through gRPC, mixing legal moves
with junk: random command messages (out-of-range numbers, unknown enum
values), wrong seats and tokens, stale and future versions, reused, empty,
over-long and reserved command ids, random bytes, hostile arguments to every other
RPC. After every step:

- no answer was INTERNAL or UNKNOWN;
- a refused call changed nothing (the admin's view of the game is the same);
- a reused command id got its first outcome when the token that first sent
  it or the admin sent it again, ALREADY_EXISTS (COMMAND_ID_TAKEN) when any
  other token did (or INVALID_ARGUMENT, when the request is malformed
  whatever its id);
- the game as served equals the fold of its stored events, and a game that
  is not over has a seat that can act.
"""

from __future__ import annotations

import http.client
import os
import uuid
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from domain import registry
from domain.rules import Viewer
from service import protomap
from service.answers import game_module
from service.server import Running
from tests.hostile.strategies import messages
from tests.service.conftest import ADMIN_TOKEN, client_for, serve

FORBIDDEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
#: What a refused command may answer.
REFUSALS = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
}
MACHINE = settings(
    max_examples=int(os.environ.get("STRATA_HOSTILE_EXAMPLES", "6")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


#: Stands for the machine's own game type in a drawn creation.
THIS_GAME = "<this game>"


class HostileClient(RuleBasedStateMachine):
    """A client that plays one game of ``game_type`` legally while trying
    everything else: :func:`machine_for` makes one per server, game type
    and transport."""

    running: Running
    transport: str
    client: StrataClient
    admin: StrataClient
    game_type: str
    game_rules: Any
    module: ModuleType
    #: Every other game of the API, registered here or not.
    others: list[str]
    game_id: str
    tokens: list[str]
    first_answers: dict[str, tuple[Any, ...]]
    #: The token that got each of ``first_answers``.
    senders: dict[str, str]

    @initialize(data=st.data())
    def seat_everyone(self, data: st.DataObject) -> None:
        players = data.draw(
            st.integers(self.game_rules.min_players, self.game_rules.max_players),
            "players",
        )
        # A fixed seed: the game (and so what Hypothesis draws) replays.
        self.game_id = (
            self.client.with_token(ADMIN_TOKEN)
            .create_game(self.game_type, players, seed=f"hostile-{players}")
            .game_id
        )
        self.tokens = [
            self.client.join_game(self.game_id, f"p{s}", seat=s).seat_token
            for s in range(players)
        ]
        self.client.with_token(self.tokens[0]).start_game(self.game_id)
        self.first_answers = {}
        self.senders = {}

    # -- helpers --------------------------------------------------------

    def game(self) -> pb.Game:
        game: pb.Game = self.admin.get_game(self.game_id)
        return game

    def refused_and_unchanged(self, call: Any, allowed: set[Any]) -> None:
        """``call`` raises an allowed refusal and changes nothing, or works."""
        before = self.game()
        try:
            try:
                call()
            except grpc.RpcError as rpc_error:
                raise StrataError.from_rpc_error(rpc_error) from None
        except StrataError as error:
            assert error.code not in FORBIDDEN, error
            assert error.code in allowed, error
            assert self.game() == before

    # -- legal play -----------------------------------------------------

    @rule(data=st.data())
    def play_a_legal_move(self, data: st.DataObject) -> None:
        listing = self.admin.list_legal_actions(self.game_id)
        if not listing.actions:
            return
        action = data.draw(st.sampled_from(list(listing.actions)))
        command_id = uuid.uuid4().hex
        seat = self.client.with_token(self.tokens[action.seat])
        answer = seat.submit_command(
            self.game_id, action.seat, action.command, command_id
        )
        assert not answer.duplicate and answer.version > listing.version
        self.first_answers[command_id] = ("OK", answer.version)
        self.senders[command_id] = self.tokens[action.seat]

    # -- hostile commands -----------------------------------------------

    @rule(
        data=st.data(),
        wrapper=st.sampled_from(["typed", "typed", "typed", "empty", "other"]),
        seat=st.integers(-3, 8) | st.integers(-(2**31), 2**31 - 1),
        who=st.sampled_from(["seat", "seat", "other seat", "stranger", "admin"]),
        version=st.sampled_from(["none", "none", "current", "stale", "future"]),
        command_id=st.sampled_from(
            ["fresh", "fresh", "reuse", "empty", "long", "start", "join-seat-0"]
        ),
    )
    def send_a_hostile_command(
        self,
        data: st.DataObject,
        wrapper: str,
        seat: int,
        who: str,
        version: str,
        command_id: str,
    ) -> None:
        command = pb.GameCommand()
        if wrapper == "typed":
            getattr(command, self.game_type).CopyFrom(
                data.draw(messages(self.module.Command))
            )
        elif wrapper == "other" and self.others:
            other = data.draw(st.sampled_from(self.others))
            target = getattr(command, other)
            target.CopyFrom(data.draw(messages(type(target))))
        players = len(self.tokens)
        token = {
            "seat": self.tokens[seat % players],
            "other seat": self.tokens[(seat + 1) % players],
            "stranger": uuid.uuid4().hex,
            "admin": ADMIN_TOKEN,
        }[who]
        before = self.game()
        expected = {
            "none": None,
            "current": before.version,
            "stale": max(before.version - 1, 0),
            "future": before.version + 5,
        }[version]
        known = list(self.first_answers)
        cid = {
            "fresh": uuid.uuid4().hex,
            "reuse": data.draw(st.sampled_from(known)) if known else "x",
            "empty": "",
            "long": "x" * 129,
            "start": "start",
            "join-seat-0": "join-seat-0",
        }[command_id]
        request = pb.SubmitCommandRequest(
            game_id=self.game_id, seat=seat, command_id=cid, command=command
        )
        if expected is not None:
            request.expected_version = expected
        sender = self.client.with_token(token)
        try:
            answer = sender.stub.SubmitCommand(
                request, timeout=10, metadata=sender._metadata()
            )
        except grpc.RpcError as rpc_error:
            error = StrataError.from_rpc_error(rpc_error)
            assert error.code not in FORBIDDEN, error
            assert error.code in REFUSALS, error
            assert self.game() == before, "a refused command changed the game"
            outcome: tuple[Any, ...] = (error.code.name, error.reason)
        else:
            outcome = ("OK", answer.version)
            if not answer.duplicate:
                assert answer.version > before.version
        first = self.first_answers.get(cid)
        logged = outcome[0] in ("OK", "FAILED_PRECONDITION", "INVALID_ARGUMENT")
        if first is not None and first[0] == "OK":
            # A retry (or the admin) gets the first outcome, anyone else
            # a refusal; a request that is malformed whatever its id is
            # refused at the door (changing nothing).
            due = (
                first
                if token in (self.senders[cid], ADMIN_TOKEN)
                else ("ALREADY_EXISTS", "COMMAND_ID_TAKEN")
            )
            assert outcome == due or outcome[0] == "INVALID_ARGUMENT", (
                cid,
                first,
                outcome,
            )
        elif first is None and cid and logged and outcome[1] != "COMMAND_ID_INVALID":
            self.first_answers[cid] = outcome
            self.senders[cid] = token

    @rule(
        garbage=st.binary(max_size=64),
        content_type=st.sampled_from(
            [
                "application/proto",
                "application/json",
                "application/connect+json",
                "application/grpc-web+proto",
                "text/plain",
            ]
        ),
    )
    def send_random_bytes(self, garbage: bytes, content_type: str) -> None:
        before = self.game()
        if self.transport == "grpc":
            raw = self.client.channel.unary_unary(
                "/strata.v1.GameService/SubmitCommand"
            )
            try:
                raw(garbage, timeout=10)
            except grpc.RpcError as error:
                assert error.code() not in FORBIDDEN, error
        else:
            status, body = post(
                self.running.http_port,
                "/strata.v1.GameService/SubmitCommand",
                garbage,
                content_type,
            )
            assert status < 500 and b"Traceback" not in body, (status, body)
        assert self.game() == before

    # -- hostile arguments to the other RPCs ----------------------------

    @rule(at=st.integers(-3, 400), who=st.sampled_from(["seat", "stranger"]))
    def look_at_any_version(self, at: int, who: str) -> None:
        token = self.tokens[0] if who == "seat" else uuid.uuid4().hex
        self.refused_and_unchanged(
            lambda: self.client.with_token(token).get_game(self.game_id, at_version=at),
            {grpc.StatusCode.INVALID_ARGUMENT},
        )

    @rule(seat=st.integers(-3, 8), who=st.integers(0, 7))
    def list_actions_of_any_seat(self, seat: int, who: int) -> None:
        token = self.tokens[who % len(self.tokens)]
        self.refused_and_unchanged(
            lambda: self.client.with_token(token).list_legal_actions(
                self.game_id, seat
            ),
            {grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT},
        )

    @rule(first=st.integers(-3, 400), last=st.integers(-3, 400))
    def replay_any_range(self, first: int, last: int) -> None:
        request = pb.ReplayGameRequest(
            game_id=self.game_id, from_version=first, to_version=last
        )
        self.refused_and_unchanged(
            lambda: list(self.client.stub.ReplayGame(request, timeout=10)),
            {grpc.StatusCode.INVALID_ARGUMENT},
        )

    @rule(first=st.integers(-3, 400))
    def export_from_any_version(self, first: int) -> None:
        self.refused_and_unchanged(
            lambda: list(
                self.client.watch_game(self.game_id, from_version=first, follow=False)
            ),
            {grpc.StatusCode.INVALID_ARGUMENT},
        )

    @rule(
        seat=st.none() | st.integers(-3, 8),
        name=st.text(max_size=80),
        with_token=st.booleans(),
    )
    def join_a_started_game(
        self, seat: int | None, name: str, with_token: bool
    ) -> None:
        joiner = self.client.with_token(self.tokens[0] if with_token else "")
        self.refused_and_unchanged(
            lambda: joiner.join_game(self.game_id, name, seat),
            {grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT},
        )

    @rule(
        seat=st.integers(-3, 8) | st.integers(-(2**31), 2**31 - 1),
        who=st.sampled_from(["seat", "stranger", "nobody", "admin"]),
    )
    def leave_a_started_game(self, seat: int, who: str) -> None:
        # A seat's own token or the admin takes a real seat out of a
        # started game (tests/service/test_leaving.py): here only what
        # must be refused.
        if who in ("seat", "admin") and 0 <= seat < len(self.tokens):
            seat = len(self.tokens) + seat
        token = {
            "seat": self.tokens[0],
            "stranger": "st_" + "s" * 43,
            "nobody": "",
            "admin": ADMIN_TOKEN,
        }[who]
        self.refused_and_unchanged(
            lambda: self.client.with_token(token).leave_game(self.game_id, seat),
            {
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.StatusCode.INVALID_ARGUMENT,
            },
        )

    @rule(
        game=st.sampled_from([THIS_GAME, "nope"]) | st.text(max_size=20),
        players=st.integers(-2, 9),
        request_id=st.text(max_size=40),
        name=st.text(max_size=80),
        bot=st.text(max_size=10) | st.sampled_from(["random", "heuristic"]),
    )
    def create_and_join_with_hostile_text(
        self, game: str, players: int, request_id: str, name: str, bot: str
    ) -> None:
        """What the text fields of a creation and a join accept: a game
        made is as asked, or the call is refused; never INTERNAL."""
        if game == THIS_GAME:
            game = self.game_type
        try:
            created = self.client.create_game(
                game, players, request_id=request_id, bots={0: bot}
            )
        except StrataError as error:
            assert error.code not in FORBIDDEN, error
            assert error.code in REFUSALS, error
            return
        made = self.admin.get_game(created.game_id)
        assert (made.game_type, made.players) == (game, players)
        assert made.seats[0].bot == bot
        try:
            joined = self.client.join_game(created.game_id, name)
        except StrataError as error:
            assert error.code not in FORBIDDEN, error
            assert error.code in REFUSALS, error
            return
        stored = self.admin.get_game(created.game_id).seats[joined.seat].player_name
        assert stored and stored.isprintable(), repr(stored)

    @rule(who=st.sampled_from(["seat", "stranger", "nobody"]))
    def start_again(self, who: str) -> None:
        token = {"seat": self.tokens[0], "stranger": "s" * 43, "nobody": ""}[who]
        self.refused_and_unchanged(
            lambda: self.client.with_token(token).start_game(self.game_id),
            {
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.PERMISSION_DENIED,
            },
        )

    @rule(
        game_id=st.text(max_size=40),
        page_size=st.integers(-5, 1000),
        status=st.integers(-2, 9),
    )
    def ask_about_nonsense(self, game_id: str, page_size: int, status: int) -> None:
        self.refused_and_unchanged(
            lambda: self.client.get_game(game_id),
            {grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT},
        )
        self.refused_and_unchanged(
            lambda: self.client.list_games(
                page_size=page_size, status=status, page_token=game_id
            ),
            {grpc.StatusCode.INVALID_ARGUMENT},
        )

    # -- invariants -----------------------------------------------------

    @invariant()
    def the_served_game_is_the_replay_of_its_events(self) -> None:
        store = self.running.app.store
        session = registry.session_for(self.game_type)
        recorded = store.read_stream(self.game_id)
        state = session.fold(
            session.decode_event(r.type, r.data, r.schema_version) for r in recorded
        )
        served = self.game()
        assert served.version == state.version == len(recorded)
        want = protomap.to_proto(
            self.game_rules.view(state.game, Viewer.admin()), self.module.View()
        )
        assert getattr(served.view, self.game_type) == want
        if served.status != pb.GAME_STATUS_FINISHED:
            assert self.admin.list_legal_actions(self.game_id).actions


def machine_for(
    running: Running, game_type: str, transport: str = "grpc"
) -> type[RuleBasedStateMachine]:
    client = client_for(running, transport)
    return type(
        "HostileClient",
        (HostileClient,),
        {
            "running": running,
            "transport": transport,
            "client": client,
            "admin": client.with_token(ADMIN_TOKEN),
            "game_type": game_type,
            "game_rules": registry.rules_for(game_type),
            "module": game_module(game_type),
            "others": [
                f.name for f in pb.GameCommand.DESCRIPTOR.fields if f.name != game_type
            ],
        },
    )


@pytest.fixture
def any_server(store_url: str) -> Iterator[Running]:
    """A server on each backend: what PostgreSQL cannot store (a NUL in
    text) must be refused at the edge there as on SQLite."""
    yield from serve(store_url)


def post(port: int, path: str, body: bytes, content_type: str) -> tuple[int, bytes]:
    """An HTTP POST to the service's HTTP listener: (status, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST", path, body=body, headers={"Content-Type": content_type}
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("game_type", registry.game_types())
def test_a_hostile_client_changes_nothing_and_never_gets_internal(
    any_server: Running, game_type: str
):
    run_state_machine_as_test(machine_for(any_server, game_type), settings=MACHINE)


@pytest.mark.parametrize("transport", ["connect", "grpc-web"])
@pytest.mark.parametrize("game_type", registry.game_types())
def test_a_hostile_client_over_http_changes_nothing_and_never_gets_internal(
    server: Running, game_type: str, transport: str
):
    """The same machine over the HTTP listener (Connect and gRPC-Web), and
    random bytes of every content type to it: never a 500."""
    run_state_machine_as_test(
        machine_for(server, game_type, transport), settings=MACHINE
    )
