"""Quick join: seat a caller in the oldest open game of a type and player
count, or create one (``FindGame``).

Safe when many callers race on several replicas:

- **no game overfilled**: a seat is taken by a join decided on the game's
  state and appended at its version; of two racing joins the second
  conflicts, decides again on the new state and takes another seat, or
  another game once this one is full;
- **no caller seated twice**: a caller is its bearer token (a caller without
  one gets a fresh seat token per call, as with JoinGame). Before joining,
  the open games are searched for a seat of that token: one found is the
  answer. Racing calls of one token pick the same oldest game, so all but
  one of their joins conflict and then find the seat the first took; when
  no game is open they create the game under the same key (a request id
  derived from the token, the type, the player count and how many games
  the token quick-joined that way before), so they meet in one new game.
"""

from __future__ import annotations

from typing import NamedTuple

from domain import registry
from domain.session import Status
from service import inputs
from service.callers import Caller, hash_token, new_seat_token
from service.commands import MAX_RETRIES
from service.errors import Aborted, InvalidArgument, NotFound
from service.lobby import Lobby
from service.queries import Queries

#: Creations by one caller's FindGame calls tried before giving up (each
#: earlier one already started or finished).
MAX_FIND_CREATIONS = 10_000


class Found(NamedTuple):
    """Where FindGame seated the caller."""

    game_id: str
    seat: int
    token: str
    version: int
    created: bool


class Matchmaking:
    """The FindGame use case."""

    def __init__(self, lobby: Lobby, queries: Queries) -> None:
        self.lobby = lobby
        self.games = lobby.games
        self.queries = queries

    def find_game(
        self, caller: Caller, game_type: str, players: int, name: str
    ) -> Found:
        """Seat ``caller`` in the oldest open game of ``game_type`` for
        ``players``, or in a new one."""
        name = inputs.player_name(name)
        if game_type not in registry.game_types():
            raise InvalidArgument(
                "UNKNOWN_GAME_TYPE",
                f"No game type {inputs.quote(game_type)}; see ListGameTypes.",
                "game_type",
            )
        rules = registry.rules_for(game_type)
        if not rules.min_players <= players <= rules.max_players:
            raise InvalidArgument(
                "PLAYER_COUNT_OUT_OF_RANGE",
                f"{rules.title} takes {rules.min_players} to {rules.max_players} "
                f"players, not {players}.",
                "players",
            )
        token = caller.token or new_seat_token()
        token_hash = hash_token(token)
        for _ in range(MAX_RETRIES):
            open_games = self._open_games(game_type, players)
            for game_id in open_games:
                seated = self._seat_of(game_id, token_hash)
                if seated is not None:
                    return Found(game_id, seated[0], token, seated[1], False)
            for game_id in open_games:
                found = self._join(caller, game_id, token, name)
                if found is not None:
                    return found
            found = self._create_and_join(caller, game_type, players, token, name)
            if found is not None:
                return found
        raise Aborted("TOO_MUCH_CONTENTION", "The lobby changed too often; retry.")

    def _open_games(self, game_type: str, players: int) -> list[str]:
        """Open games of the type and player count with a free seat, oldest
        first."""
        out: list[str] = []
        after = ""
        while True:
            rows, after = self.queries.list_games(game_type, Status.OPEN, 500, after)
            out += [
                r.game_id
                for r in rows
                if r.players == players and r.seats_taken < r.players
            ]
            if not after:
                return out

    def _seat_of(self, game_id: str, token_hash: str) -> tuple[int, int] | None:
        """(seat, version) of the token in an open game, if seated there."""
        try:
            state = self.games.load(game_id).state
        except NotFound:
            return None
        seats = state.seats_of(token_hash)
        if state.status is not Status.OPEN or not seats:
            return None
        return min(seats), state.version

    def _join(
        self, caller: Caller, game_id: str, token: str, name: str
    ) -> Found | None:
        """Take a free seat of ``game_id`` for ``token`` (None when it has
        none, or started). Decided again on every conflict."""
        token_hash = hash_token(token)
        self.lobby.open_seats.check(caller)
        for _ in range(MAX_RETRIES):
            loaded = self.games.load(game_id)
            state = loaded.state
            seated = self._seat_of(game_id, token_hash)
            if seated is not None:
                return Found(game_id, seated[0], token, seated[1], False)
            if state.status is not Status.OPEN or not state.free_seats:
                return None
            taken, version = self.lobby.append_join(
                game_id, loaded, None, name, token_hash, token_hash[:16]
            )
            if version:
                self.lobby.open_seats.hold(caller, game_id, taken, token_hash)
                return Found(game_id, taken, token, version, False)
        return None

    def _create_and_join(
        self, caller: Caller, game_type: str, players: int, token: str, name: str
    ) -> Found | None:
        """Create a game under a key of the token's own (its n-th quick-join
        creation of this type and count: racing calls of one token meet in
        one game) and join it."""
        token_hash = hash_token(token)
        creator = Caller(token=token, peer=caller.peer)
        for n in range(MAX_FIND_CREATIONS):
            key = f"find:{game_type}:{players}:{token_hash[:32]}:{n}"
            created = self.lobby.create_game(
                creator, game_type, players, request_id=key
            )
            found = self._join(caller, created.game_id, token, name)
            if found is not None:
                return Found(*found[:4], created=bool(created.host_token))
            state = self.games.load(created.game_id).state
            if state.status is Status.OPEN:
                return None  # full of others meanwhile: search again
        return None
