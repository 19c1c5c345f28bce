"""Quick copies of frozen values, for the folds of every game.

A fold replaces its state on every event of every game it reads, so these
are written for speed: :func:`replace` is :func:`dataclasses.replace`
without re-running ``__init__`` (the domain's dataclasses have no
``__post_init__`` to skip), and removing from a tuple never raises (a fold
applies facts; it does not check them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def replace(obj: T, **changes: Any) -> T:
    """A copy of the frozen dataclass ``obj`` with ``changes`` (``obj`` is
    left untouched)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


def without(items: tuple[T, ...], item: T) -> tuple[T, ...]:
    """``items`` without the first ``item`` (unchanged when there is none)."""
    try:
        index = items.index(item)
    except ValueError:
        return items
    return items[:index] + items[index + 1 :]


def without_any(items: tuple[T, ...], removed: Iterable[T]) -> tuple[T, ...]:
    """``items`` without every one of them that is in ``removed``."""
    gone = set(removed)
    return tuple(i for i in items if i not in gone)
