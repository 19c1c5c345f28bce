"""The reliability scripts in small: three `strata serve` processes on one
PostgreSQL database, racing clients, duplicate command ids, and one replica
killed with SIGKILL and restarted under load. Nothing may be lost (the full
runs are `python -m reliability.replicas` / `reliability.crash`)."""

from __future__ import annotations

import pytest

from eventstore import migrate
from reliability.crash import Killer
from reliability.harness import Load, LoadSettings, check, replicas

pytestmark = pytest.mark.postgres


def test_three_replicas_lose_nothing_under_racing_clients_and_a_kill(
    postgres_server,
):
    url = postgres_server.create_schema()
    migrate.upgrade(url)
    settings = LoadSettings(clients=16, commands=240, games=5, max_seconds=60)
    with replicas(url, 3) as running:
        targets = [r.target for r in running]
        load = Load(targets, settings)
        killer = Killer(running, kills=1, down=0.2)
        ledger = load.run(progress=killer)
        killer.join()
        resent = [c for c, s in ledger.sent.items() if s.finals][:40]
        same = load.resend(resent, replica=0)  # the restarted one
        found = check(url, targets, ledger, settings, load.seconds)
        internal = sum(r.internal_errors_logged() for r in running)
    assert found.ok, found.violations
    assert killer.done == 1
    assert same == len(resent)
    assert internal == 0
    figures = found.figures
    assert figures["acknowledged commands"] > 0
    assert figures["lost acknowledged commands"] == 0
    assert figures["versions written twice"] == 0
