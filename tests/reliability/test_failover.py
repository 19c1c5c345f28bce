"""The failover run in small (the full one is ``python -m reliability.failover``):
a pg_auto_failover formation of a monitor and two nodes in synchronous
replication, two replicas, racing clients, WatchGame streams and GetGame
readers; the primary killed (kill -9 of PostgreSQL, then of its keeper),
the old primary brought back as a standby, the new primary killed. Nothing
acknowledged may be lost, no command applied twice, every retry answered
with the first outcome; each replica NOT_SERVING then SERVING again without
a restart, reads and streams resuming without a gap, every game verified
(``strata verify --all``).

Needs Debian's postgresql-15-auto-failover: skipped without it, except in
CI (``.ci/run`` installs it)."""

from __future__ import annotations

import os

import pytest

from reliability.failover import exercise, strata_on_a_formation
from reliability.formation import autoctl_binaries
from reliability.harness import LoadSettings

pytestmark = pytest.mark.slow


@pytest.fixture
def pg_auto_failover() -> None:
    try:
        autoctl_binaries()
    except FileNotFoundError as error:
        if os.environ.get("CI"):
            pytest.fail(f"{error}; CI is set, so the failover test must run")
        pytest.skip(str(error))


@pytest.mark.usefixtures("pg_auto_failover")
def test_losing_the_primary_twice_under_load_loses_nothing() -> None:
    # The script stops the load: after 60 commands, after 60 more once the
    # old primary is back as a standby, after 60 past the second failover.
    settings = LoadSettings(clients=8, commands=10**9, games=5, max_seconds=100)
    with strata_on_a_formation(nodes=2, count=2) as (formation, running):
        found = exercise(
            formation,
            running,
            settings,
            failovers=2,
            before=60,
            between=60,
            after=60,
            watchers=1,
            window_goal=False,  # a figure of the full run, not a test's
        )
    assert found.ok, found.violations
    figures = found.figures
    assert figures["lost acknowledged commands"] == 0
    assert figures["commands applied twice"] == 0
    assert figures["commands answered two ways"] == 0
    assert figures["acknowledged before the first kill"] > 0
    assert figures["acknowledged between failovers 1 and 2"] > 0
    assert figures["acknowledged after the last failover"] > 0
    assert figures["WatchGame streams resumed across a failover"] > 0
    assert figures["replicas restarted"] == 0
    assert figures["strata verify --all"].endswith("(exit 0)")
