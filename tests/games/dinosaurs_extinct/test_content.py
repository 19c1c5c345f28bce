"""The board, the Earth Event cards and the Dinos are data, checked on load."""

from __future__ import annotations

import copy
import json
from collections import Counter
from importlib import resources
from typing import Any

import pytest

from domain import registry
from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.content import ContentError, Space, parse


def read(name: str) -> Any:
    package = resources.files("domain.dinosaurs_extinct")
    return json.loads(package.joinpath(name).read_text("utf-8"))


BOARD, CARDS, DINOS = read("board.json"), read("earth_events.json"), read("dinos.json")


def test_the_board_has_37_steps_from_the_prehistoric_era_to_the_21st_century() -> None:
    spaces = RULES.content.spaces

    assert len(spaces) == 37
    assert spaces[0] is Space.PREHISTORIC_ERA
    assert spaces[36] is Space.TWENTY_FIRST_CENTURY
    assert Counter(spaces[1:-1]) == {
        Space.FOOTPRINT: 17,
        Space.EARTH_EVENT: 8,
        Space.NO_BONES_ON_ME: 6,
        Space.DINO_SWITCH: 2,
        Space.TIME_WARP: 2,
    }


def test_the_last_no_bones_on_me_space_stands_near_the_end() -> None:
    assert RULES.content.finish - RULES.content.last_no_bones <= 6


def test_there_are_14_earth_events_with_the_chosen_numbers() -> None:
    numbers = sorted(card.number for card in RULES.content.earth_events)

    assert numbers == [1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5]


def test_the_game_is_registered() -> None:
    assert registry.rules_for("dinosaurs_extinct") is RULES
    assert "dinosaurs_extinct" in registry.game_types()


def test_the_data_files_as_shipped_are_valid() -> None:
    assert parse(BOARD, CARDS, DINOS) == RULES.content


def _broken_board(step: int, space: str) -> Any:
    board = copy.deepcopy(BOARD)
    board["steps"][step]["space"] = space
    return board


@pytest.mark.parametrize(
    ("board", "cards", "dinos", "complaint"),
    [
        ({**BOARD, "steps": BOARD["steps"][:-1]}, CARDS, DINOS, "37 steps"),
        (_broken_board(1, "earth_event"), CARDS, DINOS, "footprint"),
        (_broken_board(1, "lava"), CARDS, DINOS, "unknown space"),
        (_broken_board(0, "footprint"), CARDS, DINOS, "Prehistoric Era"),
        ({**BOARD, "time_warp": [9, 10]}, CARDS, DINOS, "time_warp"),
        (BOARD, {"cards": CARDS["cards"][:-1]}, DINOS, "14 Earth Event"),
        (
            BOARD,
            {"cards": [*CARDS["cards"][:-1], {**CARDS["cards"][0], "name": "x"}]},
            DINOS,
            "ids must be unique",
        ),
        (
            BOARD,
            {"cards": [*CARDS["cards"][:-1], {**CARDS["cards"][-1], "number": 6}]},
            DINOS,
            "beatable",
        ),
        (BOARD, CARDS, {**DINOS, "dinos": DINOS["dinos"][:3]}, "4 Dino tokens"),
    ],
)
def test_content_that_does_not_describe_the_game_is_refused(
    board: Any, cards: Any, dinos: Any, complaint: str
) -> None:
    with pytest.raises(ContentError, match=complaint):
        parse(board, cards, dinos)
