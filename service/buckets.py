"""Token buckets per caller, keyed by a fixed-size digest: the rates, the
creation budget, the bot runner's moves and thinking. Every table is
bounded in entries and, its keys being 16-byte digests, in bytes."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

#: Idle buckets are forgotten once there are more than this many.
_PRUNE_ABOVE = 10_000
#: The most keys one table of buckets holds: past it, the bucket used least
#: recently is forgotten (every key is a 16-byte digest, so a table is
#: bounded in bytes as well as in entries, whatever callers send).
MAX_KEYS = 50_000


def digest(key: str) -> bytes:
    """The fixed-size form every per-caller table keys on (16 bytes,
    whatever the length of the token, address or id it stands for)."""
    return hashlib.blake2b(key.encode(), digest_size=16).digest()


class TokenBuckets:
    """One token bucket per key, refilled at ``rate`` a second up to
    ``burst``; keyed by :func:`digest`, at most ``max_keys`` of them (the
    least recently used goes first)."""

    def __init__(
        self,
        rate: float,
        burst: float,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self.rate = rate
        self.burst = max(burst, 1.0)
        self.max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[bytes, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str, tokens: float = 1.0) -> bool:
        """Take ``tokens`` from ``key``'s bucket; False when it has fewer."""
        if self.rate <= 0:
            return True
        now = self._clock()
        name = digest(key)
        with self._lock:
            held, last = self._buckets.pop(name, (self.burst, now))
            held = min(self.burst, held + (now - last) * self.rate)
            allowed = held >= tokens
            if allowed:
                held -= tokens
            self._buckets[name] = (held, now)
            if len(self._buckets) > min(_PRUNE_ABOVE, self.max_keys):
                self._prune(now)
            return allowed

    def charge(self, key: str, tokens: float) -> None:
        """Take ``tokens`` from ``key``'s bucket after the fact (work whose
        cost is known once done): the bucket may go below zero, and
        :meth:`take` refuses until it has refilled."""
        if self.rate <= 0:
            return
        now = self._clock()
        name = digest(key)
        with self._lock:
            held, last = self._buckets.pop(name, (self.burst, now))
            held = min(self.burst, held + (now - last) * self.rate)
            self._buckets[name] = (held - tokens, now)
            if len(self._buckets) > min(_PRUNE_ABOVE, self.max_keys):
                self._prune(now)

    def _prune(self, now: float) -> None:
        """Forget buckets that have refilled (they hold no information),
        then the least recently used while there are too many."""
        full_after = self.burst / self.rate
        # Oldest first: the walk stops at the first bucket still refilling.
        for name, (_, last) in list(self._buckets.items()):
            if now - last < full_after:
                break
            del self._buckets[name]
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)

    def __len__(self) -> int:
        return len(self._buckets)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and digest(key) in self._buckets
