"""The lifecycle every game shares, around the game's own rules.

A game's stream starts with :class:`GameCreated` (type, rules version,
players, seed, options, scenario), then one :class:`PlayerJoined` per seat,
then :class:`GameStarted` followed by the game's set-up events, then the
game's own events, and :class:`GameFinished` once its rules say it is over,
followed by :class:`~domain.fairness.SeedRevealed` when the game committed to
its seed at creation (:mod:`domain.fairness`).

A seat may leave a started game (:class:`SeatLeft`): a bot takes it over
when the game was created so, otherwise the seat is out. What "out" means
is the game's rule (:meth:`~domain.rules.GameRules.leave` and
:meth:`~domain.rules.GameRules.stand_in`); the lifecycle adds what every
game shares: a seat that is out never acts again, it shares no win, a
competitive game with one seat still in ends with that seat the winner
(:data:`OPPONENTS_LEFT`), and a game whose last person leaves ends
(:data:`ABANDONED`).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic

from domain import codec
from domain.chance import Rng
from domain.commitment import SeedRevealed, commitment
from domain.errors import InvalidCommand, NotYourSeat, RuleViolation
from domain.frozen import replace
from domain.rules import GameConfig, GameRules, Outcome, S, Upcaster, Viewer
from domain.seats import no_such_seat, seat_number


def event_schema_version(cls: type) -> int:
    """The schema version an event class is written at (1 unless it says)."""
    version: int = getattr(cls, "schema_version", 1)
    return version


class Status(enum.Enum):
    """Where a game is in its life."""

    OPEN = "open"
    ACTIVE = "active"
    FINISHED = "finished"


@dataclass(frozen=True)
class GameCreated:
    """The first event of every game: everything needed to replay it.

    ``commitment`` (public) commits to ``seed`` under ``salt`` (both secret
    while the game runs: :mod:`domain.fairness`); with ``reveal``, the end of
    the game reveals them. Games created before commitments have none."""

    game_type: str
    rules_version: str
    players: int
    seed: str
    options: dict[str, Any]
    scenario: dict[str, Any] | None = None
    commitment: str = ""
    salt: str = ""
    reveal: bool = False


@dataclass(frozen=True)
class PlayerJoined:
    """A seat was taken. ``token_hash`` is the SHA-256 of the seat token.

    Schema 2 renamed ``name`` to ``player_name`` (the name the API uses) and
    made ``bot`` explicit; schema 1 events are upcast when read.
    """

    schema_version: ClassVar[int] = 2

    seat: int
    player_name: str
    token_hash: str
    bot: str = ""


def _player_joined_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in data.items() if k != "name"}
    out["player_name"] = data["name"]
    out.setdefault("bot", "")
    return out


#: Upcasters of the lifecycle events: (event type, from schema) -> function
#: returning the body at the next schema.
LIFECYCLE_UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("PlayerJoined", 1): _player_joined_v1_to_v2,
}


@dataclass(frozen=True)
class PlayerLeft:
    """A seat was given up before the game started (by its player, the
    game's creator or the admin): it is free again."""

    seat: int


@dataclass(frozen=True)
class SeatLeft:
    """A seat left a started game (its player, the admin for it, or the
    service on a forfeit). ``bot``: the bot kind that took the seat over (a
    game created with ``replace_leavers: bot``); empty: the seat is out."""

    seat: int
    bot: str = ""


@dataclass(frozen=True)
class RematchCreated:
    """The next game of this finished one was created: ``game_id``."""

    game_id: str


@dataclass(frozen=True)
class GameStarted:
    """Every seat was taken and play began; the set-up events follow."""


@dataclass(frozen=True)
class GameFinished:
    """The game is over."""

    winners: tuple[int, ...]
    result: str


LIFECYCLE_EVENTS: tuple[type, ...] = (
    GameCreated,
    PlayerJoined,
    PlayerLeft,
    GameStarted,
    GameFinished,
    SeatLeft,
    RematchCreated,
    SeedRevealed,
)

#: The command log's types of the lifecycle commands (a game command is
#: logged under its class name); :meth:`Session.redo` decides each again.
JOIN = "JoinGame"
START = "StartGame"
LEAVE = "LeaveGame"
EXPIRE = "ExpireGame"
REMATCH = "Rematch"

#: The result of a game that expired before it started.
EXPIRED = "expired"
#: The result of a game whose last person left (no winner).
ABANDONED = "abandoned"
#: The result of a competitive game every other seat left: the one still in
#: wins.
OPPONENTS_LEFT = "opponents_left"
#: Moves the stand-ins of seats that are out may make after one command (a
#: bound against a game whose stand-ins would play on forever).
MAX_STAND_IN_MOVES = 10_000


@dataclass(frozen=True)
class SeatInfo:
    """Who sits in a seat."""

    name: str
    token_hash: str
    bot: str = ""


@dataclass(frozen=True)
class SessionState(Generic[S]):
    """A game with its lifecycle: the folded state of a whole stream."""

    game_type: str
    rules_version: str
    config: GameConfig[S]
    status: Status
    seats: tuple[SeatInfo | None, ...]
    game: S
    version: int
    outcome: Outcome | None = None
    #: Seats that left the started game and are out (a seat a bot took over
    #: is not listed: it plays on).
    left: tuple[int, ...] = ()
    #: The id of this finished game's rematch, once created.
    rematch: str = ""
    #: What the end of the game reveals (a game that committed to its seed
    #: and did not switch the reveal off), until it is revealed.
    reveal: SeedRevealed | None = None

    def seats_of(self, token_hash: str) -> frozenset[int]:
        """Seats whose token hashes to ``token_hash``."""
        return frozenset(
            i
            for i, s in enumerate(self.seats)
            if s is not None and s.token_hash == token_hash
        )

    @property
    def free_seats(self) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self.seats) if s is None)

    @property
    def seats_in(self) -> tuple[int, ...]:
        """Seats still in the game (people and bots), not those that left."""
        return tuple(i for i in range(len(self.seats)) if i not in self.left)

    @property
    def people_in(self) -> tuple[int, ...]:
        """Seats still in the game that a person plays (not a bot)."""
        return tuple(
            i
            for i in self.seats_in
            if (info := self.seats[i]) is not None and not info.bot
        )


class Session(Generic[S]):
    """Lifecycle decisions and folding for one game type."""

    def __init__(self, rules: GameRules[S, Any, Any, Any]) -> None:
        self.rules = rules
        self._event_types: dict[str, type] = {
            t.__name__: t for t in (*LIFECYCLE_EVENTS, *rules.event_types)
        }
        # A game's own events skip the lifecycle's match in ``evolve``.
        self._game_events = frozenset(rules.event_types) - set(LIFECYCLE_EVENTS)
        self._command_types: dict[str, type] = {
            t.__name__: t for t in rules.command_types
        }
        self._upcasters: dict[tuple[str, int], Upcaster] = {
            **LIFECYCLE_UPCASTERS,
            **rules.upcasters,
        }

    # -- creating -----------------------------------------------------------

    def create(
        self,
        players: int,
        seed: str,
        options: Any = None,
        scenario: Any = None,
        salt: str = "",
        reveal: bool = True,
    ) -> GameCreated:
        """The first event of a new game, after checking its configuration.
        With a ``salt``, it commits to ``seed`` (and with ``reveal``, the end
        of the game reveals both: :mod:`domain.fairness`)."""
        rules = self.rules
        if not rules.min_players <= players <= rules.max_players:
            raise InvalidCommand(
                "PLAYER_COUNT_OUT_OF_RANGE",
                f"{rules.title} takes {rules.min_players} to {rules.max_players} "
                f"players, not {players}.",
            )
        if options is None:
            options = rules.options_type()
        config: GameConfig[S] = GameConfig(players, seed, options, scenario)
        rules.validate_config(config)
        if rules.position(config) is not None:
            self._check_position(config)
        return GameCreated(
            game_type=rules.game_type,
            rules_version=rules.rules_version,
            players=players,
            seed=seed,
            options=codec.encode(options),
            scenario=None if scenario is None else codec.encode(scenario),
            commitment=commitment(seed, salt) if salt else "",
            salt=salt,
            reveal=bool(salt) and reveal,
        )

    def _check_position(self, config: GameConfig[S]) -> None:
        """What every game's position must allow, beyond the game's own
        checks (``validate_config``): once set up, the game is not over and
        a seat may act (a game that started stuck or finished is no game)."""
        rules = self.rules
        game = rules.initial_state(config)
        # Any stream of draws: the real start draws with another (the
        # version the last seat's join leaves), but a position's start draws
        # only what the position leaves to chance (a shuffled rest), which
        # decides neither whether the game is over nor whether a seat may act.
        for event in rules.start(game, Rng(config.seed, 0)):
            game = rules.evolve(game, event)
        if rules.is_terminal(game):
            raise InvalidCommand(
                "POSITION_GAME_OVER",
                "The position is a finished game: nothing is left to play.",
                "position",
            )
        if not rules.active_seats(game):
            raise InvalidCommand(
                "POSITION_NOBODY_TO_MOVE",
                "In the position no seat may act.",
                "position",
            )

    # -- folding ------------------------------------------------------------

    def event_type(self, name: str) -> type:
        """The event class stored under ``name``."""
        try:
            return self._event_types[name]
        except KeyError:
            raise codec.CodecError(f"unknown event type {name!r}") from None

    def command_type(self, name: str) -> type:
        """The command class called ``name``."""
        try:
            return self._command_types[name]
        except KeyError:
            raise codec.CodecError(f"unknown command type {name!r}") from None

    def decode_event(self, name: str, data: Any, schema_version: int = 0) -> Any:
        """The event stored as ``name`` with body ``data`` at ``schema_version``
        (0: the current one), upcast to the current schema first."""
        cls = self.event_type(name)
        current = event_schema_version(cls)
        version = schema_version or current
        if version > current:
            raise codec.CodecError(
                f"{name} schema {version} is newer than this code's ({current})"
            )
        while version < current:
            upcaster = self._upcasters.get((name, version))
            if upcaster is None:
                raise codec.CodecError(f"no upcaster for {name} schema {version}")
            try:
                data = upcaster(data)
            except (KeyError, IndexError, TypeError, AttributeError) as error:
                # An upcaster reads the old shape; junk has none.
                raise codec.CodecError(
                    f"cannot upcast {name} schema {version}: {error!r}"
                ) from error
            version += 1
        return codec.decode(cls, data)

    def encode_state(self, state: SessionState[S]) -> Any:
        """A JSON form of the whole state (for snapshots)."""
        return codec.encode(state)

    def decode_state(self, data: Any) -> SessionState[S]:
        """The state :meth:`encode_state` encoded."""
        rules = self.rules
        config = data["config"]
        return SessionState(
            game_type=codec.decode(str, data["game_type"]),
            rules_version=codec.decode(str, data["rules_version"]),
            config=GameConfig(
                players=codec.decode(int, config["players"]),
                seed=codec.decode(str, config["seed"]),
                options=codec.decode(rules.options_type, config["options"]),
                scenario=None
                if config["scenario"] is None
                else codec.decode(rules.scenario_type, config["scenario"]),
            ),
            status=codec.decode(Status, data["status"]),
            seats=codec.decode(tuple[SeatInfo | None, ...], data["seats"]),
            game=codec.decode(rules.state_type, data["game"]),
            version=codec.decode(int, data["version"]),
            outcome=codec.decode(Outcome | None, data["outcome"]),  # type: ignore[arg-type]
            left=codec.decode(tuple[int, ...], data.get("left", [])),
            rematch=codec.decode(str, data.get("rematch", "")),
            reveal=codec.decode(SeedRevealed | None, data.get("reveal")),  # type: ignore[arg-type]
        )

    def fold(
        self, events: Iterable[Any], state: SessionState[S] | None = None
    ) -> SessionState[S]:
        """The state after ``events`` (from the start, or from ``state``)."""
        for event in events:
            state = self.evolve(state, event)
        if state is None:
            raise ValueError("a game needs at least its GameCreated event")
        return state

    def evolve(self, state: SessionState[S] | None, event: Any) -> SessionState[S]:
        """The state after one event."""
        if state is None:
            if not isinstance(event, GameCreated):
                raise ValueError("the first event of a game must be GameCreated")
            rules = self.rules
            config: GameConfig[S] = GameConfig(
                players=event.players,
                seed=event.seed,
                options=codec.decode(rules.options_type, event.options),
                scenario=None
                if event.scenario is None
                else codec.decode(rules.scenario_type, event.scenario),
            )
            return SessionState(
                game_type=event.game_type,
                rules_version=event.rules_version,
                config=config,
                status=Status.OPEN,
                seats=(None,) * event.players,
                game=rules.initial_state(config),
                version=1,
                reveal=SeedRevealed(event.seed, event.salt, event.scenario)
                if event.reveal and event.commitment
                else None,
            )
        version = state.version + 1
        if type(event) in self._game_events:
            game = self.rules.evolve(state.game, event)
            return replace(state, game=game, version=version)
        match event:
            case PlayerJoined(
                seat=seat, player_name=name, token_hash=token_hash, bot=bot
            ):
                seats = list(state.seats)
                seats[seat] = SeatInfo(name, token_hash, bot)
                return replace(state, seats=tuple(seats), version=version)
            case PlayerLeft(seat=seat):
                seats = list(state.seats)
                seats[seat] = None
                return replace(state, seats=tuple(seats), version=version)
            case SeatLeft(seat=seat, bot=bot):
                if bot:
                    # A bot plays the seat from now on; no token acts for it.
                    seats = list(state.seats)
                    info = seats[seat]
                    name = info.name if info is not None else ""
                    seats[seat] = SeatInfo(name, "", bot)
                    return replace(state, seats=tuple(seats), version=version)
                return replace(state, left=(*state.left, seat), version=version)
            case RematchCreated(game_id=game_id):
                return replace(state, rematch=game_id, version=version)
            case GameStarted():
                return replace(state, status=Status.ACTIVE, version=version)
            case GameFinished(winners=winners, result=result):
                return dataclasses.replace(
                    state,
                    status=Status.FINISHED,
                    outcome=Outcome(winners, result),
                    version=version,
                )
            case SeedRevealed():
                return dataclasses.replace(state, reveal=None, version=version)
            case GameCreated():
                raise ValueError("GameCreated can only be the first event")
            case _:
                game = self.rules.evolve(state.game, event)
                return replace(state, game=game, version=version)

    # -- deciding -----------------------------------------------------------

    def join(
        self,
        state: SessionState[S],
        name: str,
        token_hash: str,
        seat: int | None = None,
        bot: str = "",
    ) -> list[Any]:
        """Take ``seat`` (or the first free one)."""
        if state.status is not Status.OPEN:
            raise RuleViolation("GAME_ALREADY_STARTED", "This game has started.")
        if seat is None:
            if not state.free_seats:
                raise RuleViolation("NO_FREE_SEAT", "Every seat is taken.")
            seat = state.free_seats[0]
        if not 0 <= seat < len(state.seats):
            raise InvalidCommand(
                "SEAT_OUT_OF_RANGE",
                no_such_seat(seat, len(state.seats)),
            )
        if state.seats[seat] is not None:
            raise RuleViolation(
                "SEAT_TAKEN", f"Seat {seat_number(seat)} is taken: choose another."
            )
        return [
            PlayerJoined(seat=seat, player_name=name, token_hash=token_hash, bot=bot)
        ]

    def leave(
        self,
        state: SessionState[S],
        seat: int,
        bot: str = "",
        rng: Rng | None = None,
    ) -> list[Any]:
        """Give up ``seat``: before the start it is free again
        (:class:`PlayerLeft`); once started the seat leaves the game
        (:class:`SeatLeft`): ``bot`` (a bot kind) takes it over, or else it
        is out, as the game's rules say (:meth:`GameRules.leave`), and the
        lifecycle ends the game when nobody (or, in a competitive game, one
        seat) is left in it."""
        if not 0 <= seat < len(state.seats):
            raise InvalidCommand(
                "SEAT_OUT_OF_RANGE",
                no_such_seat(seat, len(state.seats)),
            )
        if state.status is Status.FINISHED:
            raise RuleViolation("GAME_FINISHED", "This game is over.")
        info = state.seats[seat]
        if info is None:
            raise RuleViolation("SEAT_FREE", f"Seat {seat_number(seat)} is not taken.")
        if state.status is Status.OPEN:
            return [PlayerLeft(seat=seat)]
        if seat in state.left:
            raise RuleViolation(
                "SEAT_LEFT", f"Seat {seat_number(seat)} has left the game."
            )
        if info.bot:
            raise RuleViolation("BOT_SEAT", f"A bot plays seat {seat_number(seat)}.")
        left = SeatLeft(seat=seat, bot=bot)
        after = self.evolve(state, left)
        if not after.people_in:
            # The last person left (bots play for nobody): the game ends,
            # and the seat stays its player's (no bot takes over a game
            # that is over).
            left = SeatLeft(seat=seat)
            return [left, *self.finish(state, Outcome((), ABANDONED))]
        if bot:
            return [left]
        rng = rng or Rng(state.config.seed, state.version)
        own = self.rules.leave(after.game, seat, after.seats_in)
        events, after = self._fold_game([left], after, own)
        if not self.rules.cooperative and len(after.seats_in) == 1:
            ending = self.finish(after, Outcome(after.seats_in, OPPONENTS_LEFT))
            return [*events, *ending]
        return self._finished(*self._stand_ins(after, events, rng))[0]

    def _fold_game(
        self, events: list[Any], state: SessionState[S], more: list[Any]
    ) -> tuple[list[Any], SessionState[S]]:
        game = state.game
        for event in more:
            game = self.rules.evolve(game, event)
        state = replace(state, game=game, version=state.version + len(more))
        return [*events, *more], state

    def _stand_ins(
        self, state: SessionState[S], events: list[Any], rng: Rng
    ) -> tuple[list[Any], SessionState[S]]:
        """While a seat that is out may act, its stand-in (the game's rule,
        :meth:`GameRules.stand_in`) moves for it, in the same command."""
        if not state.left:
            return events, state
        rules = self.rules
        for _ in range(MAX_STAND_IN_MOVES):
            game = state.game
            if rules.is_terminal(game):
                break
            waiting = sorted(rules.active_seats(game) & set(state.left))
            if not waiting:
                break
            seat = waiting[0]
            command = rules.stand_in(game, seat)
            more, game = rules.decide_and_evolve(game, seat, command, rng)
            events = [*events, *more]
            state = replace(state, game=game, version=state.version + len(more))
        return events, state

    def _finished(
        self, events: list[Any], after: SessionState[S]
    ) -> tuple[list[Any], SessionState[S]]:
        """``events`` and the state after them, with the lifecycle's
        :class:`GameFinished` once the rules say the game is over. Seats that
        left share no win: the competitive games' rules rank them below the
        seats still in themselves (their own events say who won instead),
        so this drops a leaver only from the win of a co-operative game or
        of an older rules version, which gave a leaver's win to nobody."""
        rules = self.rules
        if rules.is_terminal(after.game):
            outcome = rules.outcome(after.game)
            winners = tuple(w for w in outcome.winners if w not in after.left)
            ending = self.finish(after, Outcome(winners, outcome.result))
            events = [*events, *ending]
            after = self.fold(ending, after)
        return events, after

    def finish(self, state: SessionState[S], outcome: Outcome) -> list[Any]:
        """The events that end the game with ``outcome``: GameFinished, then
        what a game committed to its seed reveals."""
        ending: list[Any] = [GameFinished(outcome.winners, outcome.result)]
        if state.reveal is not None:
            ending.append(state.reveal)
        return ending

    def rematch(self, state: SessionState[S], game_id: str) -> list[Any]:
        """Link this finished game to its rematch ``game_id`` (one only)."""
        if state.status is not Status.FINISHED:
            raise RuleViolation(
                "GAME_NOT_FINISHED", "A rematch follows a finished game."
            )
        if state.rematch:
            raise RuleViolation(
                "REMATCH_EXISTS", f"This game's rematch is {state.rematch}."
            )
        return [RematchCreated(game_id=game_id)]

    def expire(self, state: SessionState[S]) -> list[Any]:
        """End a game that was never started (no winners)."""
        if state.status is not Status.OPEN:
            raise RuleViolation(
                "GAME_ALREADY_STARTED", "Only a game not yet started can expire."
            )
        return self.finish(state, Outcome((), EXPIRED))

    def start(self, state: SessionState[S], rng: Rng) -> list[Any]:
        """Start a game whose seats are all taken."""
        if state.status is not Status.OPEN:
            raise RuleViolation("GAME_ALREADY_STARTED", "This game has started.")
        if state.free_seats:
            raise RuleViolation(
                "SEATS_NOT_FILLED",
                "Not every seat is taken; still free: "
                + ", ".join(f"seat {seat_number(s)}" for s in state.free_seats)
                + ".",
            )
        started = dataclasses.replace(state, status=Status.ACTIVE)
        return self._with_finish(
            started, [GameStarted(), *self.rules.start(state.game, rng)]
        )

    def play(
        self, state: SessionState[S], seat: int, command: Any, rng: Rng
    ) -> list[Any]:
        """The events a game command from ``seat`` causes."""
        return self.advance(state, seat, command, rng)[0]

    def advance(
        self, state: SessionState[S], seat: int, command: Any, rng: Rng
    ) -> tuple[list[Any], SessionState[S]]:
        """The events a game command from ``seat`` causes (as :meth:`play`),
        and the state after them (as :meth:`fold` would give), evolving each
        event once."""
        if state.status is Status.OPEN:
            raise RuleViolation("GAME_NOT_STARTED", "This game has not started.")
        if state.status is Status.FINISHED:
            raise RuleViolation("GAME_FINISHED", "This game is over.")
        if not 0 <= seat < len(state.seats):
            raise NotYourSeat("NOT_YOUR_SEAT", no_such_seat(seat, len(state.seats)))
        if seat in state.left:
            raise NotYourSeat(
                "SEAT_LEFT", f"Seat {seat_number(seat)} has left the game."
            )
        rules = self.rules
        events, game = rules.decide_and_evolve(state.game, seat, command, rng)
        after = replace(state, game=game, version=state.version + len(events))
        events, after = self._stand_ins(after, events, rng)
        return self._finished(events, after)

    def _with_finish(self, state: SessionState[S], events: list[Any]) -> list[Any]:
        game = state.game
        for event in events:
            if not isinstance(event, LIFECYCLE_EVENTS):
                game = self.rules.evolve(game, event)
        if self.rules.is_terminal(game):
            events = [*events, *self.finish(state, self.rules.outcome(game))]
        return events

    def redo(
        self, state: SessionState[S], kind: str, seat: int, body: Any, rng: Rng
    ) -> list[Any]:
        """Decide again a command of the log (its ``kind``: a lifecycle
        command's or a game command's type name; ``body`` as logged), at
        ``state``: how a game is re-executed from its seed."""
        if kind == JOIN:
            return self.join(
                state,
                str(body["player_name"]),
                str(body.get("token_hash", "")),
                seat,
                str(body.get("bot", "")),
            )
        if kind == START:
            return self.start(state, rng)
        if kind == LEAVE:
            return self.leave(state, seat, str(body.get("bot", "")), rng)
        if kind == EXPIRE:
            return self.expire(state)
        if kind == REMATCH:
            return self.rematch(state, str(body["game_id"]))
        command: Any = codec.decode(self.command_type(kind), body)
        return self.play(state, seat, command, rng)

    def _redacted_position(
        self, event: GameCreated, viewer: Viewer
    ) -> dict[str, Any] | None:
        """A scenario holding only the position of ``event``'s scenario, as
        ``viewer`` may see it; None for a game that started from none."""
        if event.scenario is None or event.scenario.get("position") is None:
            return None
        rules = self.rules
        position: Any = codec.decode(rules.scenario_type, event.scenario).position
        return {"position": codec.encode(rules.redact_position(position, viewer))}

    # -- looking ------------------------------------------------------------

    def legal_actions(self, state: SessionState[S], seat: int) -> list[Any]:
        if state.status is not Status.ACTIVE or seat in state.left:
            return []
        return self.rules.legal_actions(state.game, seat)

    def active_seats(self, state: SessionState[S]) -> frozenset[int]:
        if state.status is not Status.ACTIVE:
            return frozenset()
        return self.rules.active_seats(state.game) - set(state.left)

    def redact(self, event: Any, viewer: Viewer) -> Any:
        """An event as ``viewer`` may see it. Lifecycle events are public but
        for the token hashes, the seed and the scenario, which only an admin
        sees."""
        if isinstance(event, PlayerJoined):
            if viewer.sees_everything:
                return event
            return dataclasses.replace(event, token_hash="")
        if isinstance(event, GameCreated):
            if viewer.sees_everything:
                return event
            # The seed and the scenario foretell every draw: admin only (the
            # salt too, which with the commitment would let a guessable seed
            # be found); the commitment is public. A position the game starts
            # from is shown as the viewer's seats could see it.
            return dataclasses.replace(
                event, seed="", scenario=self._redacted_position(event, viewer), salt=""
            )
        if isinstance(event, LIFECYCLE_EVENTS):
            return event
        return self.rules.redact(event, viewer)
