"""The bot runner: the service plays its own bot seats, as its own client.

A seat taken at creation by a bot (``CreateGameRequest.bots``) has an empty
token hash, so no token acts for it; the runner does. It follows the global
log (``read_all_matching`` / ``wait_for_append``, from position 0 at
start-up, so games in play when the service stopped go on), remembers the
games that have bot seats and are not finished, and whenever one of them
changes and a bot seat may act, it asks that seat's bot for a move (from
the seat's view, through :func:`domain.bots.bot_move`) and submits it
through :meth:`GameApp.submit` like any player. Of the log it reads only
the events that concern it (seats taken, games finished, the events of its
games): the others only move its position.

A bot thinks on the runner's thread, never on the server's event loop, and
for at most ``STRATA_BOT_MOVE_MS`` a move (the strong bot's search stops
there; :data:`~service.limits.DEFAULT_BOT_MOVE_MS`), so a strong bot never
stalls a table; ``strata.bot.think`` (``strata_bot_think_seconds``) records
how long each move took to choose.

When several bot seats may act, the lowest acts first, one move per game
per pass: the move's own events wake the runner for the next one. The
command id is derived from the seat and the version the move was decided
at, and the version is pinned (``expected_version``): two replicas running
this loop cannot both move, because the second gets the first's outcome
(same command id) or ABORTED (the game moved on), and nothing is appended.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

import structlog

from domain import bots as domain_bots
from domain.errors import DomainError
from domain.session import GameFinished, PlayerJoined, SeatLeft, Status
from eventstore.base import RecordedEvent, StoreError
from service import telemetry
from service.application import GameApp
from service.buckets import TokenBuckets
from service.callers import Caller
from service.commands import BOT_COMMAND_PREFIX, IN_PROCESS
from service.errors import Aborted, AppError
from service.limits import (
    DEFAULT_BOT_MOVE_MS,
    DEFAULT_BOT_MOVES_PER_SECOND,
    DEFAULT_BOT_THINK_SHARE,
    deadline_after,
)
from service.outages import OutageLog

log = structlog.get_logger("strata.bots")

#: The bot runner acting for the bot seats.
RUNNER = Caller(bot=True)

#: The event types the runner reads of every game: a seat taken (by a bot
#: or not), a seat left (perhaps to a bot), a game finished. Of its own
#: games it reads every event.
_JOINED, _FINISHED = PlayerJoined.__name__, GameFinished.__name__
_LEFT = SeatLeft.__name__
_TRACKED = (_JOINED, _LEFT, _FINISHED)


def command_id(seat: int, version: int) -> str:
    """The id of the bot's move for ``seat`` decided at ``version``."""
    return f"{BOT_COMMAND_PREFIX}{seat}-at-{version}"


class BotRunner:
    """Plays every bot seat of every game, following the global log."""

    def __init__(
        self,
        app: GameApp,
        batch: int = 500,
        linger: float = 0.05,
        moves_per_creator: float = DEFAULT_BOT_MOVES_PER_SECOND,
        move_ms: float = DEFAULT_BOT_MOVE_MS,
        think_share: float = DEFAULT_BOT_THINK_SHARE,
    ) -> None:
        self.app = app
        #: Milliseconds a bot may think about one move.
        self.move_ms = move_ms
        self.batch = batch
        self.linger = linger
        self.position = 0
        self._games: set[str] = set()  # with a bot seat, not finished
        self._changed: set[str] = set()  # of those, changed since the last pass
        self.moves = 0
        #: Bot moves a second for one creator's games (the admin's: no
        #: bound): a caller who creates many bot games gets them played at
        #: this rate in all, and everyone else's at theirs.
        self._budget = TokenBuckets(moves_per_creator, max(moves_per_creator, 1) * 2)
        #: Seconds of thinking a second for one creator's games, charged
        #: with each move's think time: strong bots cost by the CPU they
        #: use, not by the move (20 strong moves a second would be 5 s of
        #: CPU a second from one caller).
        self._thinking = TokenBuckets(think_share, think_share * 4)
        self._creators: dict[str, str] = {}
        self.throttled = 0
        self._outage = OutageLog(log, "bots")
        #: When the latest event of each game with a bot seat was recorded:
        #: a move's delay is counted from it.
        self._last_event_at: dict[str, datetime] = {}
        meter = telemetry.meter()
        self._moved = meter.create_counter(
            "strata.bot.moves",
            description="Moves the bot seats made, by game type and bot",
        )
        self._delay = meter.create_histogram(
            "strata.bot.move.delay",
            unit="s",
            description="From the event that gave a bot seat its turn to its move "
            "(the bot runner's lag, as players feel it)",
        )
        self._think = meter.create_histogram(
            "strata.bot.think",
            unit="s",
            description="How long a bot seat took to choose its move "
            "(bounded by STRATA_BOT_MOVE_MS), by game type and bot",
        )

    def run_forever(self, stop: threading.Event, idle: float = 0.25) -> None:
        """Run until ``stop`` is set (noticed within ``idle`` seconds, the
        longest it waits for an append; errors are logged, then retried).

        While it plays games it reads the log as soon as anything is
        appended. While it plays none, nobody waits for a move, so it lets
        appends gather for ``linger`` before it reads: on a busy service
        without bot games that is one read every ``linger`` rather than one
        an append, and a new game's first bot move comes up to ``linger``
        later."""
        while not stop.is_set():
            try:
                done = self.run_once()
                self._outage.ok()
                if done >= self.batch or (done and self._games):
                    continue  # more of the log to read, or moves to follow
                # Games held back by their creator's budget: back soon.
                wait = min(idle, 0.05) if self._changed else idle
                woken = self.app.store.wait_for_append(self.position, wait)
                if woken and not self._games:
                    stop.wait(self.linger)
            except Exception as error:
                self._outage.failed(error)
                stop.wait(idle)

    def run_once(self) -> int:
        """Read the next events and, once at the end of the log, move for
        every changed game with an active bot seat. Returns the events read
        plus the moves made (0: nothing to do)."""
        read = self.app.store.read_all_matching(
            self.position, self.batch, _TRACKED, self._games
        )
        for event in read.events:
            self._track(event)
        self.position = read.through
        if read.scanned == self.batch:
            return read.scanned  # catch up before acting on stale games
        changed, self._changed = sorted(self._changed), set()
        moved = 0
        for index, game_id in enumerate(changed):
            try:
                with telemetry.background("strata.bots.move", game_id):
                    moved += self.move(game_id)
            except StoreError:
                self._changed.update(changed[index:])  # try again later
                raise
        return read.scanned + moved

    def _track(self, event: RecordedEvent) -> None:
        """Take in an event of a :data:`_TRACKED` type or of a remembered
        game (events of a game whose bot seat was taken earlier in the same
        read may be missing: that game is marked changed already)."""
        if event.type in (_JOINED, _LEFT) and event.data.get("bot"):
            self._games.add(event.game_id)
            self._changed.add(event.game_id)
        if event.type == _FINISHED:
            self._games.discard(event.game_id)
            self._changed.discard(event.game_id)
            self._creators.pop(event.game_id, None)
            self._last_event_at.pop(event.game_id, None)
        elif event.game_id in self._games:
            self._changed.add(event.game_id)
            self._last_event_at[event.game_id] = event.recorded_at

    def move(self, game_id: str) -> int:
        """Make the next bot move of ``game_id`` if a bot seat may act;
        returns 1 when a move was made, else 0."""
        loaded = self.app.load(game_id)
        state = loaded.state
        if state.status is not Status.ACTIVE:
            return 0
        kinds = {i: s.bot for i, s in enumerate(state.seats) if s is not None and s.bot}
        active = sorted(set(loaded.session.active_seats(state)) & set(kinds))
        if not active:
            return 0
        seat = active[0]
        if not self._may_move(game_id):
            self._changed.add(game_id)  # its creator's budget is spent: later
            return 0
        attributes = {"game_type": state.game_type, "bot": kinds[seat]}
        try:
            started = time.perf_counter()
            bot = domain_bots.bot_for(
                state.game_type, kinds[seat], out_of_time=deadline_after(self.move_ms)
            ).play
            command: Any = domain_bots.bot_move(
                loaded.rules,
                state.game,
                seat,
                bot,
                domain_bots.bot_rng(state.config.seed, seat, state.version),
            )
            thought = time.perf_counter() - started
            self._think.record(thought, attributes)
            self._charge(game_id, thought)
            self.app.submit(
                RUNNER,
                game_id,
                seat,
                command_id(seat, state.version),
                command,
                expected_version=state.version,
            )
        except Aborted:
            return 0  # the game moved on meanwhile: its new events wake us
        except (KeyError, ValueError, DomainError, AppError) as error:
            log.error(
                "bots.move_refused",
                game_id=game_id,
                seat=seat,
                version=state.version,
                error=str(error),
            )
            return 0
        self.moves += 1
        self._moved.add(1, attributes)
        since = self._last_event_at.get(game_id)
        if since is not None:
            delay = (datetime.now(UTC) - since).total_seconds()
            self._delay.record(max(delay, 0.0), attributes)
        return 1

    def _may_move(self, game_id: str) -> bool:
        """Take a move from the budget of the game's creator."""
        creator = self._creators.get(game_id)
        if creator is None:
            creator = self._creators[game_id] = self.app.host_of(game_id)[0]
        if creator in ("admin", IN_PROCESS):
            return True
        key = creator or "unknown"
        if self._thinking.take(key, 0.0) and self._budget.take(key):
            return True
        self.throttled += 1
        return False

    def _charge(self, game_id: str, seconds: float) -> None:
        """Charge a move's think time to the game's creator."""
        creator = self._creators.get(game_id) or "unknown"
        if creator not in ("admin", IN_PROCESS):
            self._thinking.charge(creator, seconds)
