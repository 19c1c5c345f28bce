"""The printed content of Dinosaurs Extinct?: the board, the Earth Event cards
and the Dino tokens, loaded once from the JSON files beside this module and
validated (counts, ids, references), so a publisher can swap in the printed
values without touching the rules.
"""

from __future__ import annotations

import enum
import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any


class Space(enum.Enum):
    """What a step of the track is."""

    PREHISTORIC_ERA = "prehistoric_era"
    FOOTPRINT = "footprint"
    EARTH_EVENT = "earth_event"
    NO_BONES_ON_ME = "no_bones_on_me"
    DINO_SWITCH = "dino_switch"
    TIME_WARP = "time_warp"
    TWENTY_FIRST_CENTURY = "twenty_first_century"


@dataclass(frozen=True)
class EarthEventCard:
    """One Earth Event: survive it by rolling higher than ``number``."""

    id: int
    name: str
    number: int


@dataclass(frozen=True)
class DinoToken:
    """A Dinosaur token and its matching Dino Life Card."""

    colour: str
    name: str


@dataclass(frozen=True)
class Content:
    """Everything printed that the rules read."""

    die_sides: int
    spaces: tuple[Space, ...]
    time_warp: tuple[int, int]
    earth_events: tuple[EarthEventCard, ...]
    dinos: tuple[DinoToken, ...]
    life_card_overlays: int

    @property
    def finish(self) -> int:
        """The step of the 21st Century."""
        return len(self.spaces) - 1

    @property
    def last_no_bones(self) -> int:
        """The last "No Bones on Me" step, where a Dino with bones must return."""
        return max(i for i, s in enumerate(self.spaces) if s is Space.NO_BONES_ON_ME)

    def warp_exit(self, step: int) -> int:
        """The other end of the Time Warp entered at ``step``."""
        a, b = self.time_warp
        return b if step == a else a

    def card(self, card_id: int) -> EarthEventCard:
        for card in self.earth_events:
            if card.id == card_id:
                return card
        raise KeyError(card_id)


class ContentError(ValueError):
    """A data file does not describe a valid game."""


# The published game's counts (RULES.md, facts): the data must match them.
STEPS = 37
SPACE_COUNTS = {
    Space.FOOTPRINT: 17,
    Space.EARTH_EVENT: 8,
    Space.NO_BONES_ON_ME: 6,
    Space.DINO_SWITCH: 2,
    Space.TIME_WARP: 2,
}
EARTH_EVENT_CARDS = 14
DINO_TOKENS = 4


def _read(name: str) -> Any:
    text = resources.files(__package__).joinpath(name).read_text("utf-8")
    return json.loads(text)


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ContentError(message)


def parse(board: Any, earth_events: Any, dinos: Any) -> Content:
    """Build and validate the content from the three files' parsed JSON."""
    die_sides = board["die_sides"]
    _check(isinstance(die_sides, int) and die_sides >= 2, "die_sides must be >= 2")

    steps = board["steps"]
    _check(len(steps) == STEPS, f"the board needs {STEPS} steps, has {len(steps)}")
    _check(
        [s["step"] for s in steps] == list(range(STEPS)),
        "board steps must be numbered 0, 1, 2, ... in order",
    )
    try:
        spaces = tuple(Space(s["space"]) for s in steps)
    except ValueError as e:
        raise ContentError(f"unknown space on the board: {e}") from None
    _check(spaces[0] is Space.PREHISTORIC_ERA, "step 0 must be the Prehistoric Era")
    _check(spaces[-1] is Space.TWENTY_FIRST_CENTURY, "the last step is the finish")
    middle = spaces[1:-1]
    for space, count in SPACE_COUNTS.items():
        _check(
            middle.count(space) == count,
            f"the board needs {count} {space.value} steps, has {middle.count(space)}",
        )

    warp = board["time_warp"]
    warps = [i for i, s in enumerate(spaces) if s is Space.TIME_WARP]
    _check(
        isinstance(warp, list) and sorted(warp) == warps,
        f"time_warp {warp} must name the two time_warp steps {warps}",
    )

    cards = tuple(
        EarthEventCard(id=c["id"], name=c["name"], number=c["number"])
        for c in earth_events["cards"]
    )
    _check(
        len(cards) == EARTH_EVENT_CARDS,
        f"there are {EARTH_EVENT_CARDS} Earth Event cards, not {len(cards)}",
    )
    _check(len({c.id for c in cards}) == len(cards), "Earth Event ids must be unique")
    _check(all(c.id > 0 for c in cards), "Earth Event ids must be positive")
    _check(len({c.name for c in cards}) == len(cards), "Earth Event names repeat")
    _check(
        all(1 <= c.number < die_sides for c in cards),
        "every Earth Event number must be beatable by the die (1 to sides - 1)",
    )

    tokens = tuple(
        DinoToken(colour=d["colour"], name=d["name"]) for d in dinos["dinos"]
    )
    _check(len(tokens) == DINO_TOKENS, f"there are {DINO_TOKENS} Dino tokens")
    _check(len({t.name for t in tokens}) == len(tokens), "Dino names must be unique")
    overlays = dinos["life_card_overlays"]
    _check(isinstance(overlays, int) and overlays >= 1, "life_card_overlays >= 1")

    return Content(
        die_sides=die_sides,
        spaces=spaces,
        time_warp=(warp[0], warp[1]),
        earth_events=cards,
        dinos=tokens,
        life_card_overlays=overlays,
    )


@functools.cache
def load() -> Content:
    """The game's content, read and validated once."""
    try:
        return parse(
            _read("board.json"), _read("earth_events.json"), _read("dinos.json")
        )
    except (KeyError, TypeError) as e:
        raise ContentError(f"malformed content file: {e!r}") from None
