"""Time controls: deadlines per decision, clocks per seat, and whether a
timeout was due, worked out from a game's events and the times they were
recorded at. Pure: the service (:mod:`service.clocks`) runs the clocks and
acts on expiry; ``VerifyGame`` and the offline verifier
(:func:`domain.fairness.verify_record`) check a logged timeout with
:func:`check_timeout`, from the same events and times.

A seat's decision starts at the recorded time of the event after which it
has to act, and ends with its own move or when another's move took the
decision away; a deadline per decision, or a clock of a base time plus an
increment per move, runs while it decides.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from domain import bots as domain_bots
from domain import search
from domain.errors import InvalidCommand
from domain.search import never
from domain.seats import seat_number
from domain.session import Session, SessionState, Status

BOT, FORFEIT = domain_bots.BOT_POLICY, "forfeit"
#: The policies by name (besides ``bot:<level>``: :func:`is_policy`).
POLICIES = (BOT, FORFEIT)


def is_policy(policy: str) -> bool:
    """True for ``bot``, ``bot:<level>`` and ``forfeit``."""
    return policy == FORFEIT or domain_bots.policy_level(policy) is not None


#: The longest time control accepted (a week), against overflow and typos.
MAX_SECONDS = 7 * 24 * 3600


class Stamped(Protocol):
    """A stored event with its time (the store's ``RecordedEvent``, or the
    offline verifier's re-executed event with the record's time)."""

    @property
    def type(self) -> str: ...
    @property
    def data(self) -> Any: ...
    @property
    def schema_version(self) -> int: ...
    @property
    def version(self) -> int: ...
    @property
    def recorded_at(self) -> datetime: ...


@dataclasses.dataclass(frozen=True)
class TimeControl:
    """A game's time control: ``decision_seconds`` per decision, or a clock
    of ``base_seconds`` plus ``increment_seconds`` per move; none when all
    are 0. ``on_timeout``: ``bot``, ``bot:<level>`` or ``forfeit``."""

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
        elif not is_policy(self.on_timeout):
            levels = ", ".join(f"bot:{level}" for level in domain_bots.LEVELS)
            problem = f"on_timeout is bot, {levels} or forfeit"
        if problem:
            raise InvalidCommand(
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


def seat_clocks(
    session: Session[Any],
    events: Sequence[Stamped],
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
    return sorted(s for s, at in _deadlines(state, clocks) if at <= now)


def next_deadline(
    state: SessionState[Any] | None, clocks: dict[int, SeatClock]
) -> datetime | None:
    """The earliest deadline of a seat a person plays (None: nobody's time
    runs): when :func:`expired_seats` will first name a seat."""
    return min((at for _, at in _deadlines(state, clocks)), default=None)


def _deadlines(
    state: SessionState[Any] | None, clocks: dict[int, SeatClock]
) -> list[tuple[int, datetime]]:
    """(seat, deadline) of each seat a person plays whose time runs."""
    if state is None or state.status is not Status.ACTIVE:
        return []
    return [
        (s, c.deadline)
        for s, c in clocks.items()
        if c.deadline is not None
        and (info := state.seats[s]) is not None
        and not info.bot
    ]


def timeout_move(
    session: Session[Any],
    state: SessionState[Any],
    seat: int,
    policy: str = BOT,
    samples: int | None = None,
    out_of_time: Callable[[], bool] = never,
) -> tuple[Any, int]:
    """The move a bot ``policy`` (``bot``, ``bot:<level>``) makes for
    ``seat`` at ``state``, from the seat's view, with the bot's generator,
    and the samples the strong bot searched (0 for the others): its search
    stops when ``out_of_time`` says, or after ``samples`` (given when a
    logged timeout is decided again)."""
    level = domain_bots.policy_level(policy) or ""
    kind = domain_bots.replacement_kind(state.game_type, level)
    rng = domain_bots.bot_rng(state.config.seed, seat, state.version)
    bot = domain_bots.bot_for(state.game_type, kind).play
    legal = session.rules.legal_actions(state.game, seat)
    if isinstance(bot, domain_bots.StrongBot) and len(legal) > 1:
        budget = bot.budget
        if samples is not None:
            budget = dataclasses.replace(budget, samples=samples)
        return search.think(
            session.rules,
            state.game,
            seat,
            legal,
            bot.heuristic,
            rng,
            budget,
            out_of_time,
        )
    return domain_bots.bot_move(session.rules, state.game, seat, bot, rng), 0


def check_timeout(
    session: Session[Any],
    events: Sequence[Stamped],
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
        return f"seat {seat_number(seat)}'s time had not run out at {at.isoformat()}"
    policy = str(note.get("policy", ""))
    if domain_bots.policy_level(policy) is not None and state is not None:
        try:
            samples = note.get("samples")
            again, _ = timeout_move(
                session, state, seat, policy, None if samples is None else int(samples)
            )
        except ValueError as error:
            return f"the bot cannot decide again: {error}"
        if again != command:
            return "the bot decides another move now"
    return ""
