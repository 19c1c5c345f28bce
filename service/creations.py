"""A game's logged creation, read back: the table settings (a bot for a
leaver, the time control) and the host, which seating and the timekeeper
follow."""

from __future__ import annotations

import copy
import threading
from typing import Any

from domain import bots as domain_bots
from eventstore.base import CommandRecord, EventStore
from service.clocks import TimeControl
from service.commands import CREATE
from service.sharing import Recent

#: ``CreateGameRequest.replace_leavers``: a leaver's seat goes to a bot
#: (``bot``: the game's replacement bot; ``bot:<level>``: that level's).
REPLACE_WITH_BOT = domain_bots.BOT_POLICY
#: The table settings a creation logs beside the rules' options.
TABLE_SETTINGS = ("replace_leavers", "time_control")


#: How many games' creations are kept (a logged command never changes).
KEPT = 4096


class Creations:
    """What each game of one store was created with. A creation found is
    kept (the :data:`KEPT` most recently asked for): ``GetGame``,
    ``JoinGame`` and a leave ask for it on every call, and a logged
    command never changes. One not found is asked again (the game may be
    made meanwhile, or a standby may not have it yet)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._kept: Recent[CommandRecord] = Recent(KEPT)
        self._lock = threading.Lock()

    def _creation(self, game_id: str) -> CommandRecord | None:
        with self._lock:
            record = self._kept.get(game_id)
        if record is None:
            record = self.store.find_command(game_id, CREATE)
            if record is not None:
                with self._lock:
                    self._kept.put(game_id, record)
        return record

    def creation_of(self, game_id: str) -> dict[str, Any]:
        """The body of the game's logged creation (empty if none): the
        caller's own copy."""
        record = self._creation(game_id)
        if record is None:
            return {}
        body: dict[str, Any] = copy.deepcopy(record.payload.get("command", {}))
        return body

    def settings_of(self, game_id: str) -> dict[str, Any]:
        """The table settings the game was created with (``replace_leavers``,
        …), from its logged creation."""
        body = self.creation_of(game_id)
        return {k: v for k, v in body.items() if k in TABLE_SETTINGS}

    def time_control_of(self, game_id: str) -> TimeControl:
        """The game's time control (none for a game created without)."""
        return TimeControl.from_body(self.settings_of(game_id).get("time_control"))

    def host_of(self, game_id: str) -> tuple[str, str]:
        """(creator, host token hash) of a game, from its logged creation
        (empty strings for a game created before creations were logged)."""
        record = self._creation(game_id)
        if record is None:
            return "", ""
        return record.actor, str(record.payload.get("command", {}).get("host", ""))
