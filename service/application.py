"""The service's use cases, wired to one store: the application.

Nothing here knows a transport. The servicers translate messages into
calls of these use cases and their answers back; the use cases are:

- :mod:`service.games`: loading and caching games (snapshots, a version);
- :mod:`service.commands`: deciding and appending commands, idempotently;
- :mod:`service.lobby`: creating games, seats, the start, expiry;
- :mod:`service.queries`: legal actions, watching, listing, replaying;
- :mod:`service.administration`: the audit log, verification, export and
  import, the integration feed and statistics;
- :mod:`service.callers`: who calls (tokens, the admin).

:class:`GameApp` builds them over one store and offers each use case by
name (``app.create_game``, ``app.submit``, …): what the servicers, the bot
runner and the housekeeping call.
"""

from __future__ import annotations

from eventstore.base import EventStore
from service.administration import Administration
from service.callers import Callers
from service.clocks import Timeouts
from service.commands import Commands
from service.games import Games, reads_after
from service.limits import DEFAULT_BOT_MOVE_MS
from service.lobby import Lobby
from service.matchmaking import Matchmaking
from service.queries import Queries
from service.quotas import open_seats, timed_games


class GameApp:
    """The use cases of the game service over one store."""

    def __init__(
        self,
        store: EventStore,
        admin_token: str = "",
        max_refusals: int = 1000,
        max_open_seats: int = 8,
        max_timed_games: int = 50,
        bot_move_ms: float = DEFAULT_BOT_MOVE_MS,
    ) -> None:
        self.store = store
        self.games = Games(store)
        self.commands = Commands(self.games, max_refusals)
        self.lobby = Lobby(
            self.games,
            open_seats(self.games, max_open_seats),
            timed_games(self.games, max_timed_games),
        )
        self.queries = Queries(self.games)
        self.administration = Administration(self.games)
        self.callers = Callers(admin_token)
        self.timeouts = Timeouts(self.commands, self.lobby, bot_move_ms)
        self.matchmaking = Matchmaking(self.lobby, self.queries)
        # Each use case by name.
        self.caller = self.callers.caller
        self.load = self.games.load
        self.look = self.games.look
        self.cached = self.games.cached
        self.state_at = self.games.state_at
        self.reads_after = reads_after
        self.create_game = self.lobby.create_game
        self.rematch = self.lobby.rematch
        self.join_game = self.lobby.join_game
        self.leave_game = self.lobby.leave_game
        self.start_game = self.lobby.start_game
        self.expire_game = self.lobby.expire_game
        self.host_of = self.lobby.host_of
        self.timeout = self.timeouts.timeout
        self.find_game = self.matchmaking.find_game
        self.clocks_of = self.timeouts.clocks_of
        self.submit = self.commands.submit
        self.submit_async = self.commands.submit_async
        self.legal_actions = self.queries.legal_actions
        self.actions_of = self.queries.actions_of
        self.watch_async = self.queries.watch_async
        self.list_games = self.queries.list_games
        self.feeds = self.queries.feeds
