"""Provably fair games: a commitment to the seed at the start, the seed
revealed at the end, and a verifier any player can run from their own record.

A game's chance comes from its seed alone (:mod:`domain.chance`): whoever
knows the seed knows every shuffle and every die to come, so the seed stays
secret while the game runs. To show that it was not chosen or changed along
the way, the game's first event publishes a *commitment* to it, visible to
every viewer from the start::

    commitment = SHA-256( "strata-seed-commitment-v1" NUL salt NUL seed )

as lowercase hex, where ``salt`` (32 hex digits the service draws) and
``seed`` are UTF-8 strings. The salt keeps a guessable seed (an admin's
``"game-1"``) from being found by trying seeds against the commitment.
When the game ends, :class:`SeedRevealed` follows :class:`GameFinished` with
the seed, the salt and the scenario (unless the game was created with the
reveal off), and anyone may check the commitment and re-execute the game.

:func:`verify_record` is that re-execution for a player: from the events as
the player saw them and the game's command log, it re-decides every command
from the revealed seed and checks that each event, redacted for the player,
is exactly the one the player saw. It needs nothing but this package: no
service, no token.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from domain import codec, registry
from domain.chance import Rng
from domain.clocks import TimeControl, check_timeout
from domain.commitment import COMMITMENT_TAG, SeedRevealed, commitment
from domain.rules import Role, Viewer
from domain.session import LEAVE, GameCreated, Session, event_schema_version

__all__ = [
    "COMMITMENT_TAG",
    "RecordCheck",
    "SeedRevealed",
    "canonical",
    "commitment",
    "encode_event",
    "verify_record",
]


def canonical(type_name: str, data: Any) -> str:
    """An event's canonical JSON (for comparing a re-executed event with a
    recorded one)."""
    return json.dumps(
        {"type": type_name, "data": data},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def encode_event(event: Any) -> dict[str, Any]:
    """An event as a record holds it: its type and its JSON body."""
    return {"type": type(event).__name__, "data": codec.encode(event)}


@dataclasses.dataclass(frozen=True)
class RecordCheck:
    """What checking a player's record found."""

    ok: bool
    message: str
    #: The first version whose event differs (0: none, or not an event).
    version: int = 0
    events_checked: int = 0


def verify_record(record: dict[str, Any]) -> RecordCheck:
    """Check a player's record of a finished game (the document
    ``ExportPlayerRecord`` returns; see the README, "Provably fair"):
    the commitment matches the revealed seed and salt, and re-executing the
    command log from that seed yields, redacted for the player, exactly the
    events the player saw, version by version."""

    try:
        events = list(record["events"])
        commands = list(record["commands"])
        seats = [int(s) for s in record["seats"]]
        role = Role(str(record.get("role", Role.PLAYER.value)))
        game_type = str(record["game_type"])
        rules_version = str(record["rules_version"])
    except (KeyError, TypeError, ValueError) as error:
        return RecordCheck(False, f"not a player's record: {error!r}")
    try:
        session: Session[Any] = registry.session_for(game_type, rules_version)
    except KeyError:
        return RecordCheck(
            False, f"this verifier does not know {game_type} rules {rules_version}"
        )
    try:
        seen = [session.decode_event(e["type"], e["data"]) for e in events]
    except (KeyError, TypeError, codec.CodecError) as error:
        return RecordCheck(False, f"an event of the record cannot be read: {error}")
    if not seen or not isinstance(seen[0], GameCreated):
        return RecordCheck(False, "the record does not begin with GameCreated", 1)
    revealed = [e for e in seen if isinstance(e, SeedRevealed)]
    if not revealed:
        return RecordCheck(False, "the record holds no revealed seed")
    reveal = revealed[-1]
    promised = seen[0].commitment
    if commitment(reveal.seed, reveal.salt) != promised:
        return RecordCheck(
            False,
            "the revealed seed and salt do not match the commitment made at "
            f"the start ({promised or 'none'})",
            1,
        )
    created = dataclasses.replace(
        seen[0], seed=reveal.seed, salt=reveal.salt, scenario=reveal.scenario
    )
    viewer = Viewer(frozenset(seats), role)
    replay = _Replay(session, viewer, seen, commands)
    replay.times = [e.get("at") for e in events]
    replay.time_control = record.get("time_control")
    return replay.run(created)


@dataclasses.dataclass(frozen=True)
class _Stamped:
    """A re-executed event with the time the record gives its version."""

    type: str
    data: Any
    schema_version: int
    version: int
    recorded_at: Any


class _Replay:
    """Re-execute a command log and compare, redacted, with what was seen."""

    def __init__(
        self,
        session: Any,
        viewer: Any,
        seen: Sequence[Any],
        commands: Sequence[dict[str, Any]],
    ) -> None:
        self.session = session
        self.viewer = viewer
        self.seen = seen
        self.by_version = {int(c["first_version"]): c for c in commands}
        #: The seat whose command ended at each version (what the clocks
        #: count as a seat's move).
        self.moved = {
            int(c["last_version"]): int(c["seat"])
            for c in commands
            if "last_version" in c and int(c["seat"]) >= 0
        }
        #: Each version's recorded time ("at"), and the time control.
        self.times: list[Any] = []
        self.time_control: Any = None
        #: The events re-executed so far, whole, with the record's times.
        self.stamped: list[_Stamped] = []

    def _stamp(self, version: int, event: Any) -> None:
        from datetime import datetime

        at = self.times[version - 1] if version <= len(self.times) else None
        self.stamped.append(
            _Stamped(
                type(event).__name__,
                codec.encode(event),
                event_schema_version(type(event)),
                version,
                datetime.fromisoformat(at) if isinstance(at, str) else None,
            )
        )

    def _timeout_problem(self, version: int, command: dict[str, Any]) -> str:
        """What is wrong with a logged timeout (the service acting for a
        seat whose time ran out): its seat's time had not run out at the
        instant it records, or the bot would move otherwise ('' if none)."""

        if any(s.recorded_at is None for s in self.stamped):
            return "the record gives no times to check the timeout with"
        decoded: Any = None
        if command["type"] != LEAVE:
            cls = self.session.command_type(str(command["type"]))
            decoded = codec.decode(cls, command.get("command") or {})
        return check_timeout(
            self.session,
            self.stamped[: version - 1],
            self.moved,
            TimeControl.from_body(self.time_control),
            int(command["seat"]),
            dict(command["timeout"]),
            decoded,
        )

    def _differs(self, version: int, produced: Any) -> RecordCheck | None:
        if version > len(self.seen):
            return RecordCheck(
                False,
                f"version {version}: re-executed {type(produced).__name__}, "
                "which the record does not hold",
                version,
                version - 1,
            )
        mine = self.session.redact(produced, self.viewer)
        theirs = self.seen[version - 1]
        if canonical(type(mine).__name__, codec.encode(mine)) != canonical(
            type(theirs).__name__, codec.encode(theirs)
        ):
            return RecordCheck(
                False,
                f"version {version}: the record holds {type(theirs).__name__} "
                f"{json.dumps(codec.encode(theirs), sort_keys=True)[:300]}, "
                f"re-execution gives {type(mine).__name__} "
                f"{json.dumps(codec.encode(mine), sort_keys=True)[:300]}",
                version,
                version - 1,
            )
        return None

    def run(self, created: Any) -> RecordCheck:

        session = self.session
        problem = self._differs(1, created)
        if problem is not None:
            return problem
        self._stamp(1, created)
        state = session.fold([created])
        while state.version < len(self.seen):
            version = state.version + 1
            command = self.by_version.get(version)
            if command is None:
                return RecordCheck(
                    False,
                    f"version {version}: no command of the log caused it",
                    version,
                    version - 1,
                )
            if "timeout" in command:
                try:
                    late = self._timeout_problem(version, command)
                except Exception as error:
                    late = f"it cannot be checked: {error}"
                if late:
                    return RecordCheck(
                        False,
                        f"version {version}: the service's timeout: {late}",
                        version,
                        version - 1,
                    )
            try:
                produced = session.redo(
                    state,
                    str(command["type"]),
                    int(command["seat"]),
                    command.get("command") or {},
                    Rng(created.seed, state.version),
                )
            except Exception as error:
                return RecordCheck(
                    False,
                    f"version {version}: command {command['type']} now fails: {error}",
                    version,
                    version - 1,
                )
            for offset, event in enumerate(produced):
                problem = self._differs(version + offset, event)
                if problem is not None:
                    return problem
                self._stamp(version + offset, event)
            state = session.fold(produced, state)
        return RecordCheck(
            True,
            f"verified: {len(self.seen)} events re-executed from the revealed "
            "seed match the record, and the seed matches the commitment",
            0,
            len(self.seen),
        )
