"""The shape every game's rules take (the Decider pattern, with viewers).

A game is one object with these methods, all pure:

- ``initial_state(config)``: the state before anything happened;
- ``start(state, rng)``: the events that set the table (shuffles, deals);
- ``decide(state, seat, command, rng)``: the events a command causes, or a
  :class:`~domain.errors.DomainError`;
- ``evolve(state, event)``: the state after an event (never draws chance,
  reads a clock or does I/O);
- ``decide_and_evolve``: both at once (a game whose ``decide`` already
  folds its events may return the state it reached);
- ``is_terminal`` / ``outcome``: whether and how the game ended;
- ``active_seats`` / ``legal_actions``: who may act now, and with what;
- ``view(state, viewer)`` / ``redact(event, viewer)``: what a viewer may see.

Beside them the class declares the rest of what the service needs of a game:
its shapes (``options_type``, ``command_types``, ``event_types``, …), its
``rules_version``, its ``bots``, the ``upcasters`` of its stored events and
whether it is ``cooperative``.

States, commands, events, views, options and scenarios are frozen
dataclasses built from ``int``, ``str``, ``bool``, enums, tuples and other
such dataclasses, so :mod:`domain.codec` can store them and the service can
map them onto the game's protobuf messages field by field.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from domain.chance import Rng

S = TypeVar("S")
C = TypeVar("C")
E = TypeVar("E")
V = TypeVar("V")


#: Reads a stored event's body at one schema version and returns it at the
#: next one.
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


class Bot(Protocol):
    """A player: picks one of ``legal`` from what ``view`` shows (the view of
    its seat, never the state; see :mod:`domain.bots`)."""

    def __call__(self, view: Any, legal: Sequence[Any], rng: Rng) -> Any:
        """One of ``legal`` (never empty). Must not keep state between calls."""
        ...


class Search(Protocol):
    """What the strong bot (:mod:`domain.search`) needs of a game besides its
    rules: a game's ``search.py`` adapter."""

    #: Moves a playout makes before :meth:`evaluate` judges where it got
    #: (a game whose playouts are cheap plays them to the end).
    horizon: int

    def determinise(self, state: Any, seat: int, rng: Rng) -> Any:
        """A state ``seat`` cannot tell from ``state``: everything the seat
        may not see (other hands, deck orders, face-down cards, scripted
        chance) dealt again at random from what it could be. The result
        depends on ``state`` only through what the seat sees, and on
        ``rng``."""
        ...

    def evaluate(self, state: Any, seat: int) -> float:
        """How good an unfinished ``state`` is for ``seat``, from 0 (lost)
        to 1 (won)."""
        ...

    def resting(self, state: Any) -> bool:
        """True where a playout may stop before ``horizon`` for
        :meth:`evaluate` to judge ``state`` (a point the game's evaluation
        is made for, such as the start of a round); a game that is judged
        only at ``horizon`` or the end answers False."""
        ...


class Role(enum.Enum):
    """Who is looking at a game."""

    PLAYER = "player"
    SPECTATOR = "spectator"
    ADMIN = "admin"


@dataclass(frozen=True)
class Viewer:
    """A viewer: the seats it plays (none for a spectator) and its role."""

    seats: frozenset[int] = frozenset()
    role: Role = Role.SPECTATOR

    @property
    def sees_everything(self) -> bool:
        return self.role is Role.ADMIN

    def plays(self, seat: int) -> bool:
        """True when the viewer may see what ``seat`` may see."""
        return self.sees_everything or seat in self.seats

    @staticmethod
    def admin() -> Viewer:
        return Viewer(frozenset(), Role.ADMIN)

    @staticmethod
    def spectator() -> Viewer:
        return Viewer(frozenset(), Role.SPECTATOR)

    @staticmethod
    def player(*seats: int) -> Viewer:
        return Viewer(frozenset(seats), Role.PLAYER)


@dataclass(frozen=True)
class GameConfig(Generic[S]):
    """What a game was created with. ``options`` and ``scenario`` are the
    game's own dataclasses (``scenario`` is None unless an admin gave one)."""

    players: int
    seed: str
    options: Any
    scenario: Any


@dataclass(frozen=True)
class Outcome:
    """How a game ended: the winning seats (all seats for a co-op win, none
    for a co-op loss) and a short machine-readable result."""

    winners: tuple[int, ...]
    result: str


class GameRules(abc.ABC, Generic[S, C, E, V]):
    """One game's rules. Subclass per game; instances hold no mutable state."""

    game_type: ClassVar[str]
    title: ClassVar[str]
    rules_version: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    options_type: ClassVar[type]
    scenario_type: ClassVar[type]
    state_type: ClassVar[type]
    view_type: ClassVar[type]
    command_types: ClassVar[tuple[type, ...]]
    event_types: ClassVar[tuple[type, ...]]

    #: The game's own bots by kind (``{"heuristic": heuristic_bot}``); every
    #: game also has the ``random`` bot (:mod:`domain.bots`).
    bots: ClassVar[Mapping[str, Bot]] = {}
    #: The game's adapter for the strong bot (``domain/<game_type>/search.py``).
    search: ClassVar[Search | None] = None
    #: Upcasters of the game's stored events: (event type, the schema version
    #: it reads) to the function returning the body at the next version.
    #: Stored events are never rewritten; they are upcast when read.
    upcasters: ClassVar[Mapping[tuple[str, int], Upcaster]] = {}
    #: True for a co-operative game: every seat wins or loses together (a
    #: win's ``Outcome.winners`` is every seat, a loss's is empty).
    cooperative: ClassVar[bool] = False

    def validate_config(self, config: GameConfig[S]) -> None:
        """Raise :class:`~domain.errors.InvalidCommand` for bad options or
        scenario, naming the field that is wrong: an option's as
        ``options.<field>`` (``options.rounds``), a scenario's by its path
        in the scenario (``position.hands[1]``). Every option's zero (0,
        False, empty) is the rulebook's value (tests/domain/test_options.py
        holds every game to it)."""

    # -- starting from a position ---------------------------------------------

    #: The game's position (a frozen dataclass, the proto's ``Position``):
    #: a state of the game set by an admin, for tutorials, puzzles and
    #: tests. It is the scenario's ``position`` field; ``initial_state``
    #: builds the game's state from it and ``start`` deals nothing more.
    #: None: the game cannot start from a position.
    position_type: ClassVar[type | None] = None

    @staticmethod
    def position(config: GameConfig[S]) -> Any:
        """The position ``config``'s scenario starts from, or None."""
        return getattr(config.scenario, "position", None)

    def redact_position(self, position: Any, viewer: Viewer) -> Any:
        """``position`` as ``viewer`` may see it: what its seats could see at
        the start of such a game (another seat's hand, a deck's order are
        blanked as in the game's events). Every game with a
        ``position_type`` overrides this."""
        raise NotImplementedError(f"{type(self).__name__} has no positions")

    @abc.abstractmethod
    def initial_state(self, config: GameConfig[S]) -> S:
        """The state before the game starts."""

    @abc.abstractmethod
    def start(self, state: S, rng: Rng) -> list[E]:
        """The events that set up the game once every seat is taken."""

    @abc.abstractmethod
    def decide(self, state: S, seat: int, command: C, rng: Rng) -> list[E]:
        """The events ``command`` from ``seat`` causes; DomainError if refused."""

    @abc.abstractmethod
    def evolve(self, state: S, event: E) -> S:
        """The state after ``event``."""

    def decide_and_evolve(
        self, state: S, seat: int, command: C, rng: Rng
    ) -> tuple[list[E], S]:
        """What :meth:`decide` returns, and the state after those events (what
        :meth:`evolve` gives folding them over ``state``). A game whose
        ``decide`` folds its events as it goes overrides this to hand back
        the state it reached, so a player's move is evolved only once."""
        events = self.decide(state, seat, command, rng)
        for event in events:
            state = self.evolve(state, event)
        return events, state

    @abc.abstractmethod
    def is_terminal(self, state: S) -> bool:
        """True once the game is over."""

    @abc.abstractmethod
    def outcome(self, state: S) -> Outcome:
        """How a terminal game ended."""

    @abc.abstractmethod
    def active_seats(self, state: S) -> frozenset[int]:
        """Seats that may (or must) act now."""

    @abc.abstractmethod
    def legal_actions(self, state: S, seat: int) -> list[C]:
        """Every command ``seat`` may send now (empty when it may not act)."""

    @abc.abstractmethod
    def view(self, state: S, viewer: Viewer) -> V:
        """The state as ``viewer`` may see it."""

    @abc.abstractmethod
    def redact(self, event: E, viewer: Viewer) -> E:
        """``event`` as ``viewer`` may see it (secrets blanked)."""

    # -- a seat leaving a started game ---------------------------------------

    def leave(self, state: S, seat: int, seats_in: tuple[int, ...]) -> list[E]:
        """The game's own events when ``seat`` leaves a started game and is
        out (``seats_in``: the seats still in, people and bots). The
        default: none; the seat's pieces stay where they are and its
        stand-in (:meth:`stand_in`) makes its moves, so the other seats'
        game goes on. Each game's README says what leaving means there."""
        return []

    def stand_in(self, state: S, seat: int) -> C:
        """The move made for ``seat``, which is out, whenever it may act (it
        must be one of :meth:`legal_actions`; the default is the first).
        Deterministic: it is decided again when a game is verified."""
        return self.legal_actions(state, seat)[0]

    #: The game's own event types that can change :meth:`characters` (None:
    #: not said). A reader that needs only the characters, the lifecycle and
    #: the version (the game list projection) folds only these and the
    #: lifecycle's events; each game's tests check the set against a full
    #: fold at every version of random games.
    character_events: ClassVar[frozenset[type] | None] = None

    def characters(self, state: S) -> dict[int, str]:
        """Seat to character (dinosaur, Dino) name, for statistics."""
        return {}


class ImplicitDecisions(GameRules[S, C, E, V]):
    """An older rules version whose events left some decisions unrecorded.

    Its games were stored before those decisions became events of their own
    (a winner, a launch), when the fold made them. Mixed in front of the
    current rules class, it keeps such a version alive with the current
    code: folding, it makes each unrecorded decision again right after the
    event it followed (:meth:`implied`, by the very rule ``decide`` now
    records it with); deciding, it leaves those events out, as that version
    did. So its stored games fold to the state they always had, and their
    commands, decided again, give their stored events byte for byte.
    """

    #: The event types this version did not record.
    unrecorded: ClassVar[tuple[type, ...]]

    @abc.abstractmethod
    def implied(self, state: S, event: E) -> list[E]:
        """The unrecorded events that follow ``event``, given ``state`` (the
        state right after it): what the current rules would decide there."""

    # This class always stands in front of a game's concrete rules class, so
    # ``super()`` below is that class, never GameRules' abstract methods.

    def evolve(self, state: S, event: E) -> S:
        state = super().evolve(state, event)  # type: ignore[safe-super]
        for implied in self.implied(state, event):
            state = super().evolve(state, implied)  # type: ignore[safe-super]
        return state

    def start(self, state: S, rng: Rng) -> list[E]:
        return self._recorded(super().start(state, rng))  # type: ignore[safe-super]

    def decide(self, state: S, seat: int, command: C, rng: Rng) -> list[E]:
        return self.decide_and_evolve(state, seat, command, rng)[0]

    def decide_and_evolve(
        self, state: S, seat: int, command: C, rng: Rng
    ) -> tuple[list[E], S]:
        events, after = super().decide_and_evolve(state, seat, command, rng)
        return self._recorded(events), after

    def leave(self, state: S, seat: int, seats_in: tuple[int, ...]) -> list[E]:
        return self._recorded(super().leave(state, seat, seats_in))

    def _recorded(self, events: list[E]) -> list[E]:
        unrecorded = self.unrecorded
        return [e for e in events if not isinstance(e, unrecorded)]
