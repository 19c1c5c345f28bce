"""A game the web table has no renderer for is still playable there: the
generic renderer shows its view as a readable tree, its legal actions as
buttons in the API's own words and its events by name. A developer's
preview (``localStorage["strata.renderer"] = "generic"``) shows any game
through it, which is how a real game stands in here for a new one."""

from __future__ import annotations

import time
from typing import Any

import pytest

from service.server import Running
from tests.web.conftest import api, axe_violations, create_for_two, renderers

READY = """() => document.querySelector('#outcome')
    || document.querySelector('#actions button.action:not([disabled])')"""


#: The games without a renderer (the suite's toy, tests/extra_games.py), or,
#: when every game has one, a real game in the preview.
GAMES = renderers()[1] or ["dinosaurs_extinct"]


@pytest.mark.parametrize("game_type", GAMES)
def test_a_game_without_a_renderer_is_played_to_its_end_through_the_generic_one(
    game_type: str, people: Any, web_server: Running, axe_source: str
) -> None:
    ada = people()
    page = ada.page
    ada.goto("/")
    if game_type in renderers()[0]:  # the preview
        page.evaluate("() => localStorage.setItem('strata.renderer', 'generic')")
    game_id = create_for_two(ada, game_type, second="heuristic")
    page.click("#start")

    clicks, trees = 0, 0
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        page.wait_for_function(READY)
        if page.locator("#outcome").count():
            break
        buttons = page.locator("#actions button.action:not([disabled])")
        labels = buttons.all_inner_texts()
        if not labels:
            continue
        # The view is drawn as a tree of its fields, in words.
        trees += page.locator("#board .generic-view dl.tree").count() > 0
        if clicks == 0:
            assert axe_violations(page, axe_source) == []
        try:
            buttons.nth(0).click(timeout=3000)
        except Exception:  # redrawn under the click: look again
            continue
        clicks += 1
    else:
        pytest.fail(f"{game_type}: no end after {clicks} clicks")

    # A game may end after one click (the toy's bot can win its first turn).
    assert clicks >= 1 and trees > 0
    assert axe_violations(page, axe_source) == []  # the finished game's page
    truth = api(web_server, "GetGame", {"gameId": game_id})["game"]
    assert truth["status"] == "GAME_STATUS_FINISHED"
    # The buttons carried the API's descriptions (class raw: no words of a
    # renderer), and the game's own events have their lines in the log.
    log = page.locator("#log li").all_inner_texts()
    lifecycle = ("The game", "The seed", "Ada took", "A heuristic bot")
    assert [line for line in log if not line.startswith(lifecycle)]
    assert page.locator("#status").inner_text().startswith("Game over.")
    assert ada.errors == []
