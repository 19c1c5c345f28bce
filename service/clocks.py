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

:func:`check_timeout` is what ``VerifyGame`` asks of a logged timeout: that
at its recorded instant the seat's time had run out, and, for the ``bot``
policy, that the bot decides the same move again.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from domain import bots as domain_bots
from domain.session import Session, SessionState, Status
from eventstore.base import CommandRecord, RecordedEvent
from service.callers import Caller
from service.commands import TIMEOUT_PREFIX, Commands
from service.errors import Aborted, InvalidArgument

log = structlog.get_logger("strata.clocks")

#: The service acting on its own account (for any seat).
SERVICE = Caller(service=True)
BOT, FORFEIT = "bot", "forfeit"
POLICIES = (BOT, FORFEIT)
#: The longest time control accepted (a week), against overflow and typos.
MAX_SECONDS = 7 * 24 * 3600


def timeout_id(seat: int, version: int) -> str:
    """The id of the timeout of ``seat`` decided at ``version``."""
    return f"{TIMEOUT_PREFIX}{seat}-at-{version}"


@dataclasses.dataclass(frozen=True)
class TimeControl:
    """A game's time control: ``decision_seconds`` per decision, or a clock
    of ``base_seconds`` plus ``increment_seconds`` per move; none when all
    are 0. ``on_timeout``: ``bot`` or ``forfeit``."""

    decision_seconds: int = 0
    base_seconds: int = 0
    increment_seconds: int = 0
    on_timeout: str = BOT

    @property
    def timed(self) -> bool:
        return bool(self.decision_seconds or self.base_seconds)

    def check(self) -> TimeControl:
        """Itself, or INVALID_ARGUMENT ``TIME_CONTROL_INVALID``."""
        values = (self.decision_seconds, self.base_seconds, self.increment_seconds)
        problem = ""
        if any(not 0 <= v <= MAX_SECONDS for v in values):
            problem = f"seconds must be 0 to {MAX_SECONDS}"
        elif self.decision_seconds and (self.base_seconds or self.increment_seconds):
            problem = "choose a deadline per decision or a clock, not both"
        elif self.increment_seconds and not self.base_seconds:
            problem = "an increment needs a clock (base_seconds)"
        elif self.on_timeout not in POLICIES:
            problem = "on_timeout is bot or forfeit"
        if problem:
            raise InvalidArgument(
                "TIME_CONTROL_INVALID",
                f"The time control is wrong: {problem}.",
                "time_control",
            )
        return self

    def to_body(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @staticmethod
    def from_body(body: Any) -> TimeControl:
        if not isinstance(body, dict):
            return TimeControl()
        return TimeControl(
            decision_seconds=int(body.get("decision_seconds", 0)),
            base_seconds=int(body.get("base_seconds", 0)),
            increment_seconds=int(body.get("increment_seconds", 0)),
            on_timeout=str(body.get("on_timeout", BOT)),
        )


@dataclasses.dataclass(frozen=True)
class SeatClock:
    """One seat's time: ``deadline`` (while it must act) and, with a clock,
    ``remaining`` (its time left: at ``deadline - now`` while it acts)."""

    seat: int
    deadline: datetime | None
    remaining: timedelta | None


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def movers(commands: Sequence[CommandRecord]) -> dict[int, int]:
    """The seat whose accepted command ended at each version (the versions
    at which a seat made a move: a decision of its own ended there)."""
    return {
        c.outcome.last_version: int(c.payload.get("seat", -1))
        for c in commands
        if c.outcome.accepted and int(c.payload.get("seat", -1)) >= 0
    }


def seat_clocks(
    session: Session[Any],
    events: Sequence[RecordedEvent],
    control: TimeControl,
    moved: dict[int, int] | None = None,
) -> tuple[SessionState[Any] | None, dict[int, SeatClock]]:
    """The state after ``events`` (a game's stored events from version 1)
    and each seat's clock then. A seat's decision starts at the recorded
    time of the event after which it has to act, and ends with its own move
    (``moved``: the seat whose command ended at each version, from
    :func:`movers`; a seat still to act after it starts its next decision
    then) or when another's move took the decision away."""
    moved = moved or {}
    state: SessionState[Any] | None = None
    since: dict[int, datetime] = {}
    used: dict[int, timedelta] = {}
    moves: dict[int, int] = {}
    for recorded in events:
        event = session.decode_event(
            recorded.type, recorded.data, recorded.schema_version
        )
        state = session.evolve(state, event)
        at = _aware(recorded.recorded_at)
        active = session.active_seats(state) if state.status is Status.ACTIVE else set()
        mover = moved.get(recorded.version)
        if mover is not None and mover in since:
            used[mover] = used.get(mover, timedelta()) + (at - since.pop(mover))
            moves[mover] = moves.get(mover, 0) + 1
        for seat in [s for s in since if s not in active]:
            used[seat] = used.get(seat, timedelta()) + (at - since.pop(seat))
        for seat in active:
            since.setdefault(seat, at)
    clocks: dict[int, SeatClock] = {}
    if state is None or not control.timed:
        return state, clocks
    for seat in range(len(state.seats)):
        if control.decision_seconds:
            start = since.get(seat)
            deadline = (
                None
                if start is None
                else start + timedelta(seconds=control.decision_seconds)
            )
            clocks[seat] = SeatClock(seat, deadline, None)
            continue
        budget = (
            timedelta(seconds=control.base_seconds)
            + timedelta(seconds=control.increment_seconds) * moves.get(seat, 0)
            - used.get(seat, timedelta())
        )
        start = since.get(seat)
        clocks[seat] = SeatClock(
            seat, None if start is None else start + budget, budget
        )
    return state, clocks


def expired_seats(
    state: SessionState[Any] | None, clocks: dict[int, SeatClock], now: datetime
) -> list[int]:
    """Seats a person plays whose time ran out at ``now``, lowest first (a
    bot seat's moves are the bot runner's)."""
    if state is None or state.status is not Status.ACTIVE:
        return []
    return sorted(
        s
        for s, c in clocks.items()
        if c.deadline is not None
        and c.deadline <= now
        and (info := state.seats[s]) is not None
        and not info.bot
    )


def timeout_move(session: Session[Any], state: SessionState[Any], seat: int) -> Any:
    """The move the ``bot`` policy makes for ``seat`` at ``state``: the game's
    replacement bot's, from the seat's view, with the bot's generator."""
    rules = session.rules
    kinds = domain_bots.bot_kinds(state.game_type)
    kind = "heuristic" if "heuristic" in kinds else "random"
    bot = domain_bots.bot_for(state.game_type, kind).play
    rng = domain_bots.bot_rng(state.config.seed, seat, state.version)
    return domain_bots.bot_move(rules, state.game, seat, bot, rng)


def check_timeout(
    session: Session[Any],
    events: Sequence[RecordedEvent],
    moved: dict[int, int],
    control: TimeControl,
    seat: int,
    note: dict[str, Any],
    command: Any,
) -> str:
    """What is wrong with a logged timeout of ``seat`` decided after
    ``events`` (empty: nothing): the seat's time had run out at the recorded
    instant, and the ``bot`` policy's move is the bot's again."""
    state, clocks = seat_clocks(session, events, control, moved)
    try:
        at = _aware(datetime.fromisoformat(str(note["at"])))
    except (KeyError, ValueError):
        return "the timeout has no readable instant"
    if seat not in expired_seats(state, clocks, at):
        return f"seat {seat}'s time had not run out at {at.isoformat()}"
    if note.get("policy") == BOT and state is not None:
        try:
            again = timeout_move(session, state, seat)
        except ValueError as error:
            return f"the bot cannot decide again: {error}"
        if again != command:
            return "the bot decides another move now"
    return ""


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
        events = self.app.store.read_stream(game_id)
        moved = movers(self.app.store.read_commands(game_id))
        state, clocks = seat_clocks(loaded.session, events, control, moved)
        expired = expired_seats(state, clocks, now)
        if state is None or not expired:
            return 0
        return int(
            self.app.timeout(
                game_id, state, expired[0], control.on_timeout, now, loaded.session
            )
        )

    def run_forever(self, stop: threading.Event) -> None:
        """Sweep every ``every`` seconds until ``stop``."""
        while not stop.wait(self.every):
            try:
                self.sweep()
            except Exception as error:  # logged, then tried again
                log.error("clocks.sweep_failed", error=str(error))
