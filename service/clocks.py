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

import heapq
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from domain import registry
from domain.clocks import (
    BOT,
    FORFEIT,
    MAX_SECONDS,
    POLICIES,
    SeatClock,
    TimeControl,
    check_timeout,
    expired_seats,
    next_deadline,
    seat_clocks,
    timeout_move,
)
from domain.session import GameFinished, GameStarted, Session, SessionState
from eventstore.base import CommandRecord, StoreError
from service import telemetry
from service.callers import Caller
from service.commands import TIMEOUT_PREFIX, Commands
from service.errors import Aborted
from service.limits import DEFAULT_BOT_MOVE_MS, deadline_after
from service.outages import OutageLog
from service.sharing import Recent

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


#: How many timed games' latest clocks are kept.
CLOCKS_KEPT = 4096


class Timeouts:
    """The use cases of time: each seat's clock, and acting for a seat whose
    time ran out."""

    def __init__(
        self, commands: Commands, lobby: Any, move_ms: float = DEFAULT_BOT_MOVE_MS
    ) -> None:
        self.commands = commands
        self.lobby = lobby
        #: Milliseconds the bot may think about a timed-out seat's move.
        self.move_ms = move_ms
        # Each timed game's clocks at its latest version worked out.
        self._clocks: Recent[tuple[int, dict[int, SeatClock]]] = Recent(CLOCKS_KEPT)
        self._clocks_lock = threading.Lock()

    def clocks_of(
        self, game_id: str, version: int = 0
    ) -> tuple[TimeControl, dict[int, SeatClock]]:
        """The game's time control and each seat's clock now (none for a
        game without a time control); with ``version``, the clocks kept as
        of that version when there are (a watcher's newest event: no read
        of the store). The clocks are worked out from the whole game (its
        events and commands) once a version: they depend on nothing else,
        and every ``GetGame`` and every watcher's newest event asks for
        them."""
        control = self.lobby.time_control_of(game_id)
        if not control.timed:
            return control, {}
        with self._clocks_lock:
            kept = self._clocks.get(game_id)
        if kept is not None and version and kept[0] == version:
            return control, dict(kept[1])
        loaded = self.commands.games.load(game_id)
        if kept is not None and kept[0] == loaded.state.version:
            return control, dict(kept[1])
        store = self.commands.store
        state, clocks = seat_clocks(
            loaded.session,
            store.read_stream(game_id),
            control,
            movers(store.read_commands(game_id)),
        )
        if state is not None:
            with self._clocks_lock:
                kept = self._clocks.get(game_id)
                if kept is None or kept[0] <= state.version:
                    self._clocks.put(game_id, (state.version, dict(clocks)))
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
        move (``bot``, ``bot:<level>``) or its leaving (``forfeit``), logged
        as ``timeout-seat-<seat>-at-<version>`` with the instant (and the
        samples the strong bot searched in its time: what a verification
        decides its move again with), pinned to the version. False when the
        game moved on or another replica acted."""
        command_id = timeout_id(seat, state.version)
        timeout: dict[str, Any] = {"at": now.isoformat(), "policy": policy}
        note = {"timeout": timeout}
        if policy == FORFEIT:
            version = self.lobby.leave_as_service(
                game_id, seat, command_id, state.version, note
            )
            return bool(version)
        try:
            command, samples = timeout_move(
                session, state, seat, policy, out_of_time=deadline_after(self.move_ms)
            )
            if samples:
                timeout["samples"] = samples
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

    It follows the global log as the bot runner does (from position 0 at
    start-up, so games in play when the service stopped go on): a game that
    starts with a time control is tracked, each event of a tracked game
    (a move, a timeout, a leave) has its clocks worked out again, once, and
    a finished game is forgotten. Each tracked game's next deadline waits in
    a heap ordered by deadline; the timekeeper sleeps until the earliest
    one, or until an append wakes it (a move that changes a deadline), and
    acts for what is due. An idle game costs nothing until its deadline:
    the sweep that re-read every timed game twice a second acted 6.5 s late
    (p50) with 600 of them.

    ``clock`` is injectable (tests never sleep). Several timekeepers (on
    several replicas) may race on one expiry: the command id and the pinned
    version let exactly one append it."""

    def __init__(
        self,
        app: Any,
        clock: Callable[[], datetime] = _now,
        every: float = 1.0,
        batch: int = 500,
        linger: float = 0.05,
    ) -> None:
        self.app = app
        self.clock = clock
        #: The longest it sleeps without looking at the clock again.
        self.every = every
        #: How long it lets appends gather after one wakes it, before it
        #: reads the log (never past the next deadline).
        self.linger = linger
        self.batch = batch
        self.acted = 0
        #: How far along the global log it has read.
        self.position = 0
        #: Games it acted on (or looked at, when a deadline came due).
        self.checks = 0
        #: Each tracked game's time control (a timed game in play).
        self._controls: dict[str, TimeControl] = {}
        #: Each game's clocks as of a version: a game waiting for a person
        #: is checked against the clock without reading its history again.
        self._clocks: dict[str, tuple[int, Any, dict[int, SeatClock]]] = {}
        #: Tracked games with events not yet taken into their deadlines.
        self._changed: set[str] = set()
        #: Each tracked game's next deadline and the version it holds at;
        #: the heap holds these (and stale entries, skipped when popped).
        self._due: dict[str, tuple[datetime, int]] = {}
        self._heap: list[tuple[datetime, str, int]] = []
        self._outage = OutageLog(log, "clocks")
        meter = telemetry.meter()
        self._timeouts = meter.create_counter(
            "strata.timeouts",
            description="Timeouts the timekeeper acted on, by policy (bot, forfeit)",
        )
        self._lateness = meter.create_histogram(
            "strata.timeout.lateness",
            unit="s",
            description="From a seat's deadline to the timekeeper's act on it",
        )

    @property
    def tracked(self) -> int:
        """Timed games in play it keeps deadlines for."""
        return len(self._controls)

    def next_due(self) -> datetime | None:
        """The earliest deadline it waits for (None: none)."""
        while self._heap and self._due.get(self._heap[0][1]) != (
            self._heap[0][0],
            self._heap[0][2],
        ):
            heapq.heappop(self._heap)  # stale: the game moved on
        return self._heap[0][0] if self._heap else None

    def sweep(self) -> int:
        """Take in the log's new events and act once for every seat out of
        time now; returns how many acts this timekeeper appended. What is
        due is acted on first, and again after each changed game's deadline
        is worked out: a burst of changes delays no timeout behind it."""
        self._read_log()
        count = self.act_due(self.clock())
        changed, self._changed = sorted(self._changed), set()
        for index, game_id in enumerate(changed):
            try:
                with telemetry.background("strata.clocks.schedule", game_id):
                    self._schedule(game_id)
            except StoreError:
                self._changed.update(changed[index:])  # tried again later
                raise
            count += self.act_due(self.clock())
        self.acted += count
        return count

    def _read_log(self) -> None:
        """Read the log to its end: games that start are candidates, games
        tracked that changed are noted, finished ones forgotten."""
        while True:
            read = self.app.store.read_all_matching(
                self.position, self.batch, _TRACKED, self._controls
            )
            for event in read.events:
                if event.type == _FINISHED:
                    self._forget(event.game_id)
                elif event.game_id in self._controls or event.type == _STARTED:
                    self._changed.add(event.game_id)
            self.position = read.through
            if read.scanned < self.batch:
                return

    def _forget(self, game_id: str) -> None:
        self._controls.pop(game_id, None)
        self._clocks.pop(game_id, None)
        self._due.pop(game_id, None)
        self._changed.discard(game_id)

    def _schedule(self, game_id: str, retry: datetime | None = None) -> None:
        """Work out the game's next deadline (or, after a failed act, try
        again at ``retry``) and wait for it. A game that started is tracked
        when it has a time control."""
        if retry is None:
            if game_id not in self._controls:
                control = self.app.lobby.time_control_of(game_id)
                if not control.timed:
                    return
                self._controls[game_id] = control
            state, clocks = self._work_out(game_id)
            due = next_deadline(state, clocks)
            if state is None or due is None:
                self._due.pop(game_id, None)
                return
            version = state.version
        else:
            due, version = retry, self._due.get(game_id, (retry, 0))[1]
        self._due[game_id] = (due, version)
        heapq.heappush(self._heap, (due, game_id, version))
        if len(self._heap) > 2 * len(self._due) + 1024:
            # Stale entries wait until they come up: with long time controls
            # and many moves, keep the heap to what is still due.
            self._heap = [(d, g, v) for g, (d, v) in self._due.items()]
            heapq.heapify(self._heap)

    def act_due(self, now: datetime) -> int:
        """Act for every tracked game whose deadline passed at ``now``."""
        count = 0
        while (due := self.next_due()) is not None and due <= now:
            _, game_id, _ = heapq.heappop(self._heap)
            del self._due[game_id]
            self.checks += 1
            try:
                with telemetry.background("strata.clocks.timeout", game_id):
                    acted = self.act(game_id, self._controls[game_id], now)
            except StoreError:
                # Tried again shortly; what the act appended (if it did)
                # comes back through the log.
                self._schedule(game_id, retry=now + RETRY)
                raise
            if not acted:
                # The game moved on, or another replica acted: the log will
                # say so and set the next deadline. Should it say nothing
                # (a move the bot could not make), look again shortly.
                self._schedule(game_id, retry=now + RETRY)
            if acted:
                policy = {"policy": self._controls[game_id].on_timeout}
                self._timeouts.add(acted, policy)
                self._lateness.record(max((now - due).total_seconds(), 0.0), policy)
            count += acted
            # What it appended comes through the log, which sets the game's
            # next deadline.
        return count

    def _work_out(self, game_id: str) -> tuple[Any, dict[int, SeatClock]]:
        """The game's state and clocks, from its stored events and commands
        (two reads; kept as of the version they hold)."""
        events = self.app.store.read_stream(game_id)
        moved = movers(self.app.store.read_commands(game_id))
        created = events[0].data if events else {}
        try:
            session = registry.session_for(
                str(created.get("game_type", "")), created.get("rules_version")
            )
        except KeyError:  # rules this service does not ship: no clocks kept
            self._forget(game_id)
            return None, {}
        state, clocks = seat_clocks(session, events, self._controls[game_id], moved)
        if state is not None:
            self._clocks[game_id] = (state.version, state, clocks)
        return state, clocks

    def act(self, game_id: str, control: TimeControl, now: datetime) -> int:
        """Act for the lowest seat of ``game_id`` out of time at ``now``."""
        loaded = self.app.load(game_id)
        self._controls.setdefault(game_id, control)
        cached = self._clocks.get(game_id)
        if cached is not None and cached[0] == loaded.state.version:
            _, state, clocks = cached  # nothing happened since: same clocks
        else:
            state, clocks = self._work_out(game_id)
        expired = expired_seats(state, clocks, now)
        if state is None or not expired:
            return 0
        return int(
            self.app.timeout(
                game_id, state, expired[0], control.on_timeout, now, loaded.session
            )
        )

    def run_forever(self, stop: threading.Event) -> None:
        """Until ``stop``: act for what is due, then sleep until the next
        deadline, an append (a move may change a deadline), or ``every``
        seconds, whichever comes first.

        Woken by an append, it lets appends gather for ``linger`` (or until
        the next deadline, if sooner) before it reads: on a busy service
        that is one read of the log every ``linger``, not one an append
        (most appends are of games without a clock). What a linger delays
        is when a new deadline is taken in: a game's first is a second
        away or more (time controls are whole seconds), and a move's next
        seat is late by at most ``linger`` only when its clock had less
        than that left."""
        while not stop.is_set():
            try:
                self.sweep()
                self._outage.ok()
                wait = self._until_due(self.every)
                if wait > 0 and self.app.store.wait_for_append(self.position, wait):
                    stop.wait(self._until_due(self.linger))
            except Exception as error:  # logged, then tried again
                self._outage.failed(error)
                stop.wait(self.every)

    def _until_due(self, longest: float) -> float:
        """Seconds to the next deadline, at most ``longest``."""
        due = self.next_due()
        if due is None:
            return longest
        return min(longest, (due - self.clock()).total_seconds())


#: How soon the timekeeper looks again at a game it could not act on.
RETRY = timedelta(seconds=1)

#: The event types the timekeeper reads of every game; of the games it
#: tracks, it reads every event.
_STARTED, _FINISHED = GameStarted.__name__, GameFinished.__name__
_TRACKED = (_STARTED, _FINISHED)


#: The time controls' pure part lives in :mod:`domain.clocks` (the offline
#: verifier checks timeouts with it too); the service's users import it here.
__all__ = [
    "BOT",
    "FORFEIT",
    "MAX_SECONDS",
    "POLICIES",
    "RETRY",
    "SERVICE",
    "SeatClock",
    "TimeControl",
    "Timekeeper",
    "Timeouts",
    "check_timeout",
    "expired_seats",
    "movers",
    "next_deadline",
    "seat_clocks",
    "timeout_id",
    "timeout_move",
]
