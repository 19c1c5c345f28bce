"""The gRPC servicer: proto messages in, application calls, proto messages out.

It only translates. Authentication reads the bearer token from the call
metadata; everything else is :class:`service.application.GameApp`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

from strata.v1 import game_service_pb2 as pb

from domain import bots as domain_bots
from domain import registry
from domain.seats import seat_number
from domain.session import (
    Status,
)
from service import protomap
from service.answers import (
    _clocks_to_proto,
    _seats_to_proto,
    _typed,
    actions_to_proto,
    event_to_proto,
    game_to_proto,
    seats_to_proto,
)
from service.application import GameApp
from service.callers import Caller
from service.clocks import BOT, TimeControl
from service.door import Call
from service.errors import InvalidArgument, NotFound, PermissionDenied
from service.games import Loaded
from service.inputs import quote
from service.queries import Listing
from service.sharing import ByIdentity

_STATUS_TO_PROTO = {
    Status.OPEN: pb.GAME_STATUS_OPEN,
    Status.ACTIVE: pb.GAME_STATUS_ACTIVE,
    Status.FINISHED: pb.GAME_STATUS_FINISHED,
}
_STATUS_FROM_PROTO = {v: k for k, v in _STATUS_TO_PROTO.items()}


class GameServicer:
    """strata.v1.GameService."""

    def __init__(self, app: GameApp) -> None:
        self.app = app
        #: WatchGame's answers by the redacted event they carry.
        self._watch_answers: ByIdentity[pb.WatchGameResponse] = ByIdentity()

    def _caller(self, call: Call) -> Caller:
        return self.app.caller(call.token, call.peer)

    def _seats_of(self, row: Listing) -> list[pb.Seat]:
        """A listed game's seats: from the list, or from the game (cached)
        for a row the read model wrote before it kept the seats."""
        if row.seats is not None:
            return _seats_to_proto(row.seats)
        try:
            return seats_to_proto(self.app.load(row.game_id, refresh=False).state)
        except NotFound:
            return []

    async def _cached(self, game_id: str) -> Loaded:
        """The game as cached (loaded in a worker thread when it is not)."""
        loaded = self.app.cached(game_id)
        if loaded is None:
            loaded = await asyncio.to_thread(self.app.load, game_id, False)
        return loaded

    # -- RPCs -----------------------------------------------------------------

    def ListGameTypes(
        self, request: pb.ListGameTypesRequest, call: Call
    ) -> pb.ListGameTypesResponse:
        types = []
        for game_type in registry.game_types():
            rules = registry.rules_for(game_type)
            types.append(
                pb.GameType(
                    game_type=game_type,
                    title=rules.title,
                    min_players=rules.min_players,
                    max_players=rules.max_players,
                    rules_version=rules.rules_version,
                )
            )
        return pb.ListGameTypesResponse(game_types=types)

    def CreateGame(
        self, request: pb.CreateGameRequest, call: Call
    ) -> pb.CreateGameResponse:
        caller = self._caller(call)
        creator_seat = None
        if request.HasField("creator_seat"):
            if request.rematch_of:
                raise InvalidArgument(
                    "CREATOR_SEAT_INVALID",
                    "A rematch keeps each seat for its player: claim yours with "
                    "JoinGame and the old game's seat token.",
                    "creator_seat",
                )
            given = request.creator_seat
            creator_seat = (given.seat, given.player_name)
        if request.rematch_of:
            return self._rematch(request, caller)
        game_type = request.game_type
        if game_type not in registry.game_types():
            raise InvalidArgument(
                "UNKNOWN_GAME_TYPE",
                f"No game type {quote(game_type)}; see ListGameTypes.",
                "game_type",
            )
        rules = registry.rules_for(game_type)
        options = None
        if request.HasField("options"):
            message = _typed(request.options, game_type, "options", "options")
            if message is not None:
                options = protomap.from_proto(message, rules.options_type, "options")
        scenario = None
        if request.HasField("scenario"):
            message = _typed(request.scenario, game_type, "scenario", "scenario")
            if message is not None:
                scenario = protomap.from_proto(message, rules.scenario_type, "scenario")
        created = self.app.create_game(
            caller,
            game_type,
            request.players,
            options,
            scenario,
            request.seed,
            request.request_id,
            bots=[(b.seat, _bot_kind(b)) for b in request.bots],
            reveal=not request.keep_seed_secret,
            replace_leavers=request.replace_leavers,
            time_control=_time_control(request)
            if request.HasField("time_control")
            else None,
            creator_seat=creator_seat,
        )
        return pb.CreateGameResponse(
            game_id=created.game_id,
            version=created.version,
            host_token=created.host_token,
        )

    def _rematch(
        self, request: pb.CreateGameRequest, caller: Caller
    ) -> pb.CreateGameResponse:
        old = self.app.load(request.rematch_of).state
        if (request.game_type and request.game_type != old.game_type) or (
            request.players and request.players != len(old.seats)
        ):
            raise InvalidArgument(
                "REMATCH_MISMATCH",
                "A rematch has its game's type and players; leave them empty.",
                "rematch_of",
            )
        if request.seed and not caller.admin:
            raise PermissionDenied(
                "SEED_NEEDS_ADMIN", "Only the admin token may choose a game's seed."
            )
        created = self.app.rematch(caller, request.rematch_of, request.seed)
        return pb.CreateGameResponse(
            game_id=created.game_id,
            version=created.version,
            host_token=created.host_token,
        )

    def JoinGame(self, request: pb.JoinGameRequest, call: Call) -> pb.JoinGameResponse:
        seat, token, version = self.app.join_game(
            self._caller(call),
            request.game_id,
            request.seat if request.HasField("seat") else None,
            request.player_name,
        )
        return pb.JoinGameResponse(seat=seat, seat_token=token, version=version)

    def StartGame(
        self, request: pb.StartGameRequest, call: Call
    ) -> pb.StartGameResponse:
        version = self.app.start_game(self._caller(call), request.game_id)
        return pb.StartGameResponse(version=version)

    def LeaveGame(
        self, request: pb.LeaveGameRequest, call: Call
    ) -> pb.LeaveGameResponse:
        version = self.app.leave_game(self._caller(call), request.game_id, request.seat)
        return pb.LeaveGameResponse(version=version)

    def FindGame(self, request: pb.FindGameRequest, call: Call) -> pb.FindGameResponse:
        found = self.app.find_game(
            self._caller(call), request.game_type, request.players, request.player_name
        )
        return pb.FindGameResponse(
            game_id=found.game_id,
            seat=found.seat,
            seat_token=found.token,
            version=found.version,
            created=found.created,
        )

    async def SubmitCommand(
        self,
        request: pb.SubmitCommandRequest,
        call: Call,
    ) -> pb.SubmitCommandResponse:
        # On the event loop: the common case (a cached game, a command its
        # rules accept) waits for its commit without a thread; everything
        # else runs in a worker thread (GameApp.submit_async).
        caller = self._caller(call)
        game_id = request.game_id
        # Only the game's rules are needed here (they never change): no
        # catch-up read; the application decides on the latest state.
        loaded = await self._cached(game_id)
        rules = loaded.rules
        message = _typed(request.command, rules.game_type, "command", "command")
        if message is None:
            raise InvalidArgument("COMMAND_REQUIRED", "No command given.", "command")
        command = protomap.from_proto(message, rules.command_types, "command")
        submitted = await self.app.submit_async(
            caller,
            game_id,
            request.seat,
            request.command_id,
            command,
            request.expected_version if request.HasField("expected_version") else None,
        )
        response = pb.SubmitCommandResponse(
            version=submitted.version,
            duplicate=submitted.duplicate,
            events=[event_to_proto(loaded.session, r, e) for r, e in submitted.events],
        )
        if request.include_legal_actions:
            current = await self._cached(game_id)
            response.legal_actions_version = current.state.version
            response.legal_actions.extend(
                actions_to_proto(current, self.app.actions_of(caller, current))
            )
        return response

    def GetGame(self, request: pb.GetGameRequest, call: Call) -> pb.GetGameResponse:
        caller = self._caller(call)
        if request.HasField("at_version"):
            loaded = self.app.state_at(request.game_id, request.at_version)
            current = self.app.load(request.game_id, refresh=False)
            viewer_state = current.state
        else:
            loaded = self.app.look(request.game_id)
            viewer_state = loaded.state
        game = game_to_proto(request.game_id, loaded, caller, viewer_state)
        game.rematch_of = str(
            self.app.lobby.creation_of(request.game_id).get("rematch_of", "")
        )
        control, clocks = self.app.clocks_of(request.game_id)
        if control.timed:
            game.time_control.CopyFrom(pb.TimeControl(**control.to_body()))
            if not request.HasField("at_version"):
                game.clocks.extend(_clocks_to_proto(clocks))
        return pb.GetGameResponse(game=game)

    def ListLegalActions(
        self, request: pb.ListLegalActionsRequest, call: Call
    ) -> pb.ListLegalActionsResponse:
        caller = self._caller(call)
        loaded, actions = self.app.legal_actions(
            caller, request.game_id, request.seat if request.HasField("seat") else None
        )
        return pb.ListLegalActionsResponse(
            version=loaded.state.version, actions=actions_to_proto(loaded, actions)
        )

    async def WatchGame(
        self, request: pb.WatchGameRequest, call: Call
    ) -> AsyncIterator[pb.WatchGameResponse]:
        # On the event loop: a watcher holds no thread while it waits.
        caller = self._caller(call)
        loaded = await asyncio.to_thread(self.app.load, request.game_id, False)
        control = await asyncio.to_thread(
            self.app.lobby.time_control_of, request.game_id
        )
        answers = self._watch_answers
        async for recorded, event in self.app.watch_async(
            caller, request.game_id, request.from_version or 1, not request.no_follow
        ):
            if not control.timed:
                # One answer per redacted event, shared by the watchers who
                # see alike (and so encoded once: service.sharing).
                shared = answers.get(event)
                if shared is None or shared.event.position != recorded.position:
                    shared = answers.put(
                        event,
                        pb.WatchGameResponse(
                            event=event_to_proto(loaded.session, recorded, event)
                        ),
                    )
                yield shared
                continue
            response = pb.WatchGameResponse(
                event=event_to_proto(loaded.session, recorded, event)
            )
            if control.timed:
                latest = self.app.cached(request.game_id)
                if latest is None or latest.state.version <= recorded.version:
                    _, clocks = await asyncio.to_thread(
                        self.app.clocks_of, request.game_id, recorded.version
                    )
                    response.clocks.extend(_clocks_to_proto(clocks))
            yield response

    def ReplayGame(
        self, request: pb.ReplayGameRequest, call: Call
    ) -> Iterator[pb.ReplayGameResponse]:
        caller = self._caller(call)
        for recorded, event, step, current in self.app.queries.replay(
            caller, request.game_id, request.from_version, request.to_version
        ):
            yield pb.ReplayGameResponse(
                event=event_to_proto(step.session, recorded, event),
                game=game_to_proto(request.game_id, step, caller, current),
            )

    def ExportPlayerRecord(
        self, request: pb.ExportPlayerRecordRequest, call: Call
    ) -> pb.ExportPlayerRecordResponse:
        if request.page_size < 0:
            raise InvalidArgument(
                "PAGE_SIZE_NEGATIVE", "page_size cannot be negative.", "page_size"
            )
        record, token = self.app.queries.player_record_text(
            self._caller(call), request.game_id, request.page_size, request.page_token
        )
        return pb.ExportPlayerRecordResponse(record=record, next_page_token=token)

    def ListGames(
        self, request: pb.ListGamesRequest, call: Call
    ) -> pb.ListGamesResponse:
        if request.page_size < 0:
            raise InvalidArgument(
                "PAGE_SIZE_NEGATIVE", "page_size cannot be negative.", "page_size"
            )
        status = None
        if request.status != pb.GAME_STATUS_UNSPECIFIED:
            if request.status not in _STATUS_FROM_PROTO:
                raise InvalidArgument("ENUM_VALUE_INVALID", "Unknown status.", "status")
            status = _STATUS_FROM_PROTO[request.status]
        if request.open_seats:
            if status not in (None, Status.OPEN):
                raise InvalidArgument(
                    "FILTERS_CONFLICT",
                    "open_seats lists games not started; ask no other status.",
                    "open_seats",
                )
            status = Status.OPEN
        rows, token = self.app.queries.list_games(
            request.game_type,
            status,
            request.page_size,
            request.page_token,
            newest_first=request.newest_first,
            players=request.players,
            open_seats=request.open_seats,
        )
        summaries = []
        for row in rows:
            summary = pb.GameSummary(
                game_id=row.game_id,
                game_type=row.game_type,
                status=_STATUS_TO_PROTO[row.status],
                version=row.version,
                players=row.players,
                seats_taken=row.seats_taken,
            )
            if row.result or row.winners:
                summary.outcome.CopyFrom(
                    pb.Outcome(winners=list(row.winners), result=row.result)
                )
            if row.created_at is not None:
                summary.created_at.FromDatetime(row.created_at)
            if row.finished_at is not None:
                summary.finished_at.FromDatetime(row.finished_at)
            summary.seats.extend(self._seats_of(row))
            summaries.append(summary)
        return pb.ListGamesResponse(games=summaries, next_page_token=token)


#: ``BotLevel`` values by the bot kind each names.
_LEVELS = {
    pb.BOT_LEVEL_RANDOM: domain_bots.RANDOM,
    pb.BOT_LEVEL_HEURISTIC: domain_bots.HEURISTIC,
    pb.BOT_LEVEL_STRONG: domain_bots.STRONG,
}


def _bot_kind(seat: pb.BotSeat) -> str:
    """The bot kind a ``BotSeat`` asks for: its ``bot``, else its ``level``'s
    (unspecified: the heuristic bot). An unknown level, or a ``bot`` and a
    ``level`` that disagree, is INVALID_ARGUMENT."""
    if seat.level == pb.BOT_LEVEL_UNSPECIFIED:
        return seat.bot or domain_bots.HEURISTIC
    level = _LEVELS.get(seat.level)
    if level is None:
        raise InvalidArgument(
            "ENUM_VALUE_INVALID", f"Unknown bot level {seat.level}.", "bots"
        )
    if seat.bot and seat.bot != level:
        raise InvalidArgument(
            "BOT_LEVEL_CONFLICT",
            f"The bot of seat {seat_number(seat.seat)} asks for {quote(seat.bot)} "
            f"and level "
            f"{quote(level)}; give one, or the same.",
            "bots",
        )
    return level


def _time_control(request: pb.CreateGameRequest) -> TimeControl:
    given = request.time_control
    return TimeControl(
        decision_seconds=given.decision_seconds,
        base_seconds=given.base_seconds,
        increment_seconds=given.increment_seconds,
        on_timeout=given.on_timeout or BOT,
    )
