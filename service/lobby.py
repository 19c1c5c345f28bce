"""The lobby: creating games, taking and freeing seats, starting, expiring.

Each job has its module: :mod:`service.creating`, :mod:`service.seating`,
:mod:`service.starting`, and :mod:`service.creations` for what a game was
created with. Every change to a game outside its rules is logged as a
command of its own (``create``, ``join-seat-…``, ``leave-seat-…``,
``start``, ``expire``), so that a verified replay decides it again; each is
appended through :meth:`Games.commit`, the one unit of work.
"""

from __future__ import annotations

from service.creating import Created, Creating, request_game_id
from service.creations import Creations
from service.games import Games
from service.quotas import Holdings
from service.seating import NAME_TAKEN, Seating
from service.starting import Starting

__all__ = ["NAME_TAKEN", "Created", "Lobby", "request_game_id"]


class Lobby:
    """The lobby's jobs over one store, and each use case by name."""

    def __init__(
        self, games: Games, open_seats: Holdings, timed_games: Holdings
    ) -> None:
        self.games = games
        self.store = games.store
        self.creations = Creations(games.store)
        self.starting = Starting(games)
        self.seating = Seating(games, open_seats, self.creations, self.starting)
        self.creating = Creating(games, timed_games, self.creations, self.seating)
        self.open_seats = open_seats
        self.timed_games = timed_games
        self.create_game = self.creating.create_game
        self.rematch = self.creating.rematch
        self.creation_of = self.creations.creation_of
        self.settings_of = self.creations.settings_of
        self.time_control_of = self.creations.time_control_of
        self.host_of = self.creations.host_of
        self.join_game = self.seating.join_game
        self.append_join = self.seating.append_join
        self.leave_game = self.seating.leave_game
        self.leave_as_service = self.seating.leave_as_service
        self.start_game = self.starting.start_game
        self.expire_game = self.starting.expire_game
