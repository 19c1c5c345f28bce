"""Deterministic chance for ``decide``.

The generator is seeded from the game's seed (recorded in its first event)
and the stream version the command is decided at, so the same seed and the
same commands always give the same events. It is built on
:class:`random.Random` seeded with an integer, whose integer draws
(``getrandbits``/``randrange``/``shuffle``) have been stable across CPython
releases since 3.2.

A scenario (admin only, recorded in the first event) may fix the outcomes of
some draws. :class:`Script` hands out the fixed outcomes first and falls back
to the generator when they run out; the game keeps, in its state, how many
of each kind it has used (a count it updates in ``evolve`` from the events
that record the draws).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def derive_seed(seed: str, version: int) -> int:
    """The integer seed for deciding at ``version`` of a game seeded ``seed``."""
    digest = hashlib.sha256(f"strata/{seed}/{version}".encode()).digest()
    return int.from_bytes(digest[:16], "big")


class Rng:
    """A seeded random generator with the few draws games need.

    The generator is seeded on the first draw: most commands draw nothing,
    and deriving the seed (a SHA-256) costs more than deciding them.
    """

    __slots__ = ("_generator", "_seed", "_version")

    def __init__(self, seed: str, version: int) -> None:
        self._seed = seed
        self._version = version
        self._generator: random.Random | None = None

    @property
    def _random(self) -> random.Random:
        generator = self._generator
        if generator is None:
            generator = random.Random(derive_seed(self._seed, self._version))
            self._generator = generator
        return generator

    def roll(self, sides: int = 6) -> int:
        """A die roll from 1 to ``sides``."""
        return self._random.randrange(sides) + 1

    def below(self, n: int) -> int:
        """An integer in ``[0, n)``."""
        return self._random.randrange(n)

    def shuffled(self, items: Sequence[T]) -> tuple[T, ...]:
        """A shuffled copy of ``items``."""
        out = list(items)
        self._random.shuffle(out)
        return tuple(out)

    def choice(self, items: Sequence[T]) -> T:
        """One of ``items``."""
        return items[self._random.randrange(len(items))]


class Script:
    """Fixed outcomes first, then the generator.

    ``fixed`` is the scenario's list for one kind of draw (die results in
    order, say) and ``used`` how many of them earlier events consumed.
    """

    def __init__(self, rng: Rng, fixed: Sequence[int], used: int) -> None:
        self._rng = rng
        self._fixed = fixed
        self._next = used
        self.drawn = 0

    def roll(self, sides: int = 6) -> int:
        """The next fixed result if any is left, else a fresh roll."""
        self.drawn += 1
        if self._next < len(self._fixed):
            value = self._fixed[self._next]
            self._next += 1
            return value
        return self._rng.roll(sides)
