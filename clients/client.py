"""A typed Python client of Strata's gRPC API.

    from clients.client import StrataClient

    with StrataClient("localhost:50051") as client:
        game_id = client.create_game("dinosaurs_extinct", players=2).game_id
        me = client.join_game(game_id, player_name="Ada")
        seat = client.with_token(me.seat_token)
        seat.start_game(game_id)
        action = seat.list_legal_actions(game_id).actions[0]
        seat.submit_command(game_id, action.seat, action.command)

Every method returns the response message of its RPC; errors raise
:class:`StrataError` with the status code, the stable reason and the message.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import admin_service_pb2_grpc as admin_grpc
from strata.v1 import game_service_pb2 as pb
from strata.v1 import game_service_pb2_grpc as pb_grpc
from strata.v1 import integration_service_pb2 as integration_pb
from strata.v1 import integration_service_pb2_grpc as integration_grpc


class StrataError(Exception):
    """An RPC failed: ``code`` (grpc.StatusCode), ``reason`` (stable code),
    the service's sentence and, for malformed input, the ``field`` that is
    wrong (its path in the request, as ``scenario.cubosaurs.position.deck``)."""

    def __init__(
        self, code: grpc.StatusCode, reason: str, message: str, field: str = ""
    ) -> None:
        super().__init__(f"{code.name} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.field = field

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> StrataError:
        reason = field = ""
        status = rpc_status.from_call(error)
        if status is not None:
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    reason = info.reason
                elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad = error_details_pb2.BadRequest()
                    detail.Unpack(bad)
                    field = next((v.field for v in bad.field_violations), "")
        return cls(error.code(), reason, error.details() or "", field)


#: The service's answer header: the highest log position the answering
#: replica knew (its writes included).
POSITION_HEADER = "strata-position"
#: Sent back on every call: the caller's reads show at least that position.
READ_AFTER_HEADER = "strata-read-after"


class _Seen:
    """The highest ``strata-position`` seen (shared by a client's copies)."""

    def __init__(self) -> None:
        self.position = 0

    def note(self, metadata: Any) -> None:
        for key, value in metadata or ():
            if key == POSITION_HEADER and str(value).isdigit():
                self.position = max(self.position, int(value))


def position_scenario(
    game_type: str,
    position: Message | dict[str, Any],
    scenario: pb.GameScenario | None = None,
) -> pb.GameScenario:
    """A scenario (a copy of ``scenario``, or a new one) whose
    ``game_type`` scenario starts from ``position``: that game's
    ``Position`` message, or its proto JSON form (``{"dinos": [{"step":
    30}, …], "turn": 1}``). Raises ValueError for a game type with no
    positions or JSON that is not such a position."""
    out = pb.GameScenario()
    if scenario is not None:
        out.CopyFrom(scenario)
    if game_type not in pb.GameScenario.DESCRIPTOR.fields_by_name:
        raise ValueError(f"no game type {game_type!r}")
    target = getattr(out, game_type)
    if "position" not in target.DESCRIPTOR.fields_by_name:
        raise ValueError(f"{game_type} has no positions")
    if isinstance(position, Message):
        target.position.CopyFrom(position)
    else:
        try:
            json_format.ParseDict(position, target.position)
        except json_format.ParseError as error:
            raise ValueError(f"not a {game_type} position: {error}") from None
    return out


@dataclasses.dataclass(frozen=True)
class Tls:
    """TLS to the service: the authority that signed its certificate (the
    system's when empty), and a client certificate and key for a service
    that asks for one (mutual TLS). Paths of PEM files."""

    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""

    def _read(self, path: str) -> bytes | None:
        return Path(path).read_bytes() if path else None

    def grpc_credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self._read(self.ca_file),
            private_key=self._read(self.key_file),
            certificate_chain=self._read(self.cert_file),
        )


def deadline(seconds: int, on_timeout: str = "bot") -> pb.TimeControl:
    """A time control of ``seconds`` per decision (``on_timeout``: ``bot``
    or ``forfeit``)."""
    return pb.TimeControl(decision_seconds=seconds, on_timeout=on_timeout)


def clock(base: int, increment: int = 0, on_timeout: str = "bot") -> pb.TimeControl:
    """A clock per seat: ``base`` seconds plus ``increment`` after each move."""
    return pb.TimeControl(
        base_seconds=base, increment_seconds=increment, on_timeout=on_timeout
    )


class StrataClient:
    """A connection to a Strata service, optionally with a bearer token."""

    def __init__(
        self,
        target: str = "localhost:50051",
        token: str = "",
        timeout: float = 30.0,
        channel: grpc.Channel | None = None,
        transport: str = "grpc",
        tls: Tls | None = None,
    ) -> None:
        """``transport``: ``grpc`` (``target`` is ``host:port``), or, to the
        service's HTTP listener (``target`` is ``http://host:8080``, or
        ``https://…``), ``connect`` (Connect, JSON), ``connect-proto``
        (Connect, binary) or ``grpc-web`` (:mod:`clients.connect`).
        ``tls``: connect over TLS (see :class:`Tls`)."""
        self.target = target
        self.token = token
        self.timeout = timeout
        self.transport = transport
        self.tls = tls
        self._owns_channel = channel is None
        self._shared: StrataClient | None = None
        #: The highest ``strata-position`` an answer gave this client (and
        #: the clients :meth:`with_token` made from it), sent back as
        #: ``strata-read-after``: its reads show its own writes, whichever
        #: replica answers them.
        self._seen = _Seen()
        #: The gRPC channel (None over the other transports).
        self.channel: Any = channel
        if transport != "grpc":
            from clients.connect import stubs

            self.stub, self.admin_stub, self.integration_stub, self._http = stubs(
                target, transport, tls
            )
            return
        if self.channel is None:
            self.channel = (
                grpc.secure_channel(target, tls.grpc_credentials())
                if tls is not None
                else grpc.insecure_channel(target)
            )
        self.stub = pb_grpc.GameServiceStub(self.channel)
        self.admin_stub = admin_grpc.AdminServiceStub(self.channel)
        self.integration_stub = integration_grpc.IntegrationServiceStub(self.channel)

    def with_token(self, token: str) -> StrataClient:
        """A client on the same connection acting with ``token``."""
        if self.transport == "grpc":
            client = StrataClient(
                self.target, token, self.timeout, self.channel, self.transport, self.tls
            )
            client._seen = self._seen
            return client
        other = copy.copy(self)
        other.token = token
        other._owns_channel = False
        return other

    def close(self) -> None:
        if not self._owns_channel:
            return
        if self.channel is not None:
            self.channel.close()

    def __enter__(self) -> StrataClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _metadata(self) -> list[tuple[str, str]]:
        metadata = [("authorization", f"Bearer {self.token}")] if self.token else []
        if self._seen.position:
            metadata.append((READ_AFTER_HEADER, str(self._seen.position)))
        return metadata

    def _call(self, method: Any, request: Any) -> Any:
        try:
            response, call = method.with_call(
                request, timeout=self.timeout, metadata=self._metadata()
            )
        except grpc.RpcError as error:
            raise StrataError.from_rpc_error(error) from None
        self._seen.note(call.trailing_metadata())
        return response

    # -- RPCs -------------------------------------------------------------------

    def list_game_types(self) -> pb.ListGameTypesResponse:
        return self._call(self.stub.ListGameTypes, pb.ListGameTypesRequest())  # type: ignore[no-any-return]

    def create_game(
        self,
        game_type: str,
        players: int,
        seed: str = "",
        options: pb.GameOptions | None = None,
        scenario: pb.GameScenario | None = None,
        request_id: str = "",
        bots: dict[int, str] | None = None,
        replace_leavers: str = "",
        time_control: pb.TimeControl | None = None,
        keep_seed_secret: bool = False,
        position: Message | dict[str, Any] | None = None,
        creator_seat: tuple[int, str] | None = None,
    ) -> pb.CreateGameResponse:
        """``bots``: seat -> bot kind (``random``, ``heuristic``, ``strong``),
        for the seats the service's bots play. ``replace_leavers="bot"`` (or
        ``"bot:<level>"``): a seat whose player leaves the started game goes
        to a bot (otherwise it is out). ``time_control``: a
        deadline per decision or a clock per seat (see :func:`deadline` and
        :func:`clock`). ``keep_seed_secret`` (admin): no reveal of the seed
        at the end. ``position`` (admin): the state the game starts from,
        the game's ``Position`` message or its proto JSON form (a dict), set
        in the scenario (:func:`position_scenario`). ``creator_seat`` (seat,
        name): the caller takes that seat in the same call, refused before
        anything is made at its open-seat limit; the answer's ``host_token``
        acts for it."""
        if position is not None:
            scenario = position_scenario(game_type, position, scenario)
        request = pb.CreateGameRequest(
            game_type=game_type,
            players=players,
            seed=seed,
            request_id=request_id,
            bots=[pb.BotSeat(seat=s, bot=k) for s, k in sorted((bots or {}).items())],
            keep_seed_secret=keep_seed_secret,
            replace_leavers=replace_leavers,
        )
        if time_control is not None:
            request.time_control.CopyFrom(time_control)
        if creator_seat is not None:
            seat, name = creator_seat
            request.creator_seat.CopyFrom(pb.CreatorSeat(seat=seat, player_name=name))
        if options is not None:
            request.options.CopyFrom(options)
        if scenario is not None:
            request.scenario.CopyFrom(scenario)
        return self._call(self.stub.CreateGame, request)  # type: ignore[no-any-return]

    def rematch(self, game_id: str, seed: str = "") -> pb.CreateGameResponse:
        """The rematch of the finished ``game_id`` (created once: asked again,
        the same game). Each of its players claims its seat with
        :meth:`join_game` and the old game's token."""
        request = pb.CreateGameRequest(rematch_of=game_id, seed=seed)
        return self._call(self.stub.CreateGame, request)  # type: ignore[no-any-return]

    def join_game(
        self, game_id: str, player_name: str = "", seat: int | None = None
    ) -> pb.JoinGameResponse:
        request = pb.JoinGameRequest(game_id=game_id, player_name=player_name)
        if seat is not None:
            request.seat = seat
        return self._call(self.stub.JoinGame, request)  # type: ignore[no-any-return]

    def leave_game(self, game_id: str, seat: int) -> pb.LeaveGameResponse:
        """Free ``seat`` before the start (with the seat's token, the game's
        host token or the admin token), or take it out of the started game
        (the seat's token or the admin token)."""
        request = pb.LeaveGameRequest(game_id=game_id, seat=seat)
        return self._call(self.stub.LeaveGame, request)  # type: ignore[no-any-return]

    def start_game(self, game_id: str) -> pb.StartGameResponse:
        return self._call(self.stub.StartGame, pb.StartGameRequest(game_id=game_id))  # type: ignore[no-any-return]

    def submit_command(
        self,
        game_id: str,
        seat: int,
        command: pb.GameCommand,
        command_id: str = "",
        expected_version: int | None = None,
        include_legal_actions: bool = False,
    ) -> pb.SubmitCommandResponse:
        """Send a command; ``include_legal_actions`` also asks for the
        caller's legal actions after it (one call per move).

        ``command_id`` (a new random one when empty) makes a retry safe:
        sent again with this client's token it gets the first answer
        (``duplicate`` set), nothing applied twice. An id another token (or
        a bot, or the admin) used in the game raises :class:`StrataError`
        ALREADY_EXISTS, reason ``COMMAND_ID_TAKEN``: the command was not
        applied; send it with a new id."""
        request = pb.SubmitCommandRequest(
            game_id=game_id,
            seat=seat,
            command_id=command_id or uuid.uuid4().hex,
            command=command,
            include_legal_actions=include_legal_actions,
        )
        if expected_version is not None:
            request.expected_version = expected_version
        return self._call(self.stub.SubmitCommand, request)  # type: ignore[no-any-return]

    def get_game(self, game_id: str, at_version: int | None = None) -> pb.Game:
        request = pb.GetGameRequest(game_id=game_id)
        if at_version is not None:
            request.at_version = at_version
        response: pb.GetGameResponse = self._call(self.stub.GetGame, request)
        return response.game

    def list_legal_actions(
        self, game_id: str, seat: int | None = None
    ) -> pb.ListLegalActionsResponse:
        request = pb.ListLegalActionsRequest(game_id=game_id)
        if seat is not None:
            request.seat = seat
        return self._call(self.stub.ListLegalActions, request)  # type: ignore[no-any-return]

    def watch_game(
        self, game_id: str, from_version: int = 1, follow: bool = True
    ) -> Iterator[pb.Event]:
        """The game's events (redacted for this client's token), live when
        ``follow`` until the game ends."""
        request = pb.WatchGameRequest(
            game_id=game_id, from_version=from_version, no_follow=not follow
        )
        try:
            for response in self.stub.WatchGame(
                request,
                metadata=self._metadata(),
                timeout=None if follow else self.timeout,
            ):
                yield response.event
        except grpc.RpcError as error:
            raise StrataError.from_rpc_error(error) from None

    def watch_game_with_clocks(
        self, game_id: str, from_version: int = 1, follow: bool = True
    ) -> Iterator[pb.WatchGameResponse]:
        """As :meth:`watch_game`, each event with the seats' clocks (set on
        the newest event of a game with a time control)."""
        request = pb.WatchGameRequest(
            game_id=game_id, from_version=from_version, no_follow=not follow
        )
        yield from self._stream(
            self.stub.WatchGame, request, None if follow else self.timeout
        )

    def list_games(
        self,
        game_type: str = "",
        status: int = pb.GAME_STATUS_UNSPECIFIED,
        page_size: int = 0,
        page_token: str = "",
        open_seats: bool = False,
        players: int = 0,
        newest_first: bool = False,
    ) -> pb.ListGamesResponse:
        """A page of games in creation order, oldest first (``newest_first``:
        the newest, the next page older): of ``game_type``, in ``status``;
        ``open_seats``: only games not started with a free seat;
        ``players``: only games of that many seats. Each summary lists its
        seats (free, taken, bots, left)."""
        return self._call(  # type: ignore[no-any-return]
            self.stub.ListGames,
            pb.ListGamesRequest(
                game_type=game_type,
                status=status,  # type: ignore[arg-type]
                page_size=page_size,
                page_token=page_token,
                open_seats=open_seats,
                players=players,
                newest_first=newest_first,
            ),
        )

    def export_player_record(
        self, game_id: str, page_size: int = 2000
    ) -> dict[str, Any]:
        """This token's record of a finished game whose seed was revealed,
        for :func:`domain.fairness.verify_record` (``strata verify
        --offline``): its pages of ``page_size`` events fetched in turn and
        joined (however long the game, no answer passes the message limit)."""
        record: dict[str, Any] = {}
        token = ""
        while True:
            response: pb.ExportPlayerRecordResponse = self._call(
                self.stub.ExportPlayerRecord,
                pb.ExportPlayerRecordRequest(
                    game_id=game_id, page_size=page_size, page_token=token
                ),
            )
            page: dict[str, Any] = json.loads(response.record)
            if not record:
                record = page
            else:
                record["events"].extend(page["events"])
                record["commands"].extend(page["commands"])
            token = response.next_page_token
            if not token:
                return record

    def find_game(
        self, game_type: str, players: int, player_name: str = ""
    ) -> pb.FindGameResponse:
        """Quick join: a seat in the oldest open game of ``game_type`` for
        ``players``, or in a new one (this client's token gets the seat when
        it has one; otherwise the answer carries a new seat token)."""
        request = pb.FindGameRequest(
            game_type=game_type, players=players, player_name=player_name
        )
        return self._call(self.stub.FindGame, request)  # type: ignore[no-any-return]

    def replay_game(
        self, game_id: str, from_version: int = 1, to_version: int = 0
    ) -> Iterator[pb.ReplayGameResponse]:
        """Each step of the game: the event and the game right after it."""
        request = pb.ReplayGameRequest(
            game_id=game_id, from_version=from_version, to_version=to_version
        )
        yield from self._stream(self.stub.ReplayGame, request, self.timeout)

    def _stream(
        self, method: Any, request: Any, timeout: float | None
    ) -> Iterator[Any]:
        try:
            yield from method(request, metadata=self._metadata(), timeout=timeout)
        except grpc.RpcError as error:
            raise StrataError.from_rpc_error(error) from None

    # -- admin (admin token) ----------------------------------------------------

    def get_audit_log(
        self, game_id: str, page_size: int = 0
    ) -> admin_pb.GetAuditLogResponse:
        """The whole audit log (every page, fetched in turn, joined)."""
        whole = admin_pb.GetAuditLogResponse()
        token = ""
        while True:
            page = self.get_audit_log_page(game_id, page_size, token)
            whole.events.extend(page.events)
            whole.commands.extend(page.commands)
            token = page.next_page_token
            if not token:
                return whole

    def get_audit_log_page(
        self, game_id: str, page_size: int = 0, page_token: str = ""
    ) -> admin_pb.GetAuditLogResponse:
        """One page of the audit log."""
        request = admin_pb.GetAuditLogRequest(
            game_id=game_id, page_size=page_size, page_token=page_token
        )
        return self._call(self.admin_stub.GetAuditLog, request)  # type: ignore[no-any-return]

    def verify_game(self, game_id: str) -> admin_pb.VerifyGameResponse:
        return self._call(  # type: ignore[no-any-return]
            self.admin_stub.VerifyGame, admin_pb.VerifyGameRequest(game_id=game_id)
        )

    def export_game(
        self, game_id: str, page_size: int = 0
    ) -> admin_pb.ExportGameResponse:
        """The whole export (every page, fetched in turn, joined into one
        document that ImportGame takes)."""
        first: admin_pb.ExportGameResponse | None = None
        whole: dict[str, Any] = {}
        token = ""
        while True:
            request = admin_pb.ExportGameRequest(
                game_id=game_id, page_size=page_size, page_token=token
            )
            page: admin_pb.ExportGameResponse = self._call(
                self.admin_stub.ExportGame, request
            )
            token = page.next_page_token
            if first is None:
                if not token:
                    return page  # one page: the whole export as it came
                first = page
                whole = json.loads(page.document)
            else:
                part = json.loads(page.document)
                whole["events"].extend(part["events"])
                whole["commands"].extend(part["commands"])
            if not token:
                document = json.dumps(whole, indent=1, ensure_ascii=False).encode()
                return admin_pb.ExportGameResponse(
                    document=document, file_name=first.file_name
                )

    def import_game(
        self, document: bytes, game_id: str = "", trust: bool = False
    ) -> admin_pb.ImportGameResponse:
        """Import an exported game (admin). The service verifies it first
        and refuses one that does not verify (IMPORT_NOT_VERIFIED), unless
        ``trust``."""
        return self._call(  # type: ignore[no-any-return]
            self.admin_stub.ImportGame,
            admin_pb.ImportGameRequest(document=document, game_id=game_id, trust=trust),
        )

    # -- integration (integration or admin token) --------------------------------

    def follow_log(
        self,
        after_position: int = 0,
        game_types: Sequence[str] = (),
        event_types: Sequence[str] = (),
        follow: bool = True,
        max_batch: int = 0,
    ) -> Iterator[integration_pb.FollowLogResponse]:
        """The global log from ``after_position``, filtered on the server.
        ``max_batch`` above 1: up to that many events a message, in each
        response's ``events`` (a long log arrives several times faster)."""
        request = integration_pb.FollowLogRequest(
            after_position=after_position,
            game_types=list(game_types),
            event_types=list(event_types),
            no_follow=not follow,
            max_batch=max_batch,
        )
        yield from self._stream(
            self.integration_stub.FollowLog, request, None if follow else self.timeout
        )

    def get_statistics(
        self, game_type: str = ""
    ) -> integration_pb.GetStatisticsResponse:
        return self._call(  # type: ignore[no-any-return]
            self.integration_stub.GetStatistics,
            integration_pb.GetStatisticsRequest(game_type=game_type),
        )

    def all_games(self, game_type: str = "") -> Iterator[pb.GameSummary]:
        """Every game, following the pages of ListGames."""
        token = ""
        while True:
            page = self.list_games(game_type=game_type, page_size=500, page_token=token)
            yield from page.games
            token = page.next_page_token
            if not token:
                return
