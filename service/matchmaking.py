"""Quick join: seat a caller in the oldest open game of a type and player
count, or in the quick-join game being filled (``FindGame``).

Safe when many callers race on several replicas:

- **no game overfilled**: a seat is taken by a join decided on the game's
  state and appended at its version; of two racing joins the second
  conflicts, decides again on the new state and takes another seat, or
  another game once this one is full;
- **one game filled at a time**: the games FindGame creates form one chain
  per type and player count, each created by the service under a key
  everyone derives alike (``find:<type>:<players>:<n>``). Callers who find
  no open game all go to the chain's newest game, create it if it is not
  there yet (racing creations of one key make one game) and fill it; only
  once it is full (or started) do they go on to the next. Before, each
  caller created a game under a key of its own: 40 racing callers made up
  to 40 half-full games;
- **no caller seated twice**: a caller is its bearer token (a caller without
  one gets a fresh seat token per call, as with JoinGame). Before joining,
  the open games are searched for a seat of a caller's own token: one found
  is the answer (a token made for the call sits nowhere: no search).
  Racing calls of one token pick the same game, so all but one of their
  joins conflict and then find the seat the first took.

A quick-join game has no host among its players (the service created it):
no player may free another's seat before the start; the admin may.
"""

from __future__ import annotations

from typing import NamedTuple

from domain import registry
from domain.session import Status
from service import inputs
from service.callers import Caller, hash_token, new_seat_token
from service.commands import MAX_RETRIES
from service.creating import request_game_id
from service.errors import Aborted, FailedPrecondition, InvalidArgument, NotFound
from service.lobby import Lobby
from service.queries import Queries
from service.seating import NAME_TAKEN

#: Open games one FindGame call looks at, the oldest first: a caller
#: seated in an open game past them (only when this many older ones have a
#: free seat) is given a seat in another.
FIND_LOOKS = 50
#: Games of the quick-join chain one FindGame call goes through before
#: giving up (each earlier one full, started or finished).
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
        self.store = lobby.store
        #: Per (type, player count): the chain's game being filled, as this
        #: process last saw it (others may have gone further: it looks on).
        self._chain: dict[tuple[str, int], int] = {}

    def find_game(
        self, caller: Caller, game_type: str, players: int, name: str
    ) -> Found:
        """Seat ``caller`` in the oldest open game of ``game_type`` for
        ``players``, or in the quick-join game being filled."""
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
            # A token made for this call sits nowhere yet: only a caller's
            # own token is looked for (a load of each game looked at).
            for game_id in open_games if caller.token else ():
                seated = self._seat_of(game_id, token_hash)
                if seated is not None:
                    return Found(game_id, seated[0], token, seated[1], False)
            for game_id in open_games:
                found = self._join(caller, game_id, token, name)
                if isinstance(found, Found):
                    return found
            found = self._join_chain(caller, game_type, players, token, name)
            if found is not None:
                return found
        raise Aborted("TOO_MUCH_CONTENTION", "The lobby changed too often; retry.")

    def _open_games(self, game_type: str, players: int) -> list[str]:
        """The :data:`FIND_LOOKS` oldest open games of the type and player
        count with a free seat (the list's creation order). Each is loaded
        to see whether the caller sits there already: all of them, as
        before, made a call cost as many loads as there were open games,
        which anyone may create."""
        rows, _ = self.queries.list_games(
            game_type, Status.OPEN, FIND_LOOKS, "", players=players, open_seats=True
        )
        return [row.game_id for row in rows]

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
    ) -> Found | str | None:
        """Take a free seat of ``game_id`` for ``token`` (None when it has
        none, or started; ``NAME_TAKEN`` when a player there has a name that
        looks like ``name``). Decided again on every conflict."""
        token_hash = hash_token(token)
        with self.lobby.open_seats.reserve(caller) as reservation:
            for _ in range(MAX_RETRIES):
                loaded = self.games.load(game_id)
                state = loaded.state
                seated = self._seat_of(game_id, token_hash)
                if seated is not None:
                    return Found(game_id, seated[0], token, seated[1], False)
                if state.status is not Status.OPEN or not state.free_seats:
                    return None
                try:
                    taken, version = self.lobby.append_join(
                        game_id, loaded, None, name, token_hash, token_hash[:16]
                    )
                except FailedPrecondition as refused:
                    if refused.reason == NAME_TAKEN:
                        return NAME_TAKEN  # someone there looks like this name
                    raise
                if version:
                    reservation.took((game_id, taken), token_hash)
                    return Found(game_id, taken, token, version, False)
        return None

    def _join_chain(
        self, caller: Caller, game_type: str, players: int, token: str, name: str
    ) -> Found | None:
        """Join the quick-join chain's game being filled (created when it is
        not there yet), or the next one once it is full or started."""
        chain = (game_type, players)
        first = self._chain.get(chain)
        if first is None:
            first = self._chain_end(game_type, players)
        passed = True  # every game before this one is full or started
        for n in range(first, first + MAX_FIND_CREATIONS):
            if passed:
                self._chain[chain] = max(n, self._chain.get(chain, 0))
            key = _chain_key(game_type, players, n)
            created = False
            if not self.store.stream_version(request_game_id(SERVICE.identity, key)):
                made = self.lobby.create_game(
                    SERVICE, game_type, players, request_id=key
                )
                created = bool(made.host_token)  # this call's creation
            found = self._join(caller, _chain_game(game_type, players, n), token, name)
            if isinstance(found, Found):
                return found._replace(created=created)
            # A game with someone whose name looks like this one is passed
            # over by this caller alone: the next caller may fill it.
            passed = passed and found is None
        return None

    def _chain_end(self, game_type: str, players: int) -> int:
        """The number of the chain's newest game (0 when there is none yet),
        found in a few reads however long the chain (the chain's games are
        never deleted: 0 to the newest exist, none after)."""

        def exists(n: int) -> bool:
            game_id = _chain_game(game_type, players, n)
            return bool(self.store.stream_version(game_id))

        if not exists(0):
            return 0
        low, high = 0, 1
        while exists(high):
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if exists(middle) else (low, middle)
        return low


#: The service creating the quick-join games (each under the chain's key).
SERVICE = Caller(service=True)


def _chain_key(game_type: str, players: int, n: int) -> str:
    return f"find:{game_type}:{players}:{n}"


def _chain_game(game_type: str, players: int, n: int) -> str:
    """The id of the chain's ``n``-th game."""
    return request_game_id(SERVICE.identity, _chain_key(game_type, players, n))
