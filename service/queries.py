"""Looking at games: legal actions, watching, listing.

Everything is redacted for its viewer; watchers of one game share one
reader of the store (:mod:`service.fanout`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any

from domain.fairness import SeedRevealed, encode_event
from domain.rules import Viewer
from domain.seats import seat_number
from domain.session import GameCreated, GameFinished, Status
from eventstore.base import RecordedEvent
from service.callers import Caller
from service.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from service.fanout import GameFeeds
from service.games import Games, Loaded, decode_recorded
from service.projections import GameList, ListedSeat, listed_seats
from service.sharing import Recent

#: How many finished games' records :meth:`Queries.player_record_text` keeps.
RECORD_CACHE_SIZE = 64


def _page_token_invalid() -> InvalidArgument:
    return InvalidArgument(
        "PAGE_TOKEN_INVALID", "Not a page token of this call.", "page_token"
    )


def _record_page_start(token: str) -> int:
    """The first event index of the record page ``token`` names (0: none)."""
    if not token:
        return 0
    if token[:1] == "e" and token[1:].isdigit() and len(token) < 16:
        return int(token[1:])
    raise _page_token_invalid()


@dataclasses.dataclass(frozen=True)
class Listing:
    """One game as the game list shows it."""

    game_id: str
    game_type: str
    status: Status
    players: int
    seats_taken: int
    version: int
    winners: tuple[int, ...]
    result: str
    created_at: datetime | None
    finished_at: datetime | None
    #: None: not in the read model yet (a row older than its seats column).
    seats: tuple[ListedSeat, ...] | None = None


class Queries:
    """What a caller may see of games."""

    def __init__(self, games: Games) -> None:
        self.games = games
        self.store = games.store
        #: One reader a watched game, however many watch it.
        self.feeds = GameFeeds(games.store)
        #: The game list read model, when the service keeps one.
        self.game_list: GameList | None = None
        #: Live watchers' events, decoded and redacted, by (position, viewer).
        self._watched: Recent[tuple[Any, Any]] = Recent()
        #: Finished games' records as JSON text (:meth:`player_record_text`).
        self._records: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
        self._records_lock = threading.Lock()

    def legal_actions(
        self, caller: Caller, game_id: str, seat: int | None, refresh: bool = True
    ) -> tuple[Loaded, list[tuple[int, Any]]]:
        """The caller's seats' legal commands now (``refresh=False``: on the
        cached state, without asking the store for newer events)."""
        loaded = self.games.load(game_id, refresh, nearby=True)
        return loaded, self.actions_of(caller, loaded, seat)

    @staticmethod
    def actions_of(
        caller: Caller, loaded: Loaded, seat: int | None = None
    ) -> list[tuple[int, Any]]:
        """The legal commands of the caller's seats (or of ``seat``) in
        ``loaded``."""
        viewer = caller.viewer(loaded.state)
        seats: list[int] = (
            list(range(len(loaded.state.seats)))
            if caller.admin
            else sorted(viewer.seats)
        )
        if seat is not None:
            if seat not in seats:
                raise PermissionDenied(
                    "NOT_YOUR_SEAT",
                    f"Your token does not act for seat {seat_number(seat)}.",
                )
            seats = [seat]
        return [
            (s, command)
            for s in seats
            for command in loaded.session.legal_actions(loaded.state, s)
        ]

    async def watch_async(
        self, caller: Caller, game_id: str, from_version: int, follow: bool
    ) -> AsyncIterator[tuple[RecordedEvent, Any]]:
        """The game's events from ``from_version``, redacted for the caller;
        live until the game finishes when ``follow``. Reads run in the
        loop's default executor; no thread waits for the next event, and
        the watchers of one game share one reader (:mod:`service.fanout`)."""
        loaded = await asyncio.to_thread(self.games.look, game_id)
        session = loaded.session
        if not follow or loaded.state.status is Status.FINISHED:
            # A finished game has nothing more to follow.
            events = await asyncio.to_thread(
                self.games.events_through,
                game_id,
                max(from_version, 1),
                loaded.state.version,
            )
            viewer = caller.viewer(loaded.state)
            for recorded in events:
                yield (
                    recorded,
                    session.redact(decode_recorded(session, recorded), viewer),
                )
            return
        watched = self._watched

        def shared(recorded: RecordedEvent, viewer: Viewer) -> tuple[Any, Any]:
            """The event decoded and redacted for ``viewer``, once per
            (event, viewer class): the same objects for every watcher who
            sees alike (service.sharing)."""
            key = (recorded.position, viewer)
            found = watched.get(key)
            if found is None:
                decoded = decode_recorded(session, recorded)
                found = watched.put(key, (decoded, session.redact(decoded, viewer)))
            return found

        async for recorded in self.feeds.watch(game_id, max(from_version, 1)):
            # Seats only fill up: a state older than the cache's can only
            # make the caller see less.
            viewer = caller.viewer((self.games.cached(game_id) or loaded).state)
            event, redacted = shared(recorded, viewer)
            yield recorded, redacted
            if isinstance(event, GameFinished):
                # The game's ending (GameFinished, then SeedRevealed when it
                # reveals its seed) is appended at once: what follows it now
                # is the rest of the stream.
                rest = await asyncio.to_thread(
                    self.store.read_stream_nearby, game_id, recorded.version + 1
                )
                for after in rest:
                    yield after, shared(after, viewer)[1]
                return

    def replay(
        self, caller: Caller, game_id: str, from_version: int, to_version: int
    ) -> Iterator[tuple[RecordedEvent, Any, Loaded, Any]]:
        """The game step by step from ``from_version`` to ``to_version``
        (0: the first and the latest): each event with the game as it was
        after it, both redacted as the caller sees the game now, and that
        current state. Yields ``(recorded, redacted event, step, current
        state)``."""
        current = self.games.look(game_id)
        last = to_version or current.state.version
        first = from_version or 1
        if not 1 <= first <= last <= current.state.version:
            raise InvalidArgument(
                "VERSION_OUT_OF_RANGE",
                f"Versions must satisfy 1 <= from <= to <= {current.state.version}.",
                "from_version",
            )
        session = current.session
        viewer = caller.viewer(current.state)
        state = None
        for recorded in self.games.events_through(game_id, 1, last):
            event = decode_recorded(session, recorded)
            state = session.evolve(state, event)
            if recorded.version < first:
                continue
            step = dataclasses.replace(current, state=state)
            yield recorded, session.redact(event, viewer), step, current.state

    def player_record_text(
        self, caller: Caller, game_id: str, page_size: int = 0, page_token: str = ""
    ) -> tuple[str, str]:
        """:meth:`player_record` as compact JSON text, whole (``page_size``
        0) or a page of ``page_size`` events and the commands whose first
        event is among them; and the next page's token (empty on the last).
        A finished game's record changes only with a later event (a
        rematch's link), so it is kept per (game, version, what the caller
        may see): asked again, by the same or another player, it costs no
        read of the store (:data:`RECORD_CACHE_SIZE` records, the most
        recent)."""
        start = _record_page_start(page_token)
        record = self._record(caller, game_id)
        if page_size <= 0:
            return json.dumps(record, ensure_ascii=False, separators=(",", ":")), ""
        events = record["events"][start : start + page_size]
        if not events:
            raise InvalidArgument(
                "PAGE_TOKEN_INVALID", "The page token is past the record.", "page_token"
            )
        first, last = events[0]["version"], events[-1]["version"]
        page = {
            **record,
            "events": events,
            "commands": [
                c for c in record["commands"] if first <= c["first_version"] <= last
            ],
        }
        more = start + page_size < len(record["events"])
        text = json.dumps(page, ensure_ascii=False, separators=(",", ":"))
        return text, f"e{start + page_size}" if more else ""

    def _record(self, caller: Caller, game_id: str) -> dict[str, Any]:
        """The caller's record, from the cache or built (and kept)."""
        loaded = self.games.look(game_id)
        viewer = caller.viewer(loaded.state)
        key = (game_id, loaded.state.version, viewer.role, viewer.seats)
        with self._records_lock:
            record = self._records.get(key)
            if record is not None:
                self._records.move_to_end(key)
                return record
        record = self.player_record(caller, game_id, loaded)
        with self._records_lock:
            self._records[key] = record
            while len(self._records) > RECORD_CACHE_SIZE:
                self._records.popitem(last=False)
        return record

    def player_record(
        self, caller: Caller, game_id: str, loaded: Loaded | None = None
    ) -> dict[str, Any]:
        """The caller's own record of a finished game whose seed was
        revealed (:func:`domain.fairness.verify_record` checks it): its
        events as the caller sees them and the accepted command log, less
        the seat tokens' hashes."""
        loaded = loaded or self.games.look(game_id)
        state, session = loaded.state, loaded.session
        if state.status is not Status.FINISHED:
            raise FailedPrecondition(
                "GAME_NOT_FINISHED",
                "A game's record can be exported once it is over (its seed is "
                "secret until then).",
            )
        # The first event says whether the end revealed the seed: a refusal
        # reads no more than it.
        created = decode_recorded(session, self.store.read_stream(game_id, 1, 1)[0])
        revealed = isinstance(created, GameCreated) and created.reveal
        recorded = (
            self.games.events_through(game_id, 1, state.version) if revealed else []
        )
        events = [decode_recorded(session, r) for r in recorded]
        if not any(isinstance(e, SeedRevealed) for e in events):
            raise FailedPrecondition(
                "SEED_NOT_REVEALED",
                "This game did not reveal its seed (created before commitments, "
                "or with keep_seed_secret), so it cannot be verified offline.",
            )
        viewer = caller.viewer(state)
        commands = []
        time_control: Any = None
        for command in self.store.read_commands(game_id):
            outcome = command.outcome
            if outcome.accepted and outcome.first_version == 1:
                # The creation (GameCreated is in events): its time control.
                time_control = (command.payload.get("command") or {}).get(
                    "time_control"
                )
            if not outcome.accepted or outcome.first_version < 2:
                continue  # refused, or the creation
            payload = command.payload
            body = dict(payload.get("command") or {})
            body.pop("token_hash", None)
            logged = {
                "first_version": outcome.first_version,
                "last_version": outcome.last_version,
                "type": payload["type"],
                "seat": payload["seat"],
                "command": body,
            }
            if "timeout" in payload:
                # The service's own move on expiry, and the instant it
                # decided: the offline verifier checks the time had run out.
                logged["timeout"] = payload["timeout"]
            commands.append(logged)
        return {
            "format": "strata-player-record-v1",
            "game_id": game_id,
            "game_type": state.game_type,
            "rules_version": state.rules_version,
            "role": viewer.role.value,
            "seats": sorted(viewer.seats),
            "events": [
                {
                    "version": r.version,
                    "at": r.recorded_at.isoformat(),
                    **encode_event(session.redact(e, viewer)),
                }
                for r, e in zip(recorded, events, strict=True)
            ],
            "commands": commands,
            **({"time_control": time_control} if time_control else {}),
        }

    def list_games(
        self,
        game_type: str,
        status: Status | None,
        page_size: int,
        page_token: str,
        newest_first: bool = False,
        players: int = 0,
        open_seats: bool = False,
    ) -> tuple[list[Listing], str]:
        """Games in creation order (the log position of each game's first
        event: the order they were created or imported in, whatever their
        ids), or the reverse with ``newest_first``, filtered (by type,
        status, ``players`` seats, a seat free with ``open_seats``) before
        the page is cut, a page at a time: from the game list read model
        when the service keeps one (read your writes: it first catches up
        with the log), else by folding each game. The page token is the
        last game listed; one naming no game in the list is
        INVALID_ARGUMENT (``PAGE_TOKEN_INVALID``)."""
        page_size = 50 if page_size <= 0 else min(page_size, 500)
        if self.game_list is None:
            return self._list_games_by_folding(
                game_type,
                status,
                page_size,
                page_token,
                newest_first,
                players,
                open_seats,
            )
        # The log's end on the primary: the caller's writes, wherever made.
        self.game_list.wait_for(self.store.last_position(), timeout=2.0)
        rows = self.game_list.models.list_games(
            game_type=game_type,
            status="" if status is None else status.value,
            after=page_token,
            limit=page_size + 1,
            # From a standby that has applied as much (read your writes).
            at_least=self.game_list.position,
            newest_first=newest_first,
            players=players,
            open_seats=open_seats,
        )
        if not rows and page_token and self.game_list.models.game(page_token) is None:
            # The page starts after the token's game: none, no page.
            raise _page_token_invalid()
        more = len(rows) > page_size
        listed = [
            Listing(
                game_id=row.game_id,
                game_type=row.game_type,
                status=Status(row.status),
                players=row.players,
                seats_taken=row.seats_taken,
                version=row.version,
                winners=row.winners,
                result=row.result,
                created_at=row.created_at,
                finished_at=row.finished_at,
                seats=row.seats,
            )
            for row in rows[:page_size]
        ]
        return listed, listed[-1].game_id if more else ""

    def _list_games_by_folding(
        self,
        game_type: str,
        status: Status | None,
        page_size: int,
        page_token: str,
        newest_first: bool = False,
        players: int = 0,
        open_seats: bool = False,
    ) -> tuple[list[Listing], str]:
        ids = self._ids_in_creation_order()
        if newest_first:
            ids.reverse()
        start = 0
        if page_token:
            try:
                start = ids.index(page_token) + 1
            except ValueError:
                raise _page_token_invalid() from None
        out: list[Listing] = []
        for game_id in ids[start:]:
            try:
                loaded = self.games.load(game_id)
            except NotFound:
                continue
            state = loaded.state
            if game_type and state.game_type != game_type:
                continue
            if status is not None and state.status is not status:
                continue
            if players and len(state.seats) != players:
                continue
            if open_seats and None not in state.seats:
                continue
            outcome = state.outcome
            out.append(
                Listing(
                    game_id=game_id,
                    game_type=state.game_type,
                    status=state.status,
                    players=len(state.seats),
                    seats_taken=sum(1 for s in state.seats if s is not None),
                    version=state.version,
                    winners=() if outcome is None else tuple(outcome.winners),
                    result="" if outcome is None else outcome.result,
                    created_at=loaded.created_at,
                    finished_at=None,
                    seats=listed_seats(state),
                )
            )
            if len(out) == page_size:
                return out, game_id
        return out, ""

    def _ids_in_creation_order(self) -> list[str]:
        """Every game id, oldest first: by the log position of each game's
        first event, as the read model orders them. A store without read
        models (the in-memory one) has no index of it, so this walks its
        games and reads each one's first event."""
        first: list[tuple[int, str]] = []
        after = ""
        while batch := self.store.list_streams(after, 1000):
            for game_id in batch:
                events = self.store.read_stream(game_id, 1, 1)
                if events:
                    first.append((events[0].position, game_id))
            after = batch[-1]
        return [game_id for _, game_id in sorted(first)]
