"""The admin and integration servicers: messages to use cases and back.

AdminService (admin token only): the audit log, verified replay, export and
import. IntegrationService (integration tokens or the admin token): the
global log, filtered, and per-game-type statistics. The use cases are
:mod:`service.administration`'s.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb
from strata.v1 import integration_service_pb2 as integration_pb

from service import protomap
from service.administration import Administration, Integration
from service.answers import event_to_proto
from service.application import GameApp
from service.door import Call
from service.verification import Verdict, Verification

#: The most bytes of events in a FollowLog batch (a single larger event is
#: sent alone): well under the 4 MiB a gRPC client receives by default.
FEED_BATCH_BYTES = 1 << 20

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
        self.admin: Administration = app.administration

    def GetAuditLog(
        self, request: admin_pb.GetAuditLogRequest, call: Call
    ) -> admin_pb.GetAuditLogResponse:
        page = self.admin.audit_page(
            self.app.caller(call.token, call.peer),
            request.game_id,
            request.page_size,
            request.page_token,
        )
        session = page.session
        game_type = session.rules.game_type
        commands = []
        for record, command in page.commands:
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
            if command is not None:
                protomap.to_proto(command, getattr(entry.command, game_type))
            commands.append(entry)
        return admin_pb.GetAuditLogResponse(
            events=[event_to_proto(session, r, e) for r, e in page.events],
            commands=commands,
            next_page_token=page.next_page_token,
        )

    def VerifyGame(
        self, request: admin_pb.VerifyGameRequest, call: Call
    ) -> admin_pb.VerifyGameResponse:
        result = self.admin.verify(
            self.app.caller(call.token, call.peer), request.game_id
        )
        return verification_to_proto(result)

    def ExportGame(
        self, request: admin_pb.ExportGameRequest, call: Call
    ) -> admin_pb.ExportGameResponse:
        document, next_page_token = self.admin.export(
            self.app.caller(call.token, call.peer),
            request.game_id,
            request.page_size,
            request.page_token,
        )
        return admin_pb.ExportGameResponse(
            document=document,
            file_name=f"{request.game_id}.strata.json",
            next_page_token=next_page_token,
        )

    def ImportGame(
        self, request: admin_pb.ImportGameRequest, call: Call
    ) -> admin_pb.ImportGameResponse:
        game_id, version, verification = self.admin.import_game(
            self.app.caller(call.token, call.peer),
            request.document,
            request.game_id,
            trust=request.trust,
        )
        return admin_pb.ImportGameResponse(
            game_id=game_id,
            version=version,
            verification=verification_to_proto(verification),
        )


class IntegrationServicer:
    """strata.v1.IntegrationService."""

    def __init__(self, app: GameApp, integration: Integration) -> None:
        self.app = app
        self.integration = integration

    async def FollowLog(
        self, request: integration_pb.FollowLogRequest, call: Call
    ) -> AsyncIterator[integration_pb.FollowLogResponse]:
        # On the event loop: a follower holds no thread while it waits.
        batched = request.max_batch > 1
        async for items in self.integration.follow(
            self.app.caller(call.token, call.peer),
            request.after_position,
            set(request.game_types),
            set(request.event_types),
            follow=not request.no_follow,
            batch=request.max_batch,
        ):
            position = items[-1].position
            if not batched:
                item = items[0]
                if item.recorded is None or item.session is None:  # progress
                    yield integration_pb.FollowLogResponse(position=position)
                else:
                    event = event_to_proto(item.session, item.recorded, item.event)
                    yield integration_pb.FollowLogResponse(
                        event=event, position=position
                    )
                continue
            events: list[pb.Event] = []
            size = 0
            for item in items:
                if item.recorded is None or item.session is None:
                    continue
                event = event_to_proto(item.session, item.recorded, item.event)
                length = event.ByteSize()
                if events and size + length > FEED_BATCH_BYTES:
                    # A message of its own for what is made so far: a batch of
                    # large events stays under a client's receive limit.
                    yield integration_pb.FollowLogResponse(
                        events=events, position=events[-1].position
                    )
                    events, size = [], 0
                events.append(event)
                size += length
            yield integration_pb.FollowLogResponse(events=events, position=position)

    def GetStatistics(
        self, request: integration_pb.GetStatisticsRequest, call: Call
    ) -> integration_pb.GetStatisticsResponse:
        statistics, position = self.integration.statistics(
            self.app.caller(call.token, call.peer), request.game_type
        )
        out = []
        for stats in statistics:
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
        return integration_pb.GetStatisticsResponse(statistics=out, position=position)


__all__ = ["AdminServicer", "IntegrationServicer", "pb"]
