"""Creating games: a new game, a retried creation, a rematch.

The creation is logged as the command ``create`` (who created the game, its
host token's hash, its table settings), so that a verified replay decides it
again and the lobby reads its settings back (:mod:`service.creations`).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any, NamedTuple

from domain import bots as domain_bots
from domain import codec, registry
from domain.errors import InvalidCommand
from domain.session import GameCreated
from eventstore.base import (
    CommandOutcome,
    ConcurrencyError,
    DuplicateCommand,
    NewCommand,
)
from service import inputs
from service.callers import Caller, actor_of, hash_token, new_seat_token
from service.clocks import TimeControl
from service.commands import (
    CREATE,
    CREATE_TYPE,
    IN_PROCESS,
    MAX_RETRIES,
    REMATCH,
    REMATCH_TYPE,
)
from service.creations import REPLACE_WITH_BOT, Creations
from service.errors import (
    Aborted,
    AlreadyExists,
    InvalidArgument,
    PermissionDenied,
)
from service.games import Games, Loaded
from service.inputs import quote
from service.quotas import Holdings
from service.seating import Seating


class Created(NamedTuple):
    """A created game: its id, its version, and the token that proves its
    holder created it (empty for a retried creation; with a creator's seat,
    that seat's token too)."""

    game_id: str
    version: int
    host_token: str


class Creating:
    """Creating the games of one store."""

    def __init__(
        self,
        games: Games,
        timed_games: Holdings,
        creations: Creations,
        seating: Seating,
    ) -> None:
        self.games = games
        self.store = games.store
        #: The unfinished games with a time control each caller created.
        self.timed_games = timed_games
        self.creations = creations
        self.seating = seating

    def create_game(
        self,
        caller: Caller,
        game_type: str,
        players: int,
        options: Any = None,
        scenario: Any = None,
        seed: str = "",
        request_id: str = "",
        bots: Sequence[tuple[int, str]] = (),
        replace_leavers: str = "",
        time_control: TimeControl | None = None,
        rematch: tuple[str, str, dict[str, Any]] | None = None,
        reveal: bool = True,
        creator_seat: tuple[int, str] | None = None,
    ) -> Created:
        """Create a game. ``bots`` (seat, kind) are seated at once; a game of
        bots only is started too. ``replace_leavers`` ``"bot"``: a seat
        whose player leaves the started game goes to a bot (see
        :meth:`Seating.leave_game`). ``rematch`` (from :meth:`rematch`): the new
        game's id, the old game's id and the seats kept for its players.
        The game commits to its seed (with a salt drawn here); its end
        reveals both unless ``reveal`` is off (admin only):
        :mod:`domain.fairness`. ``creator_seat`` (seat, name): the caller
        takes that seat too, under the host token, reserved against its
        open seats before anything is appended (at the limit nothing is
        created)."""
        if replace_leavers and domain_bots.policy_level(replace_leavers) is None:
            levels = ", ".join(quote(f"bot:{v}") for v in domain_bots.LEVELS)
            raise InvalidArgument(
                "REPLACE_LEAVERS_INVALID",
                f"replace_leavers is empty, {quote(REPLACE_WITH_BOT)} or one of "
                f"{levels}, not {quote(replace_leavers)}.",
                "replace_leavers",
            )
        try:
            session = registry.session_for(game_type)
        except KeyError:
            raise InvalidArgument(
                "UNKNOWN_GAME_TYPE",
                f"No game type {quote(game_type)}; see ListGameTypes.",
                "game_type",
            ) from None
        _check_admin_only(caller, scenario, seed, reveal)
        try:
            created = session.create(
                players,
                seed or secrets.token_hex(16),
                options,
                scenario,
                salt=secrets.token_hex(16),
                reveal=reveal,
            )
        except InvalidCommand as error:
            if error.field:
                error.field = _field_in_request(error.field, game_type)
            raise
        self.seating.check_bots(game_type, players, bots)
        seat_for = self._checked_creator_seat(creator_seat, players, bots)
        with self.seating.open_seats.reserve(caller if seat_for else None) as held:
            made = self._append_creation(
                caller,
                created,
                seed,
                request_id,
                bots,
                table_of(replace_leavers, time_control),
                rematch,
            )
            if seat_for is None:
                return made
            token_for = made.host_token
            if not token_for:
                # A retried creation. A caller without a token of its own:
                # the first answer had the seat's token (nobody else may
                # get it). A caller's own token: its seat, if the first
                # attempt took it; if that failed after the game was
                # appended (the store went away between the two), now.
                if not caller.token:
                    return made
                state = self.games.load(made.game_id).state
                if state.seats_of(caller.token_hash):
                    return made._replace(version=state.version)
                token_for = caller.token
            seat, name = seat_for
            _, _, version = self.seating.join_reserved(
                caller, made.game_id, seat, name, held, token_for
            )
            return made._replace(version=version)

    @staticmethod
    def _checked_creator_seat(
        creator_seat: tuple[int, str] | None,
        players: int,
        bots: Sequence[tuple[int, str]],
    ) -> tuple[int, str] | None:
        """The creator's seat and name, checked before anything is written."""
        if creator_seat is None:
            return None
        seat, name = creator_seat
        if not 0 <= seat < players or seat in {s for s, _ in bots}:
            raise InvalidArgument(
                "CREATOR_SEAT_INVALID",
                f"The creator's seat {seat} is not a seat of the new game free "
                f"for a person: the seats are 0 to {players - 1} (seat 1 to "
                f"seat {players} as players count them), less the bots' seats.",
                "creator_seat.seat",
            )
        return seat, inputs.player_name(name, "creator_seat.player_name")

    def _append_creation(
        self,
        caller: Caller,
        created: GameCreated,
        seed: str,
        request_id: str,
        bots: Sequence[tuple[int, str]],
        table: dict[str, Any],
        rematch: tuple[str, str, dict[str, Any]] | None,
    ) -> Created:
        """Appends the new game (and seats its bots); a retry of a creation
        with a request_id answers with the same game and no host token."""
        # The creation is logged (as the command ``create``): who created
        # the game (whose quotas its bot seats' moves count against), the
        # hash of the host token that may free its seats before the start,
        # and with a request_id, the request's digest (a retry is told apart
        # from a different request under the same key).
        host_token = caller.token or new_seat_token()
        body: dict[str, Any] = {"host": hash_token(host_token)}
        body.update(table)
        if request_id:
            # The key is its caller's: nobody else can claim it first.
            body["request_id"] = request_id
            body["digest"] = _request_digest(created, seed, bots, table)
            game_id = request_game_id(
                caller.identity,
                # An address is shared by everyone behind it (a NAT, an
                # office): there the key is the request's too, so that two
                # callers' keys never meet unless they ask alike (a retry,
                # as far as anyone can tell: it gets the same game, and
                # never the host token, which only the first answer has).
                f"{request_id}:{body['digest']}" if caller.anonymous else request_id,
            )
        elif rematch is not None:
            game_id, body["rematch_of"], body["reserved"] = rematch
        else:
            game_id = _time_ordered_id()
        command = NewCommand(
            command_id=CREATE,
            actor=self._creator(caller),
            payload={"seat": -1, "type": CREATE_TYPE, "command": body},
            outcome=CommandOutcome(first_version=1, last_version=1),
            decided_at_version=0,
        )
        # A clock the timekeeper keeps until the game ends: a bounded number
        # per caller (reserved before the append, kept if it succeeds).
        timed = "time_control" in table
        try:
            with self.timed_games.reserve(caller if timed else None) as timing:
                self.games.create(game_id, created, command)
                timing.took(game_id)
        except (ConcurrencyError, DuplicateCommand):
            if rematch is not None:
                # Created already (a retried rematch): the same game.
                return Created(game_id, self.games.load(game_id).state.version, "")
            if not request_id:
                raise
            first = self.store.find_command(game_id, CREATE)
            if (
                first is None
                or first.payload["command"].get("digest") != body["digest"]
            ):
                raise AlreadyExists(
                    "REQUEST_ID_REUSED",
                    "This request_id already created a different game; send a "
                    "new request_id for a new game.",
                    "request_id",
                ) from None
            host_token = ""  # a retry: the first answer had it
        if bots:
            return Created(game_id, self.seating.seat_bots(game_id, bots), host_token)
        if request_id:
            return Created(game_id, self.games.load(game_id).state.version, host_token)
        return Created(game_id, 1, host_token)

    @staticmethod
    def _creator(caller: Caller) -> str:
        """Who created a game, as its command log names it (what the bot
        runner charges its bot seats' moves to)."""
        if caller.admin:
            return "admin"
        if caller.token:
            return caller.token_hash[:16]
        if not caller.peer:
            return IN_PROCESS
        return "address:" + hashlib.sha256(caller.peer.encode()).hexdigest()[:16]

    def rematch(self, caller: Caller, old_id: str, seed: str = "") -> Created:
        """The next game of the finished ``old_id``: the same type, options,
        table settings and bots; each person's seat kept for its player,
        who claims it with the old game's seat token (JoinGame); the two
        games linked (``rematch_of`` in the new one's creation, a
        :class:`RematchCreated` in the old one). One rematch a game: asked
        again (or by another of its players), the same game is the answer."""
        for _ in range(MAX_RETRIES):
            loaded = self.games.load(old_id)
            state = loaded.state
            if not caller.admin and not (
                caller.token and state.seats_of(caller.token_hash)
            ):
                raise PermissionDenied(
                    "NOT_SEATED",
                    "Only a player of the game or the admin may ask for its rematch.",
                )
            if state.rematch:
                return self._create_rematch(caller, loaded, state.rematch, seed)
            game_id = _time_ordered_id()
            events = loaded.session.rematch(state, game_id)
            command = NewCommand(
                command_id=REMATCH,
                actor=actor_of(caller, state, -1),
                payload={
                    "seat": -1,
                    "type": REMATCH_TYPE,
                    "command": {"game_id": game_id},
                },
                decided_at_version=state.version,
            )
            try:
                self.games.commit(old_id, loaded, events, command)
            except (ConcurrencyError, DuplicateCommand):
                continue  # another player's rematch came first: that one
            return self._create_rematch(caller, loaded, game_id, seed)
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    def _create_rematch(
        self, caller: Caller, old: Loaded, game_id: str, seed: str
    ) -> Created:
        state = old.state
        bots = [
            (i, s.bot) for i, s in enumerate(state.seats) if s is not None and s.bot
        ]
        reserved = {
            str(i): {"token_hash": s.token_hash, "player_name": s.name}
            for i, s in enumerate(state.seats)
            if s is not None and not s.bot and s.token_hash
        }
        settings = self.creations.settings_of(old.game_id)
        control = settings.get("time_control")
        return self.create_game(
            caller,
            state.game_type,
            len(state.seats),
            options=state.config.options,
            seed=seed,
            bots=bots,
            replace_leavers=str(settings.get("replace_leavers", "")),
            time_control=None if control is None else TimeControl.from_body(control),
            rematch=(game_id, old.game_id, reserved),
        )


def table_of(replace_leavers: str, time_control: TimeControl | None) -> dict[str, Any]:
    """The table's own settings (beside the rules' options): logged with
    the creation, which is where the lobby and the leaves read them."""
    table: dict[str, Any] = (
        {"replace_leavers": replace_leavers} if replace_leavers else {}
    )
    if time_control is not None and time_control.check().timed:
        table["time_control"] = time_control.to_body()
    return table


def request_game_id(identity: str, request_id: str) -> str:
    """The id of the game a CreateGame with ``request_id`` makes for the
    caller who is ``identity`` (:attr:`Caller.identity`)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"strata:{identity}:{request_id}").hex


def _check_admin_only(caller: Caller, scenario: Any, seed: str, reveal: bool) -> None:
    """What only the admin token may ask of a creation."""
    if scenario is not None and not caller.admin:
        raise PermissionDenied(
            "SCENARIO_NEEDS_ADMIN", "Only the admin token may set a scenario."
        )
    if seed and not caller.admin:
        # A seed foretells every draw: its chooser could compute the
        # hands and deck orders offline, and pick a seed that wins.
        raise PermissionDenied(
            "SEED_NEEDS_ADMIN",
            "Only the admin token may choose a game's seed; leave it empty "
            "and the service draws one.",
        )
    if not reveal and not caller.admin:
        raise PermissionDenied(
            "KEEP_SEED_SECRET_NEEDS_ADMIN",
            "Only the admin token may keep a game's seed secret after its end.",
        )


def _request_digest(
    created: GameCreated,
    seed: str,
    bots: Sequence[tuple[int, str]],
    table: dict[str, Any],
) -> str:
    """A digest of what a CreateGame request asked for (the table settings
    only when set, so the digest of a request without them is unchanged)."""
    asked = codec.encode(created)
    asked["seed"] = seed  # as asked: empty when the service drew it
    # Drawn by the service for each creation, not asked for.
    asked.pop("salt", None)
    asked.pop("commitment", None)
    asked["bots"] = sorted([seat, kind] for seat, kind in bots)
    asked.update(table)
    canonical = json.dumps(asked, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


_last_id = [0, 0]  # the millisecond and the sequence of the last id made here
_id_lock = threading.Lock()


def _time_ordered_id() -> str:
    """A 32-hex-digit id: the millisecond time (12 digits), a sequence within
    the millisecond (4), random (16). The ids one process makes increase
    strictly, so the game list's order (by id) is their creation order."""
    with _id_lock:
        now = int(time.time() * 1000)
        millisecond, sequence = _last_id
        if now > millisecond:
            millisecond, sequence = now, 0
        else:  # the same millisecond, or a clock stepped back
            sequence += 1
            if sequence > 0xFFFF:
                millisecond, sequence = millisecond + 1, 0
        _last_id[:] = [millisecond, sequence]
    return f"{millisecond:012x}{sequence:04x}{secrets.token_hex(8)}"


def _field_in_request(field: str, game_type: str) -> str:
    """The path in CreateGameRequest of a field the game names: an option's
    (``options.<field>``) or a scenario's (its path in the scenario), each
    in its game's entry of GameOptions or GameScenario."""
    kind, _, rest = field.partition(".")
    if kind != "options":
        kind, rest = "scenario", field
    return f"{kind}.{game_type}.{rest}"
