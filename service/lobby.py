"""The lobby: creating games, taking and freeing seats, starting, expiring.

Every change to a game outside its rules is logged as a command of its own
(``create``, ``join-seat-…``, ``leave-seat-…``, ``start``, ``expire``), so
that a verified replay decides it again.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from domain import bots as domain_bots
from domain import codec, registry
from domain.chance import Rng
from domain.errors import InvalidCommand
from domain.session import GameCreated, Status
from eventstore.base import (
    CommandOutcome,
    ConcurrencyError,
    DuplicateCommand,
    NewCommand,
)
from service import inputs, names
from service.callers import Caller, actor_of, acts_for, hash_token, new_seat_token
from service.clocks import TimeControl
from service.commands import (
    CREATE,
    CREATE_TYPE,
    EXPIRE,
    EXPIRE_TYPE,
    IN_PROCESS,
    JOIN,
    LEAVE_PREFIX,
    LEAVE_TYPE,
    MAX_RETRIES,
    REMATCH,
    REMATCH_TYPE,
    START,
    START_ID,
)
from service.errors import (
    Aborted,
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
)
from service.games import Games, Loaded, new_event
from service.inputs import quote
from service.quotas import Holdings, Reservation

#: ``CreateGameRequest.replace_leavers``: a leaver's seat goes to a bot
#: (``bot``: the game's replacement bot; ``bot:<level>``: that level's).
REPLACE_WITH_BOT = domain_bots.BOT_POLICY
#: The table settings a creation logs beside the rules' options.
TABLE_SETTINGS = ("replace_leavers", "time_control")


def _replacement_bot(game_type: str, replace_leavers: str) -> str:
    """The bot that takes over a leaver's seat (``replace_leavers`` is
    ``bot`` or ``bot:<level>``): that level's, or by default the game's
    heuristic bot (its random bot for a game without one)."""
    level = domain_bots.policy_level(replace_leavers) or ""
    return domain_bots.replacement_kind(game_type, level)


class Created(NamedTuple):
    """A created game: its id, its version, and the token that proves its
    holder created it (empty for a retried creation)."""

    game_id: str
    version: int
    host_token: str


class Lobby:
    """Creating games, taking and freeing seats, starting and expiring."""

    def __init__(
        self, games: Games, open_seats: Holdings, timed_games: Holdings
    ) -> None:
        self.games = games
        self.store = games.store
        #: The seats of unstarted games each caller holds.
        self.open_seats = open_seats
        #: The unfinished games with a time control each caller created.
        self.timed_games = timed_games

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
    ) -> Created:
        """Create a game. ``bots`` (seat, kind) are seated at once; a game of
        bots only is started too. ``replace_leavers`` ``"bot"``: a seat
        whose player leaves the started game goes to a bot (see
        :meth:`leave_game`). ``rematch`` (from :meth:`rematch`): the new
        game's id, the old game's id and the seats kept for its players.
        The game commits to its seed (with a salt drawn here); its end
        reveals both unless ``reveal`` is off (admin only):
        :mod:`domain.fairness`."""
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
        self._check_bots(game_type, players, bots)
        # The creation is logged (as the command ``create``): who created
        # the game (whose quotas its bot seats' moves count against), the
        # hash of the host token that may free its seats before the start,
        # and with a request_id, the request's digest (a retry is told apart
        # from a different request under the same key).
        host_token = caller.token or new_seat_token()
        body: dict[str, Any] = {"host": hash_token(host_token)}
        # The table's own settings (beside the rules' options): logged with
        # the creation, which is where the lobby and the leaves read them.
        table: dict[str, Any] = (
            {"replace_leavers": replace_leavers} if replace_leavers else {}
        )
        if time_control is not None and time_control.check().timed:
            table["time_control"] = time_control.to_body()
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
                self.store.append(game_id, 0, [new_event(created)], command)
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
            return Created(game_id, self._seat_bots(game_id, bots), host_token)
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
                result = self.store.append(
                    old_id, state.version, [new_event(e) for e in events], command
                )
            except (ConcurrencyError, DuplicateCommand):
                continue  # another player's rematch came first: that one
            self.games.after_append(old_id, loaded, events, result.last_version)
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
        settings = self.settings_of(old.game_id)
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

    def creation_of(self, game_id: str) -> dict[str, Any]:
        """The body of the game's logged creation (empty if none)."""
        record = self.store.find_command(game_id, CREATE)
        if record is None:
            return {}
        body: dict[str, Any] = record.payload.get("command", {})
        return body

    def settings_of(self, game_id: str) -> dict[str, Any]:
        """The table settings the game was created with (``replace_leavers``,
        …), from its logged creation."""
        record = self.store.find_command(game_id, CREATE)
        if record is None:
            return {}
        body: dict[str, Any] = record.payload.get("command", {})
        return {k: v for k, v in body.items() if k in TABLE_SETTINGS}

    def time_control_of(self, game_id: str) -> TimeControl:
        """The game's time control (none for a game created without)."""
        return TimeControl.from_body(self.settings_of(game_id).get("time_control"))

    def host_of(self, game_id: str) -> tuple[str, str]:
        """(creator, host token hash) of a game, from its logged creation
        (empty strings for a game created before creations were logged)."""
        record = self.store.find_command(game_id, CREATE)
        if record is None:
            return "", ""
        return record.actor, str(record.payload.get("command", {}).get("host", ""))

    def join_game(
        self, caller: Caller, game_id: str, seat: int | None, name: str
    ) -> tuple[int, str, int]:
        """Take a seat; returns (seat, token, version)."""
        name = inputs.player_name(name)
        with self.open_seats.reserve(caller) as reservation:
            return self._join(caller, game_id, seat, name, reservation)

    def _join(
        self,
        caller: Caller,
        game_id: str,
        seat: int | None,
        name: str,
        reservation: Reservation,
    ) -> tuple[int, str, int]:
        reserved = {
            int(s): kept
            for s, kept in self.creation_of(game_id).get("reserved", {}).items()
        }
        for _ in range(MAX_RETRIES):
            loaded = self.games.load(game_id)
            state = loaded.state
            token = (
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
            taken, version = self._append_join(
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
                f"Seat {seat} of this rematch is kept for its player of the previous "
                "game; claim it with that game's seat token.",
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
                owners.append(self.host_of(game_id)[1])
            allowed = caller.admin or (
                bool(caller.token) and caller.token_hash in owners
            )
            if not allowed:
                raise PermissionDenied(
                    "NOT_YOUR_SEAT",
                    f"Only seat {seat}'s player or the admin may take it out of "
                    "the game."
                    if started
                    else f"Only seat {seat}'s player, the game's host or the "
                    "admin may free it.",
                )
            return_version = self._append_leave(game_id, loaded, seat, caller)
            if return_version:
                return return_version
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
        replace_leavers = str(self.settings_of(game_id).get("replace_leavers", ""))
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
            result = self.store.append(
                game_id, state.version, [new_event(e) for e in events], command
            )
        except (ConcurrencyError, DuplicateCommand):
            return 0  # the game changed meanwhile: decide again
        self.games.after_append(game_id, loaded, events, result.last_version)
        return result.last_version

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
            result = self.store.append(
                game_id, state.version, [new_event(e) for e in events], command
            )
        except (ConcurrencyError, DuplicateCommand):
            return False
        self.games.after_append(game_id, loaded, events, result.last_version)
        return True

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
                result = self.store.append(
                    game_id,
                    state.version,
                    [new_event(e) for e in events],
                    command,
                )
            except DuplicateCommand as duplicate:
                return duplicate.record.outcome.last_version  # started meanwhile
            except ConcurrencyError:
                continue
            self.games.after_append(game_id, loaded, events, result.last_version)
            return result.last_version
        raise Aborted("TOO_MUCH_CONTENTION", "The game changed too often; retry.")

    @staticmethod
    def _check_bots(
        game_type: str, players: int, bots: Sequence[tuple[int, str]]
    ) -> None:
        seen: set[int] = set()
        for seat, kind in bots:
            if not 0 <= seat < players or seat in seen:
                raise InvalidArgument(
                    "BOT_SEAT_INVALID",
                    f"Bot seat {seat} is out of range (0 to {players - 1}) "
                    "or listed twice.",
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

    def _append_join(
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
            result = self.store.append(
                game_id, state.version, [new_event(e) for e in events], command
            )
        except (ConcurrencyError, DuplicateCommand):
            return taken, 0
        self.games.after_append(game_id, loaded, events, result.last_version)
        return taken, result.last_version

    #: Taking a seat, for the quick join (:mod:`service.matchmaking`).
    append_join = _append_join

    def _seat_bots(self, game_id: str, bots: Sequence[tuple[int, str]]) -> int:
        """Seat each bot (logged as a join, idempotently); start the game when
        bots fill every seat. Returns the version."""
        for seat, kind in sorted(bots):
            while True:
                loaded = self.games.load(game_id)
                state = loaded.state
                if state.seats[seat] is not None:
                    break  # seated already (a retried creation)
                _, version = self._append_join(
                    game_id, loaded, seat, f"{kind} bot", "", f"bot:{kind}", kind
                )
                if version:
                    break
        state = self.games.load(game_id).state
        if state.status is Status.OPEN and all(
            s is not None and s.bot for s in state.seats
        ):
            return self.start_game(Caller(bot=True), game_id)
        return state.version


#: The reason of a name that looks like another player's in the game.
NAME_TAKEN = "NAME_TAKEN"


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
