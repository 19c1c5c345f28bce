"""Starting a game whose seats are taken, and expiring one never started.

Each is logged as a command of its own (``start``, ``expire``), so that a
verified replay decides it again.
"""

from __future__ import annotations

from datetime import datetime

from domain.chance import Rng
from domain.session import Status
from eventstore.base import ConcurrencyError, DuplicateCommand, NewCommand
from service.callers import Caller, acts_for
from service.commands import EXPIRE, EXPIRE_TYPE, MAX_RETRIES, START, START_ID
from service.errors import Aborted, PermissionDenied
from service.games import Games


class Starting:
    """Starting and expiring the games of one store."""

    def __init__(self, games: Games) -> None:
        self.games = games

    def start_game(self, caller: Caller, game_id: str) -> int:
        """Start a game whose seats are all taken; returns the version."""
        for _ in range(MAX_RETRIES):
            loaded = self.games.load(game_id)
            state = loaded.state
            if not caller.admin and not (
                (caller.token or caller.bot) and acts_for(caller, state)
            ):
                raise PermissionDenied(
                    "NOT_SEATED", "Only a seated player or the admin may start a game."
                )
            events = loaded.session.start(state, Rng(state.config.seed, state.version))
            command = NewCommand(
                command_id=START_ID,
                actor="admin"
                if caller.admin
                else "bot"
                if caller.bot
                else caller.token_hash[:16],
                payload={"seat": -1, "type": START, "command": {}},
                decided_at_version=state.version,
            )
            try:
                return self.games.commit(game_id, loaded, events, command)
            except DuplicateCommand as duplicate:
                return duplicate.record.outcome.last_version  # started meanwhile
            except ConcurrencyError:
                continue
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    def expire_game(self, game_id: str, at: datetime) -> bool:
        """End a game never started, as the service's own command (id
        ``expire``, pinned to the version: on several replicas one expires
        it); ``at`` is the instant the service decided it. False when the
        game started (or changed) meanwhile, or expired already."""
        loaded = self.games.load(game_id)
        state = loaded.state
        if state.status is not Status.OPEN:
            return False
        events = loaded.session.expire(state)
        command = NewCommand(
            command_id=EXPIRE,
            actor="service",
            payload={
                "seat": -1,
                "type": EXPIRE_TYPE,
                "command": {"at": at.isoformat()},
            },
            decided_at_version=state.version,
        )
        try:
            self.games.commit(game_id, loaded, events, command)
        except (ConcurrencyError, DuplicateCommand):
            return False
        return True
