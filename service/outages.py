"""One log line when a background loop loses its database, one when it has
it back: an outage of an hour is two lines, not thousands of tracebacks."""

from __future__ import annotations

from typing import Any

from eventstore.base import StoreError


class OutageLog:
    """The state of one background loop's store, logged on changes only."""

    def __init__(self, log: Any, name: str) -> None:
        self.log = log
        self.name = name
        self.down = False
        self._last_bug = ""

    def failed(self, error: BaseException) -> None:
        """A pass of the loop failed with ``error``."""
        if isinstance(error, StoreError):
            if not self.down:
                self.down = True
                self.log.warning(
                    f"{self.name}.store_unavailable",
                    error=" ".join(str(error).split())[:300],
                )
            return
        # Not the database: a bug. Its traceback once, not once a second.
        summary = f"{type(error).__name__}: {error}"
        if summary != self._last_bug:
            self._last_bug = summary
            self.log.error(f"{self.name}.failed", exc_info=error)

    def ok(self) -> None:
        """A pass of the loop went through."""
        if self.down:
            self.down = False
            # At the level of the line that said it went: they come in pairs.
            self.log.warning(f"{self.name}.store_back")
        self._last_bug = ""
