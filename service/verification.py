"""Verified replay: re-execute a game's command log and compare events.

A game's stored events are facts; its command log says what caused them.
Re-deciding every command from the game's seed, in order, on the state
folded so far must produce exactly the stored events — compared by a hash
of each event's canonical JSON (type, schema version, body). Seat joins are
inputs (they draw no chance), so they are taken as stored; the set-up at
StartGame and every accepted command are decided again; every refused
command must be refused again with the same reason. A game is re-decided
under the rules version it was created under; one created under a version
this service no longer ships is reported as such (``OTHER_RULES``), not as a
mismatch.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from domain import codec, registry
from domain.chance import Rng
from domain.errors import DomainError
from domain.session import (
    GameCreated,
    Session,
    event_schema_version,
)
from eventstore.base import CommandRecord, EventStore, RecordedEvent
from service.clocks import TimeControl, check_timeout, movers
from service.commands import LEAVE_TYPE


class Verdict(enum.Enum):
    """The result of verifying one game."""

    VERIFIED = "verified"
    MISMATCH = "mismatch"
    OTHER_RULES = "other_rules"
    UNKNOWN_GAME_TYPE = "unknown_game_type"
    NOT_FOUND = "not_found"


@dataclasses.dataclass(frozen=True)
class Verification:
    """What verifying a game found."""

    game_id: str
    verdict: Verdict
    events_checked: int = 0
    commands_checked: int = 0
    mismatch_version: int = 0
    message: str = ""
    recorded_rules_version: str = ""
    current_rules_version: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.VERIFIED


def event_hash(type_name: str, schema_version: int, data: Any) -> str:
    """SHA-256 of an event's canonical JSON."""
    canonical = json.dumps(
        {"type": type_name, "schema_version": schema_version, "data": data},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def domain_event_hash(event: Any) -> str:
    cls = type(event)
    return event_hash(cls.__name__, event_schema_version(cls), codec.encode(event))


def verify_game(store: EventStore, game_id: str) -> Verification:
    """Re-execute ``game_id``'s command log from its seed and compare."""
    recorded = store.read_stream(game_id)
    if not recorded:
        return Verification(game_id, Verdict.NOT_FOUND, message="no such game")
    return verify_records(game_id, recorded, store.read_commands(game_id))


def verify_records(
    game_id: str, recorded: Sequence[RecordedEvent], commands: Sequence[CommandRecord]
) -> Verification:
    """Verify a game given its stored events and command log."""
    game_type = recorded[0].data.get("game_type", "")
    rules_version = recorded[0].data.get("rules_version", "")
    if game_type not in registry.game_types():
        return Verification(
            game_id,
            Verdict.UNKNOWN_GAME_TYPE,
            message=f"this service does not run {game_type!r}",
        )
    current = registry.rules_for(game_type).rules_version
    try:
        session = registry.session_for(game_type, rules_version)
    except KeyError:
        shipped = ", ".join(registry.rules_versions(game_type))
        return Verification(
            game_id,
            Verdict.OTHER_RULES,
            message=f"played under rules version {rules_version}; this service "
            f"runs {shipped}, so its commands cannot be re-decided here",
            recorded_rules_version=rules_version,
            current_rules_version=current,
        )
    return _Verifier(game_id, session, recorded, commands, current).run()


class _Verifier:
    def __init__(
        self,
        game_id: str,
        session: Session[Any],
        recorded: Sequence[RecordedEvent],
        commands: Sequence[CommandRecord],
        current_rules_version: str,
    ) -> None:
        self.game_id = game_id
        self.session = session
        self.current_rules_version = current_rules_version
        self.recorded = recorded
        self.accepted = {
            c.outcome.first_version: c for c in commands if c.outcome.accepted
        }
        self.refused: dict[int, list[CommandRecord]] = {}
        for c in commands:
            if not c.outcome.accepted:
                self.refused.setdefault(c.decided_at_version, []).append(c)
        self.commands_checked = 0

    def _result(
        self, verdict: Verdict, version: int = 0, message: str = ""
    ) -> Verification:
        return Verification(
            self.game_id,
            verdict,
            events_checked=version
            if verdict is not Verdict.VERIFIED
            else len(self.recorded),
            commands_checked=self.commands_checked,
            mismatch_version=version,
            message=message,
            recorded_rules_version=self.session.rules.rules_version,
            current_rules_version=self.current_rules_version,
        )

    def run(self) -> Verification:
        session = self.session
        stored = [
            session.decode_event(r.type, r.data, r.schema_version)
            for r in self.recorded
        ]
        created = stored[0]
        if not isinstance(created, GameCreated):
            return self._result(
                Verdict.MISMATCH, 1, "the first event is not GameCreated"
            )
        seed = created.seed
        state = session.fold([created])
        index = 1
        while index < len(stored):
            problem = self._check_refusals(state, seed)
            if problem is not None:
                return problem
            version = index + 1
            command = self.accepted.get(version)
            if command is None:
                return self._result(
                    Verdict.MISMATCH,
                    version,
                    f"no logged command caused version {version}",
                )
            try:
                produced = self._decide(state, seed, command)
            except (DomainError, codec.CodecError, KeyError, ValueError) as error:
                return self._result(
                    Verdict.MISMATCH,
                    version,
                    f"command {command.command_id} now fails: {error}",
                )
            self.commands_checked += 1
            for offset, event_now in enumerate(produced):
                at = index + offset
                if at >= len(stored):
                    return self._result(
                        Verdict.MISMATCH,
                        at + 1,
                        "re-execution produced more events than stored",
                    )
                if domain_event_hash(event_now) != domain_event_hash(stored[at]):
                    return self._result(
                        Verdict.MISMATCH,
                        at + 1,
                        f"version {at + 1}: stored {type(stored[at]).__name__}, "
                        f"re-executed {type(event_now).__name__} differs",
                    )
            state = session.fold(produced, state)
            index += len(produced)
        problem = self._check_refusals(state, seed)
        if problem is not None:
            return problem
        return self._result(Verdict.VERIFIED)

    def _decide(self, state: Any, seed: str, command: CommandRecord) -> list[Any]:
        """The events ``command`` causes when decided again at ``state`` (a
        timeout of the service is first checked: see :func:`_check_timeout`)."""
        if "timeout" in command.payload:
            self._check_timeout(state, command)
        return self._redecide(state, seed, command)

    def _check_timeout(self, state: Any, command: CommandRecord) -> None:
        """A logged timeout: the seat's time had run out at its recorded
        instant (by the stored events' times), and the bot policy's move is
        the bot's again. ValueError otherwise."""
        payload = command.payload
        created = self.accepted.get(1)
        body = created.payload.get("command", {}) if created is not None else {}
        control = TimeControl.from_body(body.get("time_control"))
        decoded: Any = None
        if payload["type"] != LEAVE_TYPE:
            cls = self.session.command_type(payload["type"])
            decoded = codec.decode(cls, payload["command"])
        problem = check_timeout(
            self.session,
            self.recorded[: state.version],
            movers(list(self.accepted.values())),
            control,
            int(payload["seat"]),
            dict(payload["timeout"]),
            decoded,
        )
        if problem:
            raise ValueError(problem)

    def _redecide(self, state: Any, seed: str, command: CommandRecord) -> list[Any]:
        payload = command.payload
        return self.session.redo(
            state,
            payload["type"],
            int(payload["seat"]),
            payload["command"],
            Rng(seed, state.version),
        )

    def _check_refusals(self, state: Any, seed: str) -> Verification | None:
        for command in self.refused.pop(state.version, []):
            if "command" not in command.payload:
                continue  # kept as a digest (too large to keep): not re-decided
            try:
                seat = int(command.payload["seat"])
                cls = self.session.command_type(command.payload["type"])
                decoded: Any = codec.decode(cls, command.payload["command"])
                self.session.play(state, seat, decoded, Rng(seed, state.version))
            except DomainError as error:
                if error.reason != command.outcome.error_reason:
                    return self._result(
                        Verdict.MISMATCH,
                        state.version,
                        f"refused command {command.command_id} now refused with "
                        f"{error.reason}, stored {command.outcome.error_reason}",
                    )
                self.commands_checked += 1
                continue
            except (codec.CodecError, KeyError):
                self.commands_checked += 1  # refused as malformed: still malformed
                continue
            return self._result(
                Verdict.MISMATCH,
                state.version,
                f"refused command {command.command_id} would now be accepted",
            )
        return None
