"""Seating: taking a seat, freeing it before the start or leaving the
started game, and seating a game's bots.

Each is logged as a command of its own (``join-seat-…``, ``leave-seat-…``),
so that a verified replay decides it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain import bots as domain_bots
from domain.chance import Rng
from domain.seats import seat_number
from domain.session import Status
from eventstore.base import ConcurrencyError, DuplicateCommand, NewCommand
from service import inputs, names
from service.callers import Caller, actor_of, hash_token, new_seat_token
from service.commands import JOIN, LEAVE_PREFIX, LEAVE_TYPE, MAX_RETRIES
from service.creations import Creations
from service.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
)
from service.games import Games, Loaded
from service.inputs import quote
from service.quotas import Holdings, Reservation
from service.starting import Starting

#: The reason of a name that looks like another player's in the game.
NAME_TAKEN = "NAME_TAKEN"


def _replacement_bot(game_type: str, replace_leavers: str) -> str:
    """The bot that takes over a leaver's seat (``replace_leavers`` is
    ``bot`` or ``bot:<level>``): that level's, or by default the game's
    heuristic bot (its random bot for a game without one)."""
    level = domain_bots.policy_level(replace_leavers) or ""
    return domain_bots.replacement_kind(game_type, level)


class Seating:
    """Taking and freeing the seats of one store's games."""

    def __init__(
        self,
        games: Games,
        open_seats: Holdings,
        creations: Creations,
        starting: Starting,
    ) -> None:
        self.games = games
        #: The seats of unstarted games each caller holds.
        self.open_seats = open_seats
        self.creations = creations
        self.starting = starting

    def join_game(
        self, caller: Caller, game_id: str, seat: int | None, name: str
    ) -> tuple[int, str, int]:
        """Take a seat; returns (seat, token, version)."""
        name = inputs.player_name(name)
        with self.open_seats.reserve(caller) as reservation:
            return self.join_reserved(caller, game_id, seat, name, reservation)

    def join_reserved(
        self,
        caller: Caller,
        game_id: str,
        seat: int | None,
        name: str,
        reservation: Reservation,
        token_for: str = "",
    ) -> tuple[int, str, int]:
        """Take a seat under an open seat already reserved for ``caller``
        (by :meth:`join_game`, or a creator's seat reserved before its game
        was made), for ``token_for`` (default: the caller's token when it
        holds a seat of the game, else a new one)."""
        reserved = {
            int(s): kept
            for s, kept in self.creations.creation_of(game_id)
            .get("reserved", {})
            .items()
        }
        for _ in range(MAX_RETRIES):
            loaded = self.games.load(game_id)
            state = loaded.state
            token = token_for or (
                caller.token
                if caller.token and state.seats_of(caller.token_hash)
                else ""
            )
            if reserved:
                seat, claimed = self._reserved_seat(caller, state, seat, reserved)
                if claimed:
                    token, name = caller.token, claimed
            token = token or new_seat_token()
            token_hash = hash_token(token)
            taken, version = self.append_join(
                game_id, loaded, seat, name, token_hash, actor=token_hash[:16]
            )
            if version:
                reservation.took((game_id, taken), token_hash)
                return taken, token, version
            # someone else joined meanwhile: decide again
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    @staticmethod
    def _reserved_seat(
        caller: Caller,
        state: Any,
        seat: int | None,
        reserved: dict[int, dict[str, str]],
    ) -> tuple[int | None, str]:
        """In a rematch: the seat to take and, when the caller claims its own
        kept seat (with the old game's token), the old name. A seat kept
        for another player is refused (the admin may take any)."""
        mine = [
            s
            for s, kept in sorted(reserved.items())
            if caller.token
            and kept["token_hash"] == caller.token_hash
            and state.seats[s] is None
        ]
        if seat is None:
            if mine:
                seat = mine[0]
            else:
                unkept = [s for s in state.free_seats if s not in reserved]
                seat = unkept[0] if unkept else None
                if seat is None and state.free_seats and not caller.admin:
                    raise PermissionDenied(
                        "SEAT_RESERVED",
                        "Every free seat of this rematch is kept for a player of "
                        "the previous game; claim yours with its seat token.",
                    )
        if seat in mine:
            return seat, reserved[seat]["player_name"]
        if seat in reserved and not caller.admin:
            raise PermissionDenied(
                "SEAT_RESERVED",
                f"Seat {seat_number(seat)} of this rematch is kept for its player "
                "of the previous game; claim it with that game's seat token.",
            )
        return seat, ""

    def leave_game(self, caller: Caller, game_id: str, seat: int) -> int:
        """Free ``seat`` of a game not yet started (its own token, the
        game's host token or the admin), or take it out of a started game
        (its own token or the admin; a bot takes it over when the game was
        created with ``replace_leavers: bot``); returns the version."""
        for _ in range(MAX_RETRIES):
            loaded = self.games.load(game_id)
            state = loaded.state
            if not 0 <= seat < len(state.seats) or state.seats[seat] is None:
                loaded.session.leave(state, seat)  # says what is wrong
            info = state.seats[seat]
            assert info is not None
            started = state.status is not Status.OPEN
            owners = [info.token_hash] if info.token_hash else []
            if not started:
                owners.append(self.creations.host_of(game_id)[1])
            allowed = caller.admin or (
                bool(caller.token) and caller.token_hash in owners
            )
            if not allowed:
                raise PermissionDenied(
                    "NOT_YOUR_SEAT",
                    f"Only seat {seat_number(seat)}'s player or the admin may take "
                    "it out of the game."
                    if started
                    else f"Only seat {seat_number(seat)}'s player, the game's host "
                    "or the admin may free it.",
                )
            version = self._append_leave(game_id, loaded, seat, caller)
            if version:
                return version
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    def leave_as_service(
        self,
        game_id: str,
        seat: int,
        command_id: str,
        version: int,
        note: dict[str, Any],
    ) -> int:
        """Take ``seat`` out of its started game as the service's own
        command (a forfeit on time) decided at ``version``, under
        ``command_id`` (reserved), with ``note`` (its instant) logged. 0 when
        the game is at another version, or another replica did it."""
        loaded = self.games.load(game_id)
        if loaded.state.version != version:
            return 0
        return self._append_leave(
            game_id, loaded, seat, Caller(service=True), command_id, note=note
        )

    def _append_leave(
        self,
        game_id: str,
        loaded: Loaded,
        seat: int,
        caller: Caller,
        command_id: str = "",
        note: dict[str, Any] | None = None,
    ) -> int:
        """Decide and append a leave; 0 when the game changed meanwhile."""
        state = loaded.state
        bot = ""
        settings = self.creations.settings_of(game_id)
        replace_leavers = str(settings.get("replace_leavers", ""))
        if state.status is Status.ACTIVE and replace_leavers:
            bot = _replacement_bot(state.game_type, replace_leavers)
        events = loaded.session.leave(
            state, seat, bot, Rng(state.config.seed, state.version)
        )
        body = {"bot": bot} if bot else {}
        command = NewCommand(
            command_id=command_id or f"{LEAVE_PREFIX}{seat}-at-{state.version}",
            actor=actor_of(caller, state, seat),
            payload={"seat": seat, "type": LEAVE_TYPE, "command": body, **(note or {})},
            decided_at_version=state.version,
        )
        try:
            return self.games.commit(game_id, loaded, events, command)
        except (ConcurrencyError, DuplicateCommand):
            return 0  # the game changed meanwhile: decide again

    @staticmethod
    def check_bots(
        game_type: str, players: int, bots: Sequence[tuple[int, str]]
    ) -> None:
        seen: set[int] = set()
        for seat, kind in bots:
            if not 0 <= seat < players or seat in seen:
                raise InvalidArgument(
                    "BOT_SEAT_INVALID",
                    f"A bot's seat {seat} is out of range or listed twice: "
                    f"this game's seats are 0 to {players - 1} (seat 1 to seat "
                    f"{players} as players count them).",
                    "bots",
                )
            seen.add(seat)
            if kind not in domain_bots.bot_kinds(game_type):
                raise InvalidArgument(
                    "UNKNOWN_BOT",
                    f"No bot {quote(kind)} for {game_type}; there are "
                    f"{', '.join(domain_bots.bot_kinds(game_type))}.",
                    "bots",
                )

    def append_join(
        self,
        game_id: str,
        loaded: Loaded,
        seat: int | None,
        name: str,
        token_hash: str,
        actor: str,
        bot: str = "",
    ) -> tuple[int, int]:
        """Take a seat, logged as a JoinGame command (so verification decides
        it again). Returns (seat, version), version 0 when someone else
        changed the game meanwhile and the caller should decide again."""
        state = loaded.state
        if not bot:
            _check_look_alike(state, name, token_hash)
        events = loaded.session.join(state, name, token_hash, seat, bot=bot)
        taken = events[0].seat
        body = {"player_name": name, "token_hash": token_hash}
        if bot:
            body["bot"] = bot
        command = NewCommand(
            command_id=f"join-seat-{taken}-at-{state.version}",
            actor=actor,
            payload={"seat": taken, "type": JOIN, "command": body},
            decided_at_version=state.version,
        )
        try:
            return taken, self.games.commit(game_id, loaded, events, command)
        except (ConcurrencyError, DuplicateCommand):
            return taken, 0

    def seat_bots(self, game_id: str, bots: Sequence[tuple[int, str]]) -> int:
        """Seat each bot (logged as a join, idempotently); start the game when
        bots fill every seat. Returns the version."""
        for seat, kind in sorted(bots):
            while True:
                loaded = self.games.load(game_id)
                state = loaded.state
                if state.seats[seat] is not None:
                    break  # seated already (a retried creation)
                _, version = self.append_join(
                    game_id, loaded, seat, f"{kind} bot", "", f"bot:{kind}", kind
                )
                if version:
                    break
        state = self.games.load(game_id).state
        if state.status is Status.OPEN and all(
            s is not None and s.bot for s in state.seats
        ):
            return self.starting.start_game(Caller(bot=True), game_id)
        return state.version


def _check_look_alike(state: Any, name: str, token_hash: str) -> None:
    """FAILED_PRECONDITION ``NAME_TAKEN`` when another player of the game
    (not a bot, not the same token) has a name that looks like ``name``
    (one TR39 skeleton: "Ada" with a Cyrillic A, U+0410, beside "Ada", or
    "Ada" twice).
    The name a player who gave none gets may repeat."""
    if name == inputs.DEFAULT_NAME:
        return
    others = [
        s.name
        for s in state.seats
        if s is not None and not s.bot and s.token_hash != token_hash
    ]
    alike = names.look_alike(name, others)
    if alike:
        raise FailedPrecondition(
            NAME_TAKEN,
            f"{quote(name)} looks like {quote(alike)}, the name of another player "
            "of this game; choose another name.",
            "player_name",
        )
