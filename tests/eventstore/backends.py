"""The backends of the store contract and what each can do beyond the port.

Every test of ``test_contract.py`` runs on every backend, except where it
declares with ``@pytest.mark.requires(Capability.X, ...)`` that it needs
something not every backend has: a backend without it does not get the
case at all (it is deselected at collection, as not applicable; nothing
is skipped because it fails). The capabilities are facts about a backend,
listed here once; they are not a test's wish.

The in-memory store has only dense positions: one ``InMemoryEventStore``
object is the whole store, so there is no database to reach with SQL and
no second store to open on the same data.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import pytest


class Capability(enum.Enum):
    """What a contract test may need beyond the port."""

    #: The store's data lives in a SQL database that a test can read and
    #: sabotage with plain SQL (``store_url``, ``tests.eventstore.raw_sql``).
    SQL = "a SQL database reachable with plain SQL"
    #: Several stores can be opened on one database (other connections,
    #: other processes): each reads the others' appends and is woken by them.
    CONNECTIONS = "several stores opened on one database"
    #: Positions are 1, 2, 3, ... with no gap: one writer at a time hands
    #: them out (SQLite, the in-memory store). PostgreSQL's follow
    #: transaction ids, so that its writers share no lock.
    DENSE_POSITIONS = "global positions 1, 2, 3, ... without gaps"


@dataclass(frozen=True)
class Backend:
    """A store the contract runs on."""

    name: str
    capabilities: frozenset[Capability]
    marks: tuple[Any, ...] = field(default=())

    def lacks(self, needed: set[Capability]) -> set[Capability]:
        """The capabilities of ``needed`` this backend does not have."""
        return needed - self.capabilities


SQLITE = Backend("sqlite", frozenset(Capability))
POSTGRES = Backend(
    "postgres",
    frozenset(Capability) - {Capability.DENSE_POSITIONS},
    (pytest.mark.postgres,),
)
MEMORY = Backend("memory", frozenset({Capability.DENSE_POSITIONS}))

BACKENDS = (SQLITE, POSTGRES, MEMORY)


def requires(item: pytest.Item) -> set[Capability]:
    """The capabilities a collected test declares it needs (marks on the
    function, its module and its parameters alike)."""
    needed: set[Capability] = set()
    for mark in item.iter_markers("requires"):
        for capability in mark.args:
            if not isinstance(capability, Capability):
                raise pytest.UsageError(
                    f"{item.nodeid}: requires() takes Capability members, "
                    f"not {capability!r}"
                )
            needed.add(capability)
    return needed
