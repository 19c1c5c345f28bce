"""Looking at games: legal actions, watching, listing.

Everything is redacted for its viewer; watchers of one game share one
reader of the store (:mod:`service.fanout`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from domain.session import GameFinished, Status
from eventstore.base import RecordedEvent
from service.callers import Caller
from service.errors import NotFound, PermissionDenied
from service.fanout import GameFeeds
from service.games import Games, Loaded, decode_recorded


class Queries:
    """What a caller may see of games."""

    def __init__(self, games: Games) -> None:
        self.games = games
        self.store = games.store
        #: One reader a watched game, however many watch it.
        self.feeds = GameFeeds(games.store)

    def legal_actions(
        self, caller: Caller, game_id: str, seat: int | None, refresh: bool = True
    ) -> tuple[Loaded, list[tuple[int, Any]]]:
        """The caller's seats' legal commands now (``refresh=False``: on the
        cached state, without asking the store for newer events)."""
        loaded = self.games.load(game_id, refresh)
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
                    "NOT_YOUR_SEAT", f"Your token does not act for seat {seat}."
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
        loaded = await asyncio.to_thread(self.games.load, game_id)
        session = loaded.session
        if not follow:
            events = await asyncio.to_thread(
                self.store.read_stream, game_id, max(from_version, 1)
            )
            viewer = caller.viewer(loaded.state)
            for recorded in events:
                yield (
                    recorded,
                    session.redact(decode_recorded(session, recorded), viewer),
                )
            return
        async for recorded in self.feeds.watch(game_id, max(from_version, 1)):
            event = decode_recorded(session, recorded)
            # Seats only fill up: a state older than the cache's can only
            # make the caller see less.
            viewer = caller.viewer((self.games.cached(game_id) or loaded).state)
            yield recorded, session.redact(event, viewer)
            if isinstance(event, GameFinished):
                return

    def list_games(
        self, game_type: str, status: Status | None, page_size: int, page_token: str
    ) -> tuple[list[Loaded], str]:
        """Games in id (creation) order with paging."""
        page_size = 50 if page_size <= 0 else min(page_size, 500)
        out: list[Loaded] = []
        after = page_token
        while len(out) < page_size:
            ids = self.store.list_streams(after, 200)
            if not ids:
                after = ""
                break
            for game_id in ids:
                after = game_id
                try:
                    loaded = self.games.load(game_id)
                except NotFound:
                    continue
                if game_type and loaded.state.game_type != game_type:
                    continue
                if status is not None and loaded.state.status is not status:
                    continue
                out.append(loaded)
                if len(out) == page_size:
                    break
        return out, after if len(out) == page_size else ""
