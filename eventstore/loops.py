"""Waking coroutines from other threads: the store's threads (the group
committer, the append watcher) resolve futures that callers on event loops
await."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable


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
