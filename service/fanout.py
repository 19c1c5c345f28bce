"""One reader a watched game, however many watch it.

Following a game from the store costs a read every time anything is
appended anywhere (the store wakes every follower, which reads its game's
tail). A popular game with a thousand spectators would cost a thousand reads
an append. :class:`GameFeeds` runs one reader task per watched game, on the
event loop, and hands each event it reads to every watcher's queue.

A watcher joins the feed first, then reads what its feed may have passed
already (its ``from_version`` onwards) from the store, so no event falls
between the two; it skips what it has already seen, and fills any gap from
the store. A watcher too slow to keep up (its queue full) is dropped from
the feed and catches up from the store before it joins again: no watcher
slows the others, and none misses an event.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator

from eventstore.base import EventStore, RecordedEvent

#: Events a watcher's queue holds before the watcher counts as lagging.
QUEUE_SIZE = 256


@dataclasses.dataclass(eq=False)
class _Watcher:
    queue: asyncio.Queue[RecordedEvent | None]
    lagging: bool = False


class _Feed:
    """A game's reader and its watchers."""

    def __init__(self, feeds: GameFeeds, game_id: str, from_version: int) -> None:
        self.feeds = feeds
        self.game_id = game_id
        self.watchers: set[_Watcher] = set()
        self.reader = asyncio.create_task(self._read(from_version))

    def join(self) -> _Watcher:
        watcher = _Watcher(asyncio.Queue(QUEUE_SIZE))
        self.watchers.add(watcher)
        return watcher

    def leave(self, watcher: _Watcher) -> None:
        self.watchers.discard(watcher)
        if not self.watchers:
            self.reader.cancel()
            if self.feeds._feeds.get(self.game_id) is self:
                del self.feeds._feeds[self.game_id]

    async def _read(self, from_version: int) -> None:
        try:
            async for recorded in self.feeds.store.subscribe_stream_async(
                self.game_id, from_version
            ):
                for watcher in list(self.watchers):
                    try:
                        watcher.queue.put_nowait(recorded)
                    except asyncio.QueueFull:
                        watcher.lagging = True
                        self.watchers.discard(watcher)
        except Exception:
            # The store failed: the watchers read on from the store
            # themselves (which will say what is wrong).
            for watcher in list(self.watchers):
                watcher.lagging = True
                with contextlib.suppress(asyncio.QueueFull):
                    watcher.queue.put_nowait(None)
            self.watchers.clear()
            if self.feeds._feeds.get(self.game_id) is self:
                del self.feeds._feeds[self.game_id]


class GameFeeds:
    """The feeds of the games being watched (on one event loop)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._feeds: dict[str, _Feed] = {}

    def __len__(self) -> int:
        return len(self._feeds)

    def watchers(self, game_id: str) -> int:
        feed = self._feeds.get(game_id)
        return 0 if feed is None else len(feed.watchers)

    def _join(self, game_id: str, from_version: int) -> tuple[_Feed, _Watcher]:
        feed = self._feeds.get(game_id)
        if feed is None:
            feed = self._feeds[game_id] = _Feed(self, game_id, from_version)
        return feed, feed.join()

    async def watch(
        self, game_id: str, from_version: int = 1
    ) -> AsyncIterator[RecordedEvent]:
        """The game's events from ``from_version`` on, live, until the
        caller stops iterating."""
        next_version = max(from_version, 1)
        feed, watcher = self._join(game_id, next_version)
        try:
            while True:
                # What the feed may have passed before this watcher joined
                # (or while it lagged): from the store.
                stored = await asyncio.to_thread(
                    self.store.read_stream, game_id, next_version
                )
                for recorded in stored:
                    yield recorded
                    next_version = recorded.version + 1
                while True:
                    if watcher.lagging and watcher.queue.empty():
                        break
                    recorded_or_none = await watcher.queue.get()
                    if recorded_or_none is None:
                        break
                    recorded = recorded_or_none
                    if recorded.version < next_version:
                        continue  # seen already, from the store
                    if recorded.version > next_version:
                        gap = await asyncio.to_thread(
                            self.store.read_stream,
                            game_id,
                            next_version,
                            recorded.version - 1,
                        )
                        for missed in gap:
                            yield missed
                    yield recorded
                    next_version = recorded.version + 1
                # Lagging: catch up from the store, then join again.
                feed.leave(watcher)
                feed, watcher = self._join(game_id, next_version)
        finally:
            feed.leave(watcher)
