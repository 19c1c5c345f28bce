"""The vocabulary of Dinosaurs Extinct?: options, scenario, commands, events,
state and view, as frozen dataclasses (mirrored one to one by
``protos/strata/games/dinosaurs_extinct/v1/dinosaurs_extinct.proto``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

from domain.dinosaurs_extinct.content import EarthEventCard, Space

# -- creation -----------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """Dinosaurs Extinct? has no options."""


@dataclass(frozen=True)
class DinoPosition:
    """A Dino of a position: its step (0, the Prehistoric Era, to the step
    before the 21st Century) and how many overlays of its Life Card show
    bones (0, alive and well, to one fewer than go extinct)."""

    step: int = 0
    bones: int = 0


@dataclass(frozen=True)
class Position:
    """A race in progress (admin only, in the scenario): one Dino per seat,
    whose turn it is (that Dino rolls next), the Earth Event stack from top
    to bottom (every card once; empty: shuffled at the start) and the last
    Earth Event drawn (face up; None: none yet)."""

    dinos: tuple[DinoPosition, ...] = ()
    turn: int = 0
    earth_deck: tuple[int, ...] = ()
    last_earth_event: int | None = None


@dataclass(frozen=True)
class Scenario:
    """Fixed chance (admin only): die results in the order the game rolls
    them (every roll: moves, Earth Events, challenges), then fresh rolls; and
    optionally the Earth Event deck from top to bottom (card ids, all 14).
    ``position``: a race in progress the game starts from (then the stack's
    order is the position's ``earth_deck``, and ``earth_events`` stays
    empty)."""

    dice: tuple[int, ...] = ()
    earth_events: tuple[int, ...] = ()
    position: Position | None = None


# -- commands -----------------------------------------------------------------


@dataclass(frozen=True)
class RollDie:
    """Take your turn: roll, move, and face the space you land on."""


@dataclass(frozen=True)
class SwitchWith:
    """On a Dino Switch space: switch places with the Dino of ``target_seat``."""

    target_seat: int


Command = RollDie | SwitchWith

# -- events -------------------------------------------------------------------


class RollPurpose(enum.Enum):
    """Why the die was rolled."""

    MOVE = "move"
    EARTH_EVENT = "earth_event"
    CHALLENGE = "challenge"


class Heading(enum.Enum):
    """Which way a Dino moves on its turn."""

    FORWARD = "forward"
    BACKWARD = "backward"


@dataclass(frozen=True)
class EarthEventsShuffled:
    """The Earth Event cards were shuffled into a face-down stack. ``order``
    (card ids, top first) is seen by the admin only; others get ``()``."""

    order: tuple[int, ...]
    cards: int


@dataclass(frozen=True)
class DieRolled:
    """The Dino of ``seat`` rolled ``value`` for ``purpose``."""

    seat: int
    value: int
    purpose: RollPurpose


@dataclass(frozen=True)
class DinoMoved:
    """A Dino moved by its roll from ``from_step`` to ``to_step``."""

    seat: int
    from_step: int
    to_step: int
    heading: Heading


@dataclass(frozen=True)
class DinoEnteredTwentyFirstCentury:
    """An alive and well Dino entered the 21st Century (``to_step``, the
    track's last step): it wins.

    Schema 2 added ``to_step`` (the fold used to read it from the board); a
    schema 1 event is upcast with the finish of the board it was played on
    (step 36, unchanged since)."""

    schema_version: ClassVar[int] = 2

    seat: int
    from_step: int
    to_step: int


#: The 21st Century's step on the board of every game stored at schema 1
#: of :class:`DinoEnteredTwentyFirstCentury` (pinned: a later board does not
#: move where those Dinos stand).
SCHEMA_1_FINISH = 36


def dino_entered_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 had no ``to_step``: the finish of the board then."""
    return {**data, "to_step": SCHEMA_1_FINISH}


@dataclass(frozen=True)
class LifeCardRecharged:
    """On "No Bones on Me": every overlay closed, the Dino is alive and well."""

    seat: int


@dataclass(frozen=True)
class EarthEventDrawn:
    """The top Earth Event card was drawn (and goes to the bottom of the stack)."""

    seat: int
    card: int
    name: str
    number: int


@dataclass(frozen=True)
class EarthEventSurvived:
    """The Dino rolled higher than the card's number."""

    seat: int
    card: int


@dataclass(frozen=True)
class OverlayFlipped:
    """The Dino was weakened: one more overlay shows bones (``bones`` now)."""

    seat: int
    bones: int


@dataclass(frozen=True)
class DinoWentExtinct:
    """A complete skeleton: back to the Prehistoric Era, overlays closed."""

    seat: int
    from_step: int


@dataclass(frozen=True)
class DinoChallengeBegan:
    """``seat`` battles ``defenders`` (in rolling order) for the Footprint space."""

    seat: int
    step: int
    defenders: tuple[int, ...]


@dataclass(frozen=True)
class DinoChallengeTied:
    """The highest Dino Power Number was tied: these Dinos roll again."""

    seats: tuple[int, ...]


@dataclass(frozen=True)
class DinoChallengeWon:
    """``seat`` won the territory; ``losers`` lose a bone and go back."""

    seat: int
    losers: tuple[int, ...]


@dataclass(frozen=True)
class DinoPushedBack:
    """A loser of a challenge went back by its own roll (the space is not faced)."""

    seat: int
    from_step: int
    to_step: int


@dataclass(frozen=True)
class DinoSwitchReached:
    """The Dino must now choose another Dino to switch places with."""

    seat: int
    step: int


@dataclass(frozen=True)
class DinosSwitched:
    """``seat`` (from ``seat_step``) and ``target_seat`` (from ``target_step``)
    swapped places; ``seat`` then faces its new space."""

    seat: int
    target_seat: int
    seat_step: int
    target_step: int


@dataclass(frozen=True)
class DinoWarped:
    """Through the Time Warp, from one end to the other."""

    seat: int
    from_step: int
    to_step: int


@dataclass(frozen=True)
class TurnPassed:
    """It is now the turn of ``seat``."""

    seat: int


@dataclass(frozen=True)
class DinoLeftRace:
    """``seat`` left the game: its Dino is off the track for good (no turn,
    no challenge, no switch)."""

    seat: int


@dataclass(frozen=True)
class DinoSwitchLapsed:
    """The Dino Switch ``seat`` was to choose lapsed: its seat left the game
    (rules version 2 on; version 1 left it unrecorded)."""

    seat: int


Event = (
    EarthEventsShuffled
    | DieRolled
    | DinoMoved
    | DinoEnteredTwentyFirstCentury
    | LifeCardRecharged
    | EarthEventDrawn
    | EarthEventSurvived
    | OverlayFlipped
    | DinoWentExtinct
    | DinoChallengeBegan
    | DinoChallengeTied
    | DinoChallengeWon
    | DinoPushedBack
    | DinoSwitchReached
    | DinosSwitched
    | DinoWarped
    | TurnPassed
    | DinoLeftRace
    | DinoSwitchLapsed
)

EVENT_TYPES: tuple[type, ...] = (
    EarthEventsShuffled,
    DieRolled,
    DinoMoved,
    DinoEnteredTwentyFirstCentury,
    LifeCardRecharged,
    EarthEventDrawn,
    EarthEventSurvived,
    OverlayFlipped,
    DinoWentExtinct,
    DinoChallengeBegan,
    DinoChallengeTied,
    DinoChallengeWon,
    DinoPushedBack,
    DinoSwitchReached,
    DinosSwitched,
    DinoWarped,
    TurnPassed,
    DinoLeftRace,
    DinoSwitchLapsed,
)

# -- state --------------------------------------------------------------------


class Phase(enum.Enum):
    """What the game waits for."""

    SETTING_UP = "setting_up"
    ROLL = "roll"
    CHOOSE_SWITCH = "choose_switch"
    OVER = "over"


@dataclass(frozen=True)
class Dino:
    """A Dino on the track: its step and how many overlays show bones."""

    step: int = 0
    bones: int = 0
    #: True once its seat left the game: the Dino is off the track.
    out: bool = False


#: A card of the Earth Event stack a viewer does not know (the stack a
#: player folds from its redacted events holds as many as the stack has
#: cards it has not seen drawn).
UNSEEN = 0


@dataclass(frozen=True)
class State:
    """Everything the game knows. ``earth_deck`` is the face-down stack, top
    first (a secret: folded from a player's events, its unseen cards are
    :data:`UNSEEN`). ``scripted_dice`` and ``scripted_deck`` come from the
    scenario; ``dice_used`` counts every die rolled so far."""

    players: int
    dinos: tuple[Dino, ...]
    phase: Phase = Phase.SETTING_UP
    turn: int = 0
    earth_deck: tuple[int, ...] = ()
    last_earth_event: int | None = None
    winner: int | None = None
    scripted_dice: tuple[int, ...] = ()
    dice_used: int = 0
    scripted_deck: tuple[int, ...] = ()


# -- view ---------------------------------------------------------------------


@dataclass(frozen=True)
class DinoView:
    """A Dino as everyone sees it."""

    seat: int
    name: str
    colour: str
    step: int
    bones: int
    alive_and_well: bool
    heading: Heading
    out: bool = False


@dataclass(frozen=True)
class View:
    """The game as a viewer sees it. Nothing is hidden but the order of the
    Earth Event stack: ``earth_deck`` (top first) is filled for the admin
    only, everyone else sees ``earth_events_in_stack``."""

    phase: Phase
    turn: int
    dinos: tuple[DinoView, ...]
    board: tuple[Space, ...]
    time_warp: tuple[int, ...]
    last_no_bones_on_me: int
    life_card_overlays: int
    earth_events_in_stack: int
    last_earth_event: EarthEventCard | None
    winner: int | None
    earth_deck: tuple[int, ...]
