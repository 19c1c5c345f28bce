"""The admin and integration servicers.

AdminService (admin token only): the audit log, verified replay, export and
import. IntegrationService (integration tokens or the admin token): the
global log, filtered, and per-game-type statistics.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import AsyncIterator
from typing import Any

from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb
from strata.v1 import integration_service_pb2 as integration_pb

from domain import codec, registry
from domain.rules import Viewer
from domain.session import GameCreated
from eventstore.base import ConcurrencyError, MatchingEvents
from service import paging, portable, protomap
from service.application import GameApp
from service.callers import hash_token
from service.door import Call
from service.errors import InvalidArgument, PermissionDenied, Unauthenticated
from service.projections import GameList
from service.servicer import event_to_proto
from service.verification import Verdict, Verification, verify_game

#: Events and commands a page of the audit log holds by default, and at most.
AUDIT_PAGE = 500
AUDIT_PAGE_MOST = 1000

_VERDICTS = {
    Verdict.VERIFIED: admin_pb.VERDICT_VERIFIED,
    Verdict.MISMATCH: admin_pb.VERDICT_MISMATCH,
    Verdict.OTHER_RULES: admin_pb.VERDICT_OTHER_RULES,
    Verdict.UNKNOWN_GAME_TYPE: admin_pb.VERDICT_UNKNOWN_GAME_TYPE,
}


def verification_to_proto(result: Verification) -> admin_pb.VerifyGameResponse:
    return admin_pb.VerifyGameResponse(
        game_id=result.game_id,
        verdict=_VERDICTS.get(result.verdict, admin_pb.VERDICT_UNSPECIFIED),
        events_checked=result.events_checked,
        commands_checked=result.commands_checked,
        mismatch_version=result.mismatch_version,
        message=result.message,
        recorded_rules_version=result.recorded_rules_version,
        current_rules_version=result.current_rules_version,
    )


class AdminServicer:
    """strata.v1.AdminService."""

    def __init__(self, app: GameApp) -> None:
        self.app = app

    def _require_admin(self, call: Call) -> None:
        token = call.token
        if not token:
            raise Unauthenticated("TOKEN_REQUIRED", "The admin token is required.")
        if not self.app.caller(token).admin:
            raise PermissionDenied("ADMIN_ONLY", "Only the admin token may do this.")

    def GetAuditLog(
        self, request: admin_pb.GetAuditLogRequest, call: Call
    ) -> admin_pb.GetAuditLogResponse:
        self._require_admin(call)
        size = paging.page_size(request.page_size, AUDIT_PAGE, AUDIT_PAGE_MOST)
        from_version, after_sequence = paging.decode(request.page_token, 2, (1, 0))
        loaded = self.app.load(request.game_id)
        session = loaded.session
        game_type = session.rules.game_type
        recorded = self.app.store.read_stream(
            request.game_id, from_version, from_version + size - 1
        )
        events = [
            event_to_proto(
                session,
                r,
                session.decode_event(r.type, r.data, r.schema_version),
            )
            for r in recorded
        ]
        records = self.app.store.read_commands(request.game_id, after_sequence, size)
        commands = []
        for record in records:
            entry = admin_pb.CommandEntry(
                command_id=record.command_id,
                actor=record.actor,
                seat=int(record.payload.get("seat", 0)),
                decided_at_version=record.decided_at_version,
                accepted=record.outcome.accepted,
                first_version=record.outcome.first_version,
                last_version=record.outcome.last_version,
                error_reason=record.outcome.error_reason,
                error_message=record.outcome.error_message,
            )
            entry.recorded_at.FromDatetime(record.recorded_at)
            try:
                command: Any = codec.decode(
                    session.command_type(record.payload["type"]),
                    record.payload["command"],
                )
                protomap.to_proto(command, getattr(entry.command, game_type))
            except (codec.CodecError, KeyError):
                pass  # not a game command, kept as a digest, or unreadable here
            commands.append(entry)
        more = len(recorded) == size or len(records) == size
        return admin_pb.GetAuditLogResponse(
            events=events,
            commands=commands,
            next_page_token=paging.encode(
                recorded[-1].version + 1 if recorded else from_version,
                records[-1].sequence if records else after_sequence,
            )
            if more
            else "",
        )

    def VerifyGame(
        self, request: admin_pb.VerifyGameRequest, call: Call
    ) -> admin_pb.VerifyGameResponse:
        self._require_admin(call)
        self.app.load(request.game_id)  # NOT_FOUND for an unknown game
        return verification_to_proto(verify_game(self.app.store, request.game_id))

    def ExportGame(
        self, request: admin_pb.ExportGameRequest, call: Call
    ) -> admin_pb.ExportGameResponse:
        self._require_admin(call)
        document, next_page_token = portable.export_game(
            self.app.store, request.game_id, request.page_size, request.page_token
        )
        return admin_pb.ExportGameResponse(
            document=document,
            file_name=f"{request.game_id}.strata.json",
            next_page_token=next_page_token,
        )

    def ImportGame(
        self, request: admin_pb.ImportGameRequest, call: Call
    ) -> admin_pb.ImportGameResponse:
        self._require_admin(call)
        game_id, events, commands = portable.parse_export(
            request.document, request.game_id
        )
        try:
            self.app.store.import_game(game_id, events, commands)
        except ConcurrencyError:
            raise InvalidArgument(
                "GAME_EXISTS",
                f"A game {game_id!r} exists here; import under another game_id.",
                "game_id",
            ) from None
        loaded = self.app.load(game_id)
        return admin_pb.ImportGameResponse(
            game_id=game_id,
            version=loaded.state.version,
            verification=verification_to_proto(verify_game(self.app.store, game_id)),
        )


#: Events read from the log at a time by a FollowLog stream.
_FEED_BATCH = 500
#: A FollowLog stream that passes over this many positions without an event
#: to send answers with its position alone, so that its client can resume
#: from there (as it does at the end of the log).
_FEED_HEARTBEAT = 200
_GAME_CREATED = GameCreated.__name__


class IntegrationServicer:
    """strata.v1.IntegrationService."""

    def __init__(
        self,
        app: GameApp,
        projection: GameList | None,
        integration_tokens: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.projection = projection
        self._token_hashes = tuple(hash_token(t) for t in integration_tokens if t)

    def _require_integration(self, call: Call) -> None:
        token = call.token
        if not token:
            raise Unauthenticated("TOKEN_REQUIRED", "An integration token is required.")
        if self.app.caller(token).admin:
            return
        digest = hash_token(token)
        if not any(hmac.compare_digest(digest, h) for h in self._token_hashes):
            raise PermissionDenied(
                "INTEGRATION_ONLY", "This feed needs an integration token."
            )

    async def FollowLog(
        self,
        request: integration_pb.FollowLogRequest,
        call: Call,
    ) -> AsyncIterator[integration_pb.FollowLogResponse]:
        # On the event loop: a follower holds no thread while it waits; the
        # reads run in worker threads.
        self._require_integration(call)
        if request.after_position < 0:
            raise InvalidArgument(
                "POSITION_NEGATIVE",
                "after_position cannot be negative.",
                "after_position",
            )
        game_types = set(request.game_types)
        unknown = game_types - set(registry.game_types())
        if unknown:
            raise InvalidArgument(
                "UNKNOWN_GAME_TYPE", f"No game types {sorted(unknown)}.", "game_types"
            )
        event_types = set(request.event_types)
        store = self.app.store
        spectator = Viewer.spectator()
        game_types_of: dict[str, str] = {}
        position = request.after_position
        answered = position  # the position of the last answer
        while True:
            if event_types:
                # Only the wanted types (and the creations, which name each
                # game's type) leave the database; the rest only move on.
                read = await asyncio.to_thread(
                    store.read_all_matching,
                    position,
                    _FEED_BATCH,
                    event_types | {_GAME_CREATED},
                    (),
                )
            else:
                events = await asyncio.to_thread(store.read_all, position, _FEED_BATCH)
                through = events[-1].position if events else position
                read = MatchingEvents(events, through, len(events))
            for recorded in read.events:
                position = recorded.position
                game_type = game_types_of.get(recorded.game_id)
                if game_type is None:
                    if recorded.type == _GAME_CREATED:
                        created = recorded
                    else:  # created before this feed's start
                        first = await asyncio.to_thread(
                            store.read_stream, recorded.game_id, 1, 1
                        )
                        created = first[0]
                    game_type = created.data.get("game_type", "")
                    game_types_of[recorded.game_id] = game_type
                wanted = (not game_types or game_type in game_types) and (
                    not event_types or recorded.type in event_types
                )
                if not wanted or game_type not in registry.game_types():
                    if position - answered >= _FEED_HEARTBEAT:
                        answered = position
                        yield integration_pb.FollowLogResponse(position=position)
                    continue
                answered = position
                session = registry.session_for(game_type)
                event = session.decode_event(
                    recorded.type, recorded.data, recorded.schema_version
                )
                yield integration_pb.FollowLogResponse(
                    event=event_to_proto(
                        session, recorded, session.redact(event, spectator)
                    ),
                    position=position,
                )
            position = read.through
            if position - answered >= _FEED_HEARTBEAT or (
                read.scanned < _FEED_BATCH and position > answered
            ):
                answered = position
                yield integration_pb.FollowLogResponse(position=position)
            if read.scanned < _FEED_BATCH:
                if request.no_follow:
                    return
                await store.wait_for_append_async(position, 1.0)

    def GetStatistics(
        self,
        request: integration_pb.GetStatisticsRequest,
        call: Call,
    ) -> integration_pb.GetStatisticsResponse:
        self._require_integration(call)
        if self.projection is None:
            raise InvalidArgument(
                "NO_PROJECTIONS", "Statistics need a SQL store.", "game_type"
            )
        self.projection.wait_for(self.app.store.last_position(), timeout=2.0)
        out = []
        for stats in self.projection.models.statistics(request.game_type):
            lengths = stats["lengths"]
            out.append(
                integration_pb.GameTypeStatistics(
                    game_type=stats["game_type"],
                    games=stats["games"],
                    finished=stats["finished"],
                    active=stats["active"],
                    open=stats["open"],
                    mean_length=sum(lengths) / len(lengths) if lengths else 0.0,
                    min_length=min(lengths, default=0),
                    max_length=max(lengths, default=0),
                    wins_by_seat=stats["wins_by_seat"],
                    wins_by_character=stats["wins_by_character"],
                    results=stats["results"],
                )
            )
        return integration_pb.GetStatisticsResponse(
            statistics=out, position=self.projection.position
        )


__all__ = ["AdminServicer", "IntegrationServicer", "pb"]
