"""Housekeeping: games nobody started in time expire.

A game stays open (joinable) until every seat is taken and someone starts
it. One that is still open ``open_game_hours`` after its creation is ended
by the service (:meth:`GameApp.expire_game`: a logged command ``expire``,
pinned to the game's version, so that on several replicas one ends it, with
the instant the service decided recorded in it): its seats stop counting
against their holders' open-seat quotas, and the lobby stays clear of
abandoned games.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import structlog

from domain.session import Status
from service import telemetry
from service.application import GameApp
from service.outages import OutageLog

log = structlog.get_logger("strata.housekeeping")


def _now() -> datetime:
    return datetime.now(UTC)


class Housekeeper:
    """Expires the games still open ``open_game_hours`` after creation."""

    def __init__(
        self,
        app: GameApp,
        open_game_hours: float,
        clock: Callable[[], datetime] = _now,
        every: float = 60.0,
    ) -> None:
        self.app = app
        self.ttl = timedelta(hours=open_game_hours)
        self.clock = clock
        self.every = every
        self.expired = 0

    def sweep(self) -> int:
        """Expire every game open since before the cut-off; returns how many."""
        if self.ttl <= timedelta(0):
            return 0
        now = self.clock()
        count = 0
        for game_id in list(self._open_since(now - self.ttl)):
            with telemetry.background("strata.housekeeping.expire", game_id):
                expired = self.app.expire_game(game_id, now)
            if expired:
                log.info("housekeeping.expired", game_id=game_id)
                count += 1
        self.expired += count
        return count

    def _open_since(self, cutoff: datetime) -> Iterator[str]:
        """Games open and created before ``cutoff`` (from the game list
        as of now, when the service keeps one)."""
        after = ""
        while True:
            rows, after = self.app.list_games("", Status.OPEN, 500, after)
            for row in rows:
                if row.created_at is not None and row.created_at < cutoff:
                    yield row.game_id
            if not after:
                return

    def run_forever(self, stop: threading.Event) -> None:
        """Sweep every ``every`` seconds until ``stop``."""
        outage = OutageLog(log, "housekeeping")
        while not stop.wait(self.every):
            try:
                self.sweep()
                outage.ok()
            except Exception as error:
                outage.failed(error)
