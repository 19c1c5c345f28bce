"""The ``eventsourcing`` library's side of the fold comparison: an aggregate
whose events are turns passed, like the long game's."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event


class Turns(Aggregate):
    """Turns passed back and forth."""

    @event("Started")
    def __init__(self) -> None:
        self.turn = 0

    @event("TurnPassed")
    def pass_turn(self, seat: int) -> None:
        self.turn = seat


class TurnsApp(Application[UUID]):
    """An application holding Turns aggregates."""

    is_snapshotting_enabled = False
