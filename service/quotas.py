"""What one caller may hold at once: seats of games not yet started, timed
games not yet finished.

Each costs the service (a squatted lobby, a clock the timekeeper keeps) for
as long as it lasts, so each caller may hold a bounded number, per address
and per token (the admin, the bot runner and callers in process are not
counted). A caller about to take one first reserves it (:meth:`Holdings.
reserve`, atomic across the worker threads): the reservation counts while
the work is decided and appended, becomes the thing held when the work
succeeds and is given back when it fails. Counting what is held and then
acting (check, then act) let 40 racing joins from one address take 39 seats
against a bound of 8.

Kept in this process: a bound per replica, forgotten at a restart (what is
held ends by itself: games expire, start and finish).
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterator

from domain.session import Status
from service.callers import Caller
from service.errors import NotFound, ResourceExhausted
from service.games import Games


class Reservation:
    """One thing reserved for a caller: what it became, once it was taken."""

    def __init__(self) -> None:
        self.taken: tuple[Hashable, str] | None = None

    def took(self, item: Hashable, holder: str = "") -> None:
        """The work took ``item`` (for ``holder``: a seat's token hash)."""
        self.taken = (item, holder)


class Holdings:
    """The things of one kind each caller holds, at most ``bound`` per
    address and per token (0: no bound). ``held(item, holder)`` says whether
    an item is still held (asked only of a caller at its bound: what ended
    is forgotten then); ``refusal(count, bound)`` is the sentence of
    RESOURCE_EXHAUSTED ``reason``."""

    def __init__(
        self,
        bound: int,
        held: Callable[[Hashable, str], bool],
        reason: str,
        refusal: Callable[[int, int], str],
    ) -> None:
        self.bound = bound
        self._still_held = held
        self.reason = reason
        self._refusal = refusal
        self._held: dict[str, dict[Hashable, str]] = {}
        #: Work under way per key: reserved, not yet held or given back.
        self._pending: Counter[str] = Counter()
        self._lock = threading.Lock()

    @staticmethod
    def _keys(caller: Caller | None) -> list[str]:
        if caller is None or caller.admin or caller.bot or not caller.peer:
            return []
        keys = ["address:" + caller.peer]
        if caller.token:
            keys.append("token:" + caller.token_hash)
        return keys

    @contextlib.contextmanager
    def reserve(self, caller: Caller | None) -> Iterator[Reservation]:
        """Reserve one for ``caller`` (None: nobody counted) for the length
        of the block, or refuse with RESOURCE_EXHAUSTED when it holds and is
        taking as many as it may. The block records what it took on the
        reservation; one that took nothing (or raised) gives it back."""
        keys = self._keys(caller) if self.bound > 0 else []
        self._take(keys)
        reservation = Reservation()
        try:
            yield reservation
        finally:
            with self._lock:
                for key in keys:
                    self._pending[key] -= 1
                    if self._pending[key] <= 0:
                        del self._pending[key]
                    if reservation.taken is not None:
                        item, holder = reservation.taken
                        self._held.setdefault(key, {})[item] = holder

    def _take(self, keys: list[str]) -> None:
        """Count one under way for each key, or refuse; a key at its bound is
        looked at afresh once (what ended is forgotten) before a refusal."""
        count = 0
        for fresh in (False, True):
            with self._lock:
                full = [k for k in keys if self._count(k) >= self.bound]
                if not full:
                    for key in keys:
                        self._pending[key] += 1
                    return
                count = max(self._count(k) for k in full)
            if fresh:
                break
            for key in full:
                self._forget_ended(key)
        raise ResourceExhausted(self.reason, self._refusal(count, self.bound))

    def _count(self, key: str) -> int:
        return len(self._held.get(key, {})) + self._pending[key]

    def _forget_ended(self, key: str) -> None:
        """Forget what ``key`` no longer holds (read afresh: another replica
        may have seen it end)."""
        with self._lock:
            held = dict(self._held.get(key, {}))
        for item, holder in held.items():
            if not self._still_held(item, holder):
                with self._lock:
                    self._held.get(key, {}).pop(item, None)


def open_seats(games: Games, bound: int) -> Holdings:
    """Seats of games not yet started (``STRATA_MAX_OPEN_SEATS``): an item
    is (game id, seat), held by the seat token's hash."""

    def held(item: Hashable, token_hash: str) -> bool:
        assert isinstance(item, tuple)
        game_id, seat = str(item[0]), int(item[1])
        try:
            state = games.load(game_id).state
        except NotFound:
            return False
        info = state.seats[seat]
        return (
            state.status is Status.OPEN
            and info is not None
            and info.token_hash == token_hash
        )

    return Holdings(
        bound,
        held,
        "OPEN_SEATS_LIMIT",
        lambda count, most: (
            f"You hold or are taking {count} seats of games not "
            f"yet started (the limit is {most}); start or leave some first."
        ),
    )


def timed_games(games: Games, bound: int) -> Holdings:
    """Games created with a time control and not yet finished
    (``STRATA_MAX_TIMED_GAMES``): each is a clock the timekeeper keeps, and
    a caller who creates thousands makes everyone's timeouts late. An item
    is the game's id."""

    def held(item: Hashable, _: str) -> bool:
        try:
            return games.load(str(item)).state.status is not Status.FINISHED
        except NotFound:
            return False

    return Holdings(
        bound,
        held,
        "TIMED_GAMES_LIMIT",
        lambda count, most: (
            f"You created or are creating {count} games with a "
            f"time control that are not finished (the limit is {most}); finish or "
            "leave some first."
        ),
    )
