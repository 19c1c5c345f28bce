"""What the watchers of a game share: an event is decoded, redacted, made
into its answer and encoded once per (event, viewer class), not once per
watcher. A hundred spectators of one game cost about one.

Two bounded maps, most recently used kept; both are used on the event loop
only (no lock):

* :class:`Recent`, by key: the decoded and redacted event of a game's
  version for a viewer (the watch's use case);
* :class:`ByIdentity`, by the object itself: the answer made of a shared
  redacted event (the servicer), the JSON of a shared answer (the Connect
  codec). An entry holds its object, so its ``id`` is not reused while it
  is kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")

#: How many entries each map keeps: a few versions of every watched game.
SIZE = 4096


class Recent(Generic[V]):
    """A bounded map by key, the least recently used dropped first."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V) -> V:
        self._entries[key] = value
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._entries)


class ByIdentity(Generic[V]):
    """A bounded map by an object's identity (the object kept with it)."""

    def __init__(self, size: int = SIZE) -> None:
        self._recent: Recent[tuple[object, V]] = Recent(size)

    def get(self, of: object) -> V | None:
        entry = self._recent.get(id(of))
        return entry[1] if entry is not None and entry[0] is of else None

    def put(self, of: object, value: V) -> V:
        self._recent.put(id(of), (of, value))
        return value

    def __len__(self) -> int:
        return len(self._recent)
