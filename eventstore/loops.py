"""Waking coroutines from other threads: the store's threads (the group
committer, the append watcher) resolve futures that callers on event loops
await; :class:`AppendNotifier` wakes the waiters for appends, in threads
and on loops."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable


def resolve_on_their_loops(futures: Iterable[asyncio.Future[None]]) -> None:
    """Resolve ``futures`` from any thread, with one call into each loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
    for future in futures:
        by_loop.setdefault(future.get_loop(), []).append(future)
    for loop, some in by_loop.items():
        # RuntimeError: the loop closed, so nobody awaits these any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_resolve, some)


def _resolve(futures: list[asyncio.Future[None]]) -> None:
    for future in futures:
        if not future.done():  # a cancelled or timed-out waiter left it done
            future.set_result(None)


class AppendNotifier:
    """The highest position known to be committed, how many commits were
    noticed, and ways to wait for either.

    A store's appends and, for a database, its watcher of other
    connections' appends (a poller or a PostgreSQL listener) advance it;
    :meth:`wait_past` sleeps on a condition variable until it passes a mark,
    :meth:`wait_past_async` awaits a future that :meth:`advance` resolves on
    the waiter's event loop. Where commits need not come in position order
    (PostgreSQL: positions follow transaction ids, and a transaction that
    began earlier may commit later), a commit below the highest position is
    news all the same: :meth:`wait_tick` waits for the next commit noticed,
    whatever its position.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._position = 0
        self._ticks = 0
        # Raised by :meth:`interrupt`: a waiter that saw it change returns.
        self._interrupts = 0
        # (mark, future): resolved past position ``mark``; a mark of None
        # waits for the next commit noticed, whatever its position.
        self._futures: list[tuple[int | None, asyncio.Future[None]]] = []

    def advance(self, position: int, *, commit: bool = False) -> None:
        """Record that ``position`` is committed and wake the waiters it
        concerns. ``commit``: a commit of its own, news even when it is
        below the highest position known (not a poller's repeated reading)."""
        with self._condition:
            if position <= self._position and not commit:
                return
            self._ticks += 1
            self._position = max(position, self._position)
            self._condition.notify_all()
            passed = [f for mark, f in self._futures if mark is None or mark < position]
            if passed:
                self._futures = [
                    (m, f) for m, f in self._futures if m is not None and m >= position
                ]
        if passed:
            resolve_on_their_loops(passed)

    @property
    def position(self) -> int:
        """The highest position known to be committed."""
        return self._position

    @property
    def ticks(self) -> int:
        """How many commits were noticed (a mark for :meth:`wait_tick`)."""
        return self._ticks

    def wait_tick(self, ticks: int, timeout: float) -> bool:
        """Wait until a commit is noticed after mark ``ticks``; False on timeout."""
        return self._wait(lambda: self._ticks > ticks, timeout)

    async def wait_tick_async(self, ticks: int, timeout: float) -> bool:
        """:meth:`wait_tick` without a thread: False on timeout."""
        return await self._wait_async(None, lambda: self._ticks > ticks, timeout)

    def wait_past(self, position: int, timeout: float) -> bool:
        """Wait until a position past ``position`` is known; False on timeout."""
        return self._wait(lambda: self._position > position, timeout)

    async def wait_past_async(self, position: int, timeout: float) -> bool:
        """:meth:`wait_past` without a thread: False on timeout."""
        return await self._wait_async(
            position, lambda: self._position > position, timeout
        )

    def interrupt(self) -> None:
        """Wake every thread waiting now, whatever it waits for: its wait
        returns what it has (False if nothing it waited for came). A wait
        begun after this one waits as usual."""
        with self._condition:
            self._interrupts += 1
            self._condition.notify_all()

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        with self._condition:
            began = self._interrupts
            self._condition.wait_for(
                lambda: done() or self._interrupts != began, max(timeout, 0.0)
            )
            return done()

    async def _wait_async(
        self, mark: int | None, done: Callable[[], bool], timeout: float
    ) -> bool:
        """Await ``done``, woken by :meth:`advance` through a future with
        ``mark`` (see ``_futures``)."""
        future = asyncio.get_running_loop().create_future()
        entry: tuple[int | None, asyncio.Future[None]] = (mark, future)
        with self._condition:
            if done():
                return True
            self._futures.append(entry)
        try:
            await asyncio.wait_for(future, max(timeout, 0.0))
        except TimeoutError:
            pass
        finally:
            with self._condition:
                if entry in self._futures:
                    self._futures.remove(entry)
        return done()
