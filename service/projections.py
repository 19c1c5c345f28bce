"""Projections: read models rebuilt from the global log.

:class:`GameListProjection` keeps the game list (type, status, seats and who
holds them, version, winners, result, characters, created and finished
times, and the log position of the game's first event: the list's order)
behind ListGames and the per-game-type statistics. It folds each game's
events with the game's own rules (it needs them for the characters and the
outcome), and writes each batch with its checkpoint in one transaction
(:class:`eventstore.base.ReadModels`: the store keeps the rows and the
checkpoint, :class:`GameListRows` says what the rows are), so it never skips
an event nor applies one twice, even when killed mid-batch or run by several
replicas.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

import structlog
from sqlalchemy import func, literal, select, tuple_

from domain import registry
from domain.session import LIFECYCLE_EVENTS, GameCreated, Session, SessionState
from eventstore.base import EventStore, ReadModels, RecordedEvent
from eventstore.tables import game_list
from service import telemetry
from service.outages import OutageLog

log = structlog.get_logger("strata.projections")

#: After how long a catch-up held back short of the log's end says so
#: (:meth:`GameListProjection.run_until_caught_up`).
HELD_BACK_WARNING = 5.0

GAME_LIST = "game_list"


@dataclasses.dataclass(frozen=True)
class ListedSeat:
    """A seat as the game list shows it: free, or who took it."""

    taken: bool = False
    name: str = ""
    bot: str = ""
    left: bool = False


def listed_seats(state: SessionState[Any]) -> tuple[ListedSeat, ...]:
    """Every seat of a game: free, or who took it (a bot, a player who
    left). What ListGames and GetGame show of the seats."""
    return tuple(
        ListedSeat()
        if s is None
        else ListedSeat(taken=True, name=s.name, bot=s.bot, left=i in state.left)
        for i, s in enumerate(state.seats)
    )


def _seats_json(seats: tuple[ListedSeat, ...]) -> str:
    return json.dumps([[s.name, s.bot, s.left] if s.taken else None for s in seats])


def _seats_from_json(text: str | None) -> tuple[ListedSeat, ...] | None:
    if text is None:
        return None  # a row written before the seats were kept
    return tuple(
        ListedSeat() if s is None else ListedSeat(True, s[0], s[1], s[2])
        for s in json.loads(text)
    )


@dataclasses.dataclass(frozen=True)
class GameRow:
    """One game in the game list."""

    game_id: str
    game_type: str
    status: str
    players: int
    seats_taken: int
    version: int
    winners: tuple[int, ...]
    result: str
    characters: dict[int, str]
    created_at: datetime
    finished_at: datetime | None
    #: The log position of the game's first event: the list's order.
    created_position: int
    #: None: a row written before the read model kept the seats.
    seats: tuple[ListedSeat, ...] | None = None

    def values(self) -> dict[str, Any]:
        """The row as the ``game_list`` table holds it."""
        return {
            "game_id": self.game_id,
            "game_type": self.game_type,
            "status": self.status,
            "players": self.players,
            "seats_taken": self.seats_taken,
            "version": self.version,
            "winners": self._winners(),
            "result": self.result,
            "characters": self._characters(),
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "created_position": self.created_position,
            "seats": None if self.seats is None else _seats_json(self.seats),
        }

    def _winners(self) -> str:
        return json.dumps(list(self.winners))

    def _characters(self) -> str:
        return json.dumps({str(k): v for k, v in self.characters.items()})


def _game_row(row: Any) -> GameRow:
    return GameRow(
        game_id=row.game_id,
        game_type=row.game_type,
        status=row.status,
        players=row.players,
        seats_taken=row.seats_taken,
        version=row.version,
        winners=tuple(json.loads(row.winners)),
        result=row.result,
        characters={int(k): v for k, v in json.loads(row.characters).items()},
        created_at=row.created_at,
        finished_at=row.finished_at,
        created_position=row.created_position,
        seats=_seats_from_json(row.seats),
    )


class _Game:
    """What the projection remembers of a game while it is in the log."""

    def __init__(
        self, session: Session[Any], state: SessionState[Any], created: RecordedEvent
    ) -> None:
        """``created``: the game's first event, as recorded."""
        self.session = session
        self.state = state
        self.created_at = created.recorded_at
        self.created_position = created.position
        self.finished_at: datetime | None = None
        # The game's own events that change nothing the row shows: when its
        # rules name the events that can change the characters, the others
        # only move the version (no decoding, no folding).
        rules = session.rules
        keep = rules.character_events
        own = {t.__name__ for t in rules.event_types} - _LIFECYCLE
        self._skip = (
            frozenset() if keep is None else frozenset(own - {t.__name__ for t in keep})
        )

    def fold(self, events: list[RecordedEvent]) -> None:
        """Take ``events``, the game's next events in version order, into
        the state (those it has folded already are passed over). A run of
        skipped events moves the version once, before the next event folded
        or at the end; they cannot end the game (GameFinished is never
        skipped), so the outcome and ``finished_at`` are seen as before."""
        session, skip = self.session, self._skip
        state = self.state
        version = state.version
        for recorded in events:
            if recorded.version <= version:
                continue
            version = recorded.version
            if recorded.type in skip:
                continue
            if state.version != version - 1:
                state = dataclasses.replace(state, version=version - 1)
            event = session.decode_event(
                recorded.type, recorded.data, recorded.schema_version
            )
            state = session.evolve(state, event)
            if state.outcome is not None and self.finished_at is None:
                self.finished_at = recorded.recorded_at
        if state.version != version:
            state = dataclasses.replace(state, version=version)
        self.state = state


_LIFECYCLE = frozenset(t.__name__ for t in LIFECYCLE_EVENTS)


def _models_of(store: EventStore) -> GameListRows:
    models = store.read_models()
    if models is None:
        raise ValueError("this store keeps no read models (use a SQL store)")
    return GameListRows(models)


class GameListProjection:
    """The game list, followed from the global log."""

    def __init__(
        self,
        store: EventStore,
        batch: int = 500,
        cache: int = 10_000,
        linger: float = 0.2,
    ) -> None:
        self.store = store
        self.linger = linger
        self._waiters = 0
        self.models = _models_of(store)
        self.batch = batch
        self._games: OrderedDict[str, _Game | None] = OrderedDict()
        self._cache = cache
        self._caught_up = threading.Condition()
        self.position = self.models.checkpoint(GAME_LIST)

    # -- running --------------------------------------------------------------

    def run_once(self) -> int:
        """Apply the next batch; returns how many events it covered (0: the
        projection is at the end of the log)."""
        start = self.models.checkpoint(GAME_LIST)
        if start != self.position:
            self._games.clear()  # another runner moved on: our memory is stale
        events = self.store.read_all(start, self.batch)
        if not events:
            self.position = start
            self.wake()
            return 0
        end = events[-1].position
        try:
            with telemetry.background("strata.projection.apply") as span:
                span.set_attribute("strata.events", len(events))
                rows = self._rows(events)
                applied = self.models.apply_game_rows(GAME_LIST, start, end, rows)
        except BaseException:
            self._games.clear()  # folded ahead of the checkpoint: forget it
            raise
        if not applied:
            self._games.clear()
            self.position = self.models.checkpoint(GAME_LIST)
            return 0
        self.position = end
        self.wake()
        return len(events)

    def run_until_caught_up(self, progress: Callable[[int], None] | None = None) -> int:
        """Apply batches until the end of the log as it is when called;
        returns events applied. A read that stops short of that end is held
        back (on PostgreSQL by a transaction running anywhere in the
        cluster, another database's included): it is read again until the
        transaction ends, with a warning if that takes long."""
        end = self.store.last_position()
        total = 0
        held_since: float | None = None
        while True:
            applied = self.run_once()
            if applied:
                total += applied
                held_since = None
                if progress is not None:
                    progress(applied)
                continue
            if self.position >= end:
                return total
            now = time.monotonic()
            if held_since is None:
                held_since = now
            elif now - held_since > HELD_BACK_WARNING:
                log.warning(
                    "projection.held_back",
                    position=self.position,
                    end=end,
                    hint="a transaction running elsewhere in the database "
                    "cluster holds the log back; this goes on when it ends",
                )
                held_since = now
            # The store's wait knows a commit held back and wakes soon.
            self.store.wait_for_append(self.position, 1.0)

    def run_forever(self, stop: threading.Event, idle: float = 0.25) -> None:
        """Follow the log until ``stop`` (noticed within ``idle`` seconds,
        the longest it waits for an append); survives database outages."""
        outage = OutageLog(log, "projection")
        while not stop.is_set():
            try:
                applied = self.run_once()
                outage.ok()
                if applied >= self.batch:
                    continue  # more of the log is there to read now
                if applied or self.store.wait_for_append(self.position, idle):
                    self._linger(stop)
            except Exception as error:
                outage.failed(error)
                stop.wait(idle)

    def rebuild(self, progress: Callable[[int], None] | None = None) -> int:
        """Empty the read model and apply the whole log from position zero."""
        self.models.reset(GAME_LIST)
        self._games.clear()
        self.position = 0
        return self.run_until_caught_up(progress)

    def wait_for(self, position: int, timeout: float = 10.0) -> bool:
        """Block until the projection has applied ``position``."""
        with self._caught_up:
            self._waiters += 1
            self._caught_up.notify_all()  # cut a linger short: someone waits
            try:
                return self._caught_up.wait_for(
                    lambda: self.position >= position, timeout
                )
            finally:
                self._waiters -= 1

    def _linger(self, stop: threading.Event) -> None:
        """Let more appends arrive before the next batch, unless a reader
        waits: under load one batch (a read, a write, a commit) then covers
        many appends instead of one each. Also after a batch that reached
        the end of the log: under a steady stream of appends the log is
        never found quiet, and the projection would follow it one append
        a batch."""
        with self._caught_up:
            self._caught_up.wait_for(
                lambda: self._waiters > 0 or stop.is_set(), self.linger
            )

    def wake(self) -> None:
        """Wake whoever waits on the projection: a reader waiting for a
        position, the projection lingering (it looks at its ``stop`` again)."""
        with self._caught_up:
            self._caught_up.notify_all()

    # -- folding --------------------------------------------------------------

    def _rows(self, events: list[RecordedEvent]) -> list[GameRow]:
        by_game: dict[str, list[RecordedEvent]] = {}
        for recorded in events:
            by_game.setdefault(recorded.game_id, []).append(recorded)
        rows = []
        for game_id, recorded_events in by_game.items():
            game = self._game(recorded_events[0])
            if game is None:
                continue
            game.fold(recorded_events)
            rows.append(self._row(game_id, game))
        return rows

    def _game(self, recorded: RecordedEvent) -> _Game | None:
        """The game of ``recorded`` as folded so far (None: not a game this
        service runs, remembered as such so its stream is read only once)."""
        if recorded.game_id in self._games:
            self._games.move_to_end(recorded.game_id)
            return self._games[recorded.game_id]
        if recorded.version == 1:
            created = recorded
            earlier: list[RecordedEvent] = []
        else:  # the game began before this run: fold it up to here
            earlier = self.store.read_stream(recorded.game_id, 1, recorded.version - 1)
            created = earlier[0]
        try:
            session = registry.session_for(
                created.data.get("game_type", ""), created.data.get("rules_version")
            )
        except KeyError:
            # A game type, or a rules version, this service does not run.
            self._remember(recorded.game_id, None)
            return None
        state = session.evolve(
            None,
            session.decode_event(created.type, created.data, created.schema_version),
        )
        game = _Game(session, state, created)
        game.fold(earlier[1:])
        self._remember(recorded.game_id, game)
        return game

    def _remember(self, game_id: str, game: _Game | None) -> None:
        self._games[game_id] = game
        while len(self._games) > self._cache:
            self._games.popitem(last=False)

    @staticmethod
    def _row(game_id: str, game: _Game) -> GameRow:
        state = game.state
        outcome = state.outcome
        try:
            characters = game.session.rules.characters(state.game)
        except Exception:  # a game's characters are a nicety, never a failure
            characters = {}
        return GameRow(
            game_id=game_id,
            game_type=state.game_type,
            status=state.status.value,
            players=len(state.seats),
            seats_taken=sum(1 for s in state.seats if s is not None),
            version=state.version,
            winners=() if outcome is None else outcome.winners,
            result="" if outcome is None else outcome.result,
            characters=dict(characters),
            created_at=game.created_at,
            finished_at=game.finished_at,
            created_position=game.created_position,
            seats=listed_seats(state),
        )


class GameListRows:
    """The game list's rows in the store's read models: the projection's
    writes (with its checkpoint) and the API's reads."""

    def __init__(self, models: ReadModels) -> None:
        self.models = models

    def checkpoint(self, name: str = GAME_LIST) -> int:
        return self.models.checkpoint(name)

    def apply_game_rows(
        self, name: str, from_position: int, to_position: int, rows: Sequence[GameRow]
    ) -> bool:
        """Upsert ``rows`` and move the checkpoint, together or not at all
        (:meth:`ReadModels.apply`)."""
        return self.models.apply(
            name, from_position, to_position, game_list, [r.values() for r in rows]
        )

    def reset(self, name: str = GAME_LIST) -> None:
        self.models.reset(name, game_list)

    def game(self, game_id: str) -> GameRow | None:
        rows = self.models.query(
            select(game_list).where(game_list.c.game_id == game_id)
        )
        return _game_row(rows[0]) if rows else None

    def list_games(self, at_least: int = 0, **filters: Any) -> list[GameRow]:
        """The games :func:`list_query` lists with ``filters``; with
        ``at_least``, from a standby whose copy has applied that position
        (:meth:`ReadModels.query_nearby`)."""
        query = list_query(**filters)
        return [_game_row(r) for r in self._query(query, at_least)]

    def _query(self, query: Any, at_least: int) -> list[Any]:
        if at_least:
            return self.models.query_nearby(query, GAME_LIST, at_least)
        return self.models.query(query)

    def all_games(self) -> list[GameRow]:
        """Every row, in id order (for comparing rebuilt and live models)."""
        query = select(game_list).order_by(game_list.c.game_id)
        return [_game_row(r) for r in self.models.query(query)]

    def statistics(
        self, game_type: str = "", at_least: int = 0
    ) -> list[dict[str, Any]]:
        """Per-game-type statistics over the game list (``at_least``: as
        :meth:`list_games`)."""
        query = select(
            game_list.c.game_type,
            game_list.c.status,
            game_list.c.version,
            game_list.c.winners,
            game_list.c.result,
            game_list.c.characters,
        )
        if game_type:
            query = query.where(game_list.c.game_type == game_type)
        by_type: dict[str, dict[str, Any]] = {}
        for row in self._query(query, at_least):
            stats = by_type.setdefault(
                row.game_type,
                {
                    "game_type": row.game_type,
                    "games": 0,
                    "finished": 0,
                    "active": 0,
                    "open": 0,
                    "lengths": [],
                    "wins_by_seat": {},
                    "wins_by_character": {},
                    "results": {},
                },
            )
            stats["games"] += 1
            stats[row.status] += 1
            if row.status == "finished":
                stats["lengths"].append(row.version)
                stats["results"][row.result] = stats["results"].get(row.result, 0) + 1
                characters = json.loads(row.characters)
                for seat in json.loads(row.winners):
                    stats["wins_by_seat"][seat] = stats["wins_by_seat"].get(seat, 0) + 1
                    name = characters.get(str(seat))
                    if name:
                        stats["wins_by_character"][name] = (
                            stats["wins_by_character"].get(name, 0) + 1
                        )
        return [by_type[k] for k in sorted(by_type)]

    def count(self) -> int:
        query = select(func.count()).select_from(game_list)
        return int(self.models.query(query)[0][0])


def list_query(
    game_type: str = "",
    status: str = "",
    after: str = "",
    limit: int = 50,
    newest_first: bool = False,
    players: int = 0,
    open_seats: bool = False,
) -> Any:
    """Games in creation order (by the position of their first event, then
    by id), filtered (``players``: of that many seats; ``open_seats``: with
    a seat free), from after the game ``after`` (with ``newest_first``, in
    reverse order from before it; ``after`` is looked up in the same query:
    a game not in the list lists nothing). Each filter has an index in
    creation order (revision 0006): a page reads about a page of rows
    however few games match.
    """
    order = (game_list.c.created_position, game_list.c.game_id)
    query = select(game_list)
    if after:
        anchor = tuple_(
            select(game_list.c.created_position)
            .where(game_list.c.game_id == after)
            .scalar_subquery(),
            literal(after),
        )
        key = tuple_(*order)
        query = query.where(key < anchor if newest_first else key > anchor)
    if game_type:
        query = query.where(game_list.c.game_type == game_type)
    if status:
        query = query.where(game_list.c.status == status)
    if players:
        query = query.where(game_list.c.players == players)
    if open_seats:
        query = query.where(game_list.c.seats_taken < game_list.c.players)
    if newest_first:
        query = query.order_by(*(c.desc() for c in order))
    else:
        query = query.order_by(*order)
    return query.limit(limit)


class GameList(Protocol):
    """What the API reads of the game list: the read model, how far it has
    applied the log, and a way to wait until it has applied a position."""

    models: GameListRows

    @property
    def position(self) -> int: ...

    def wait_for(self, position: int, timeout: float = 10.0) -> bool: ...


class GameListReader:
    """The game list kept by a projection that runs elsewhere (``strata
    worker``, another replica): it reads the read model and waits by
    polling the projection's checkpoint."""

    def __init__(self, store: EventStore, poll: float = 0.01) -> None:
        self.models = _models_of(store)
        self.poll = poll

    @property
    def position(self) -> int:
        return self.models.checkpoint(GAME_LIST)

    def wait_for(self, position: int, timeout: float = 10.0) -> bool:
        """Wait until the projection has applied ``position``."""
        deadline = time.monotonic() + timeout
        while self.position < position:
            if time.monotonic() >= deadline:
                return False
            time.sleep(self.poll)
        return True


__all__ = [
    "GAME_LIST",
    "GameCreated",
    "GameList",
    "GameListProjection",
    "GameListReader",
    "ListedSeat",
    "listed_seats",
]
