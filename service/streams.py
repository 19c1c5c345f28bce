"""Open streams by the bounds they count in, and who is shed first.

A stream (``WatchGame``, ``ReplayGame``, ``FollowLog``) counts in the
service's bound (``all``), its address's, its token's (by digest) and its
game's. A stream over a bound sheds an older stream of a lower rank
(:data:`RANK_ANONYMOUS` < :data:`RANK_PLAYER` < :data:`RANK_ADMIN`) in that
bound, the oldest first; over its own address's or token's bound, the
caller's own oldest stream of the same rank. :class:`service.limits.Limits`
decides the keys and bounds; the service's shutdown ends them all
(:meth:`StreamSlots.stop_all`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections import Counter, OrderedDict
from collections.abc import Mapping

from service.errors import Refusal, ResourceExhausted, classify

#: A stream's rank: who is shed first when a bound is full.
RANK_ANONYMOUS = 0
#: A seat's player watching its own game, or an integration.
RANK_PLAYER = 1
RANK_ADMIN = 2


@dataclasses.dataclass(eq=False)
class StreamSlot:
    """An open stream: its rank (:data:`RANK_ANONYMOUS` for no token or a
    token the service does not know, :data:`RANK_PLAYER` for a seat of the
    game or an integration, :data:`RANK_ADMIN`), the bounds it counts in,
    and how to stop it."""

    rank: int
    keys: tuple[str, ...]
    method: str
    #: Resolved when the stream is shed (the door's stream waits on it
    #: beside the next response).
    stopper: asyncio.Future[None] | None
    shed: bool = False
    #: Stopped because the service shuts down (not shed for another).
    stopped: bool = False

    def shed_refusal(self) -> Refusal:
        refusal = classify(
            ResourceExhausted(
                "STREAM_SHED",
                "This stream was closed to make room for another; reconnect "
                "later (and resume from the last version or position).",
            )
        )
        assert refusal is not None
        return refusal


class StreamSlots:
    """The open streams, by the bounds they count in (``all``, ``address:…``,
    ``token:…``, ``game:…``), oldest first."""

    def __init__(self) -> None:
        self._by_key: dict[str, OrderedDict[int, StreamSlot]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_key.get("all", ()))

    def count(self, key: str) -> int:
        with self._lock:
            return len(self._by_key.get(key, ()))

    def by_method(self) -> Counter[str]:
        """Open streams by method."""
        with self._lock:
            return Counter(s.method for s in self._by_key.get("all", {}).values())

    def open(self, slot: StreamSlot, bounds: Mapping[str, int]) -> None:
        """Count ``slot`` in its bounds (``bounds``: key -> bound, 0 for
        none), shedding the streams it displaces; TOO_MANY_STREAMS when it
        cannot be let in."""
        with self._lock:
            victims: list[StreamSlot] = []
            for key in slot.keys:
                bound = bounds.get(key, 0)
                held = self._by_key.get(key)
                if bound <= 0 or held is None or len(held) < bound:
                    continue
                # The caller's own bound: its own oldest stream goes.
                own = key.startswith(("address:", "token:"))
                eligible = [
                    s
                    for s in held.values()
                    if s not in victims
                    and (s.rank < slot.rank or (own and s.rank == slot.rank))
                ]
                if not eligible:
                    raise ResourceExhausted(
                        "TOO_MANY_STREAMS",
                        "Too many streams are open "
                        + ("from here" if own else "on this service or game")
                        + "; close one, or try again later.",
                    )
                # The lowest rank first; of those, the oldest.
                victims.append(min(eligible, key=lambda s: s.rank))
            for victim in victims:
                self._remove(victim)
                victim.shed = True
                stopper = victim.stopper
                if stopper is not None:
                    stopper.get_loop().call_soon_threadsafe(_resolve, stopper)
            for key in slot.keys:
                self._by_key.setdefault(key, OrderedDict())[id(slot)] = slot

    def close(self, slot: StreamSlot) -> None:
        with self._lock:
            self._remove(slot)

    def stop_all(self) -> None:
        """End every open stream (the service shuts down)."""
        with self._lock:
            slots = list(self._by_key.get("all", {}).values())
        for slot in slots:
            slot.stopped = True
            stopper = slot.stopper
            if stopper is not None:
                stopper.get_loop().call_soon_threadsafe(_resolve, stopper)

    def _remove(self, slot: StreamSlot) -> None:
        for key in slot.keys:
            held = self._by_key.get(key)
            if held is not None:
                held.pop(id(slot), None)
                if not held:
                    del self._by_key[key]


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
