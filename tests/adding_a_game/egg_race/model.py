"""Egg Race's shapes: options, scenario, commands, events, state, view."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass


class Phase(enum.Enum):
    WAITING = "waiting"
    RACING = "racing"
    FINISHED = "finished"


@dataclass(frozen=True)
class Options:
    #: The score that wins, 5 to 30; 0 (proto3's zero): the rules' 12.
    target: int = 0


#: The target when the options leave it at 0.
DEFAULT_TARGET = 12


@dataclass(frozen=True)
class Position:
    """A race in progress (admin only, in the scenario): each seat's score,
    whose turn it is, and each seat's nest (1 to 3; empty: drawn at the
    start). A viewer sees 0 for a nest it may not see."""

    scores: tuple[int, ...] = ()
    turn: int = 0
    nests: tuple[int, ...] = ()


@dataclass(frozen=True)
class Scenario:
    rolls: tuple[int, ...] = ()
    position: Position | None = None


@dataclass(frozen=True)
class RollDie:
    pass


@dataclass(frozen=True)
class Hold:
    pass


EggRaceCommand = RollDie | Hold


@dataclass(frozen=True)
class NestDrawn:
    seat: int
    nest: int | None  # None: another player's secret


@dataclass(frozen=True)
class DieRolled:
    seat: int
    value: int


@dataclass(frozen=True)
class TurnPassed:
    next_seat: int


@dataclass(frozen=True)
class RaceWon:
    seat: int


@dataclass(frozen=True)
class RacerLeft:
    """A seat left the game: it is out of the race (its turns are skipped)."""

    seat: int


EggRaceEvent = NestDrawn | DieRolled | TurnPassed | RaceWon | RacerLeft


@dataclass(frozen=True)
class EggRaceState:
    target: int
    scores: tuple[int, ...]
    scenario_rolls: tuple[int, ...] = ()
    rolls_used: int = 0
    nests: dict[int, int] = dataclasses.field(default_factory=dict)
    turn: int = 0
    rolls_this_turn: int = 0
    phase: Phase = Phase.WAITING
    winner: int | None = None
    out: tuple[int, ...] = ()
    #: A position's nests, drawn as they are at the start (empty: at random).
    given_nests: tuple[int, ...] = ()


@dataclass(frozen=True)
class EggRaceView:
    target: int
    scores: tuple[int, ...]
    nests: dict[int, int]
    turn: int
    rolls_this_turn: int
    phase: Phase
    winner: int | None = None
    out: tuple[int, ...] = ()
