"""Time controls: deadlines per decision, clocks per seat, and timeouts.

A game may be created with a time control (``CreateGameRequest.time_control``,
logged with its creation): a deadline per decision, or a clock per seat
(base time plus an increment per move, as in chess). Time is an input,
recorded where it is read:

- the instant a seat began a decision is the recorded time of the event
  after which it became active (the store stamps every event), so every
  replica, and a later verification, works out the same deadlines from the
  same stored events (:func:`seat_clocks`);
- a seat acts while it is active, so in a simultaneous window (every seat
  committing at once) everyone still to act has their own clock running;
- on expiry the service acts itself (:class:`Timekeeper`), through a
  command it logs with a reserved id, ``timeout-seat-<seat>-at-<version>``,
  pinned to that version (on several replicas exactly one is appended), in
  which the instant it decided is recorded (``timeout.at``). The policy
  chosen at creation says what it does: ``bot`` plays that one decision
  for the seat with the game's bot (the seat stays the player's);
  ``forfeit`` takes the seat out of the game (as ``LeaveGame``).

:func:`check_timeout` (in :mod:`domain.clocks`, with the clocks' arithmetic,
so that a player's offline verification checks timeouts too) is what
``VerifyGame`` asks of a logged timeout: that at its recorded instant the
seat's time had run out, and, for the ``bot`` policy, that the bot decides
the same move again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog

from domain.clocks import (
    BOT,
    FORFEIT,
    MAX_SECONDS,
    POLICIES,
    SeatClock,
    TimeControl,
    check_timeout,
    expired_seats,
    seat_clocks,
    timeout_move,
)
from domain.session import Session, SessionState, Status
from eventstore.base import CommandRecord
from service.callers import Caller
from service.commands import TIMEOUT_PREFIX, Commands
from service.errors import Aborted
from service.outages import OutageLog

log = structlog.get_logger("strata.clocks")

#: The service acting on its own account (for any seat).
SERVICE = Caller(service=True)


def timeout_id(seat: int, version: int) -> str:
    """The id of the timeout of ``seat`` decided at ``version``."""
    return f"{TIMEOUT_PREFIX}{seat}-at-{version}"


def movers(commands: Sequence[CommandRecord]) -> dict[int, int]:
    """The seat whose accepted command ended at each version (the versions
    at which a seat made a move: a decision of its own ended there)."""
    return {
        c.outcome.last_version: int(c.payload.get("seat", -1))
        for c in commands
        if c.outcome.accepted and int(c.payload.get("seat", -1)) >= 0
    }


def _now() -> datetime:
    return datetime.now(UTC)


class Timeouts:
    """The use cases of time: each seat's clock, and acting for a seat whose
    time ran out."""

    def __init__(self, commands: Commands, lobby: Any) -> None:
        self.commands = commands
        self.lobby = lobby

    def clocks_of(self, game_id: str) -> tuple[TimeControl, dict[int, SeatClock]]:
        """The game's time control and each seat's clock now (none for a
        game without a time control)."""
        control = self.lobby.time_control_of(game_id)
        if not control.timed:
            return control, {}
        store = self.commands.store
        session = self.commands.games.load(game_id).session
        _, clocks = seat_clocks(
            session,
            store.read_stream(game_id),
            control,
            movers(store.read_commands(game_id)),
        )
        return control, clocks

    def timeout(
        self,
        game_id: str,
        state: SessionState[Any],
        seat: int,
        policy: str,
        now: datetime,
        session: Session[Any],
    ) -> bool:
        """Act for ``seat``, out of time at ``now`` in ``state``: its bot's
        move (``bot``) or its leaving (``forfeit``), logged as
        ``timeout-seat-<seat>-at-<version>`` with the instant, pinned to the
        version. False when the game moved on or another replica acted."""
        command_id = timeout_id(seat, state.version)
        note = {"timeout": {"at": now.isoformat(), "policy": policy}}
        if policy == FORFEIT:
            version = self.lobby.leave_as_service(
                game_id, seat, command_id, state.version, note
            )
            return bool(version)
        try:
            command = timeout_move(session, state, seat)
            submitted = self.commands.submit(
                SERVICE,
                game_id,
                seat,
                command_id,
                command,
                expected_version=state.version,
                note=note,
            )
        except (Aborted, ValueError):
            return False  # the game moved on meanwhile
        return not submitted.duplicate


class Timekeeper:
    """Acts for the seats whose time ran out, as the service's own command.

    ``clock`` is injectable (tests never sleep). Several timekeepers (on
    several replicas) may race on one expiry: the command id and the pinned
    version let exactly one append it."""

    def __init__(
        self, app: Any, clock: Callable[[], datetime] = _now, every: float = 0.5
    ) -> None:
        self.app = app
        self.clock = clock
        self.every = every
        self.acted = 0
        #: Each game's time control (fixed at its creation: read once).
        self._controls: dict[str, TimeControl] = {}
        #: Each game's clocks as of a version: a game waiting for a person
        #: is checked against the clock without reading its history again.
        self._clocks: dict[str, tuple[int, Any, dict[int, SeatClock]]] = {}

    def timed_games(self) -> Iterator[tuple[str, TimeControl]]:
        """Games in play with a time control."""
        after = ""
        seen: dict[str, TimeControl] = {}
        while True:
            rows, after = self.app.list_games("", Status.ACTIVE, 500, after)
            for row in rows:
                control = self._controls.get(row.game_id)
                if control is None:
                    control = self.app.lobby.time_control_of(row.game_id)
                seen[row.game_id] = control
                if control.timed:
                    yield row.game_id, control
            if not after:
                self._controls = seen  # games no longer in play forgotten
                self._clocks = {g: c for g, c in self._clocks.items() if g in seen}
                return

    def sweep(self) -> int:
        """Act once for every seat out of time now; returns how many acts
        this timekeeper appended."""
        now = self.clock()
        count = 0
        for game_id, control in list(self.timed_games()):
            count += self.act(game_id, control, now)
        self.acted += count
        return count

    def act(self, game_id: str, control: TimeControl, now: datetime) -> int:
        """Act for the lowest seat of ``game_id`` out of time at ``now``."""
        loaded = self.app.load(game_id)
        cached = self._clocks.get(game_id)
        if cached is not None and cached[0] == loaded.state.version:
            _, state, clocks = cached  # nothing happened since: same clocks
        else:
            events = self.app.store.read_stream(game_id)
            moved = movers(self.app.store.read_commands(game_id))
            state, clocks = seat_clocks(loaded.session, events, control, moved)
            if state is not None:
                self._clocks[game_id] = (state.version, state, clocks)
        expired = expired_seats(state, clocks, now)
        if state is None or not expired:
            return 0
        return int(
            self.app.timeout(
                game_id, state, expired[0], control.on_timeout, now, loaded.session
            )
        )

    def run_forever(self, stop: threading.Event) -> None:
        """Sweep every ``every`` seconds until ``stop``; a database outage
        is one line when it starts and one when it ends."""
        outage = OutageLog(log, "clocks")
        while not stop.wait(self.every):
            try:
                self.sweep()
                outage.ok()
            except Exception as error:  # logged, then tried again
                outage.failed(error)


#: The time controls' pure part lives in :mod:`domain.clocks` (the offline
#: verifier checks timeouts with it too); the service's users import it here.
__all__ = [
    "BOT",
    "FORFEIT",
    "MAX_SECONDS",
    "POLICIES",
    "SERVICE",
    "SeatClock",
    "TimeControl",
    "Timekeeper",
    "Timeouts",
    "check_timeout",
    "expired_seats",
    "movers",
    "seat_clocks",
    "timeout_id",
    "timeout_move",
]
