"""A person plays a whole game of each type in the browser, against a bot,
by clicking the legal actions the page shows, to the end and its winners."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from clients.client import StrataClient
from service.server import Running
from tests.web.conftest import api, axe_violations, create_for_two

#: The button a player of the test prefers, by the words on it (the first
#: that matches; otherwise the first button): a short game, not a good one.
PREFERENCES = {
    "dinosaurs_extinct": [],
    "happy_little_dinosaurs": [
        "Take the Disaster",
        "Keep your hand",
        "Play no Instant",
        "Do not use",
    ],
    "cubosaurs": ["Take the packet"],
    # One round of the advanced mode, buying every DNA tile it can.
    "cubosaurs-advanced": ["Claim", "Buy", "Take the packet", "End your turn"],
    # Trading is free, so a player who always gives would never end a turn.
    "escaping_extinction": ["end the turn"],
}

READY = """() => document.querySelector('#outcome')
    || document.querySelector('#actions button.action:not([disabled])')"""


def choose(labels: list[str], preferences: list[str]) -> int:
    for wanted in preferences:
        for index, label in enumerate(labels):
            if wanted in label:
                return index
    return 0


#: Options chosen in the lobby, by the test's name of a game.
OPTIONS = {"cubosaurs-advanced": {"advanced": True, "rounds": "1"}}


def create_against_a_bot(page: Any, game_type: str, options: dict[str, Any]) -> str:
    """Creates a two-player game in the lobby, seat 2 a heuristic bot; the
    game's id."""
    page.select_option("#game-type", game_type)
    for name, value in options.items():
        field = page.locator(f'#options input[data-option="{name}"]')
        if value is True:
            field.check()
        else:
            field.fill(value)
    page.fill("#players", "2")
    page.dispatch_event("#players", "change")
    page.select_option('#seat-choices select[data-seat="1"]', "heuristic")
    page.fill("#player-name", "Ada")
    page.click("#create")
    page.wait_for_url(re.compile(r"/game/[0-9a-f]+$"))
    return str(page.url.rsplit("/", 1)[1])


@pytest.mark.parametrize("game", sorted(PREFERENCES))
def test_a_person_plays_a_whole_game_against_a_bot(
    game: str, people: Any, web_server: Running, output_dir: Path, axe_source: str
) -> None:
    game_type = game.split("-")[0]
    ada = people()
    page = ada.page
    ada.goto("/")
    game_id = create_against_a_bot(page, game_type, OPTIONS.get(game, {}))
    assert "You play seat 1 (Ada)" in page.locator("#you").inner_text()
    page.click("#start")

    clicks = 0
    labels_seen: set[str] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        page.wait_for_function(READY)
        if page.locator("#outcome").count():
            break
        buttons = page.locator("#actions button.action:not([disabled])")
        labels = buttons.all_inner_texts()
        if not labels:
            continue
        labels_seen.update(labels)
        if clicks == 2:
            assert page.locator("#status").inner_text()
            page.screenshot(path=str(output_dir / f"{game}.png"), full_page=True)
            # axe-core finds nothing wrong with the table being played.
            assert axe_violations(page, axe_source) == []
        try:
            buttons.nth(choose(labels, PREFERENCES[game])).click(timeout=3000)
        except Exception:  # redrawn under the click: look again
            continue
        clicks += 1
    else:
        pytest.fail(f"{game}: no end after {clicks} clicks")

    assert clicks > 2
    assert axe_violations(page, axe_source) == []  # nor with the game over
    assert (output_dir / f"{game}.png").exists()
    # Every command and every event was put in words by the page, never shown
    # as the API's raw description.
    assert page.locator("#actions button.raw, #log li.raw").count() == 0
    assert not any(re.match(r"^[A-Z][A-Za-z]+\(", label) for label in labels_seen)

    truth = api(web_server, "GetGame", {"gameId": game_id})["game"]
    assert truth["status"] == "GAME_STATUS_FINISHED"
    if game in OPTIONS:  # the lobby's options reached the game
        view = truth["view"][next(iter(truth["view"]))]
        assert view.get("advanced") and view.get("rounds") == 1
        # Whether a DNA tile is ever affordable in one round is the deal's
        # (the seed is the service's): a purchase offered is labelled "Buy …"
        # like every action in words (checked above), not required here.
    outcome = page.locator("#outcome").inner_text()
    winners = truth["outcome"].get("winners", [])
    names = {0: "Ada", 1: "heuristic bot (seat 2)"}
    if winners:
        assert all(names[w] in outcome for w in winners), outcome
        assert "Nobody won" not in outcome
    else:
        assert "Nobody won" in outcome
    assert page.locator("#status").inner_text().startswith("Game over.")
    # The page carried the service's strata-position back (read your writes
    # on any replica): at least as far as the game's last event.
    seen = page.evaluate(
        "async () => (await import('/static/api.js')).position().toString()"
    )
    with StrataClient(f"127.0.0.1:{web_server.port}") as client:
        created = next(client.watch_game(game_id, follow=False))
    assert int(seen) >= created.position > 0
    log = page.locator("#log li").all_inner_texts()
    assert log[0] == "The game was created for 2 players."
    # The end, then the seed revealed (the game's commitment can be checked).
    assert log[-2].startswith("The game is over.")
    assert log[-1].startswith("The seed was revealed")
    # The log followed the game to its last event (a few events, such as
    # "an action was taken", have no line of their own).
    last = page.locator("#log li").last.get_attribute("data-version")
    assert last == truth["version"]
    assert any(line.startswith("Ada") for line in log)
    assert ada.errors == []
    # Everything the page loaded came from the service itself: no CDN.
    assert ada.requested
    foreign = [u for u in ada.requested if not u.startswith(ada.base_url + "/")]
    assert foreign == [], foreign
    if game == "dinosaurs_extinct":
        # A replay: the table as it was at an earlier version, by the slider.
        early = 8
        page.fill("#replay-version", str(early))
        page.wait_for_selector(f'#replay-view[data-version="{early}"]')
        then = api(web_server, "GetGame", {"gameId": game_id, "atVersion": early})
        shown = page.locator("#replay-view").inner_text()
        assert f"version {early}" in shown
        assert page.locator("#replay-shown").inner_text().strip() == (
            f"{early} of {truth['version']}"
        )
        assert then["game"]["version"] == str(early)
        # Not the table at its end: the players' state then.
        at_early = page.locator("#replay-view table").last.inner_text()
        assert at_early != page.locator("#players table").inner_text()
        assert axe_violations(page, axe_source) == []
        # A rematch: the same seats, Ada's kept for her, the bot's for it.
        page.click("#rematch")
        page.wait_for_url(re.compile(rf"/game/(?!{game_id})[0-9a-f]+$"))
        assert page.locator("#you").inner_text() == "You play seat 1 (Ada)."
        rematch = page.url.rsplit("/", 1)[1]
        assert (
            api(web_server, "GetGame", {"gameId": rematch})["game"]["rematchOf"]
            == game_id
        )
        assert "heuristic bot" in page.locator("#seats").inner_text()


def test_one_browser_may_play_two_seats_at_one_table(people: Any) -> None:
    ada = people()
    page = ada.page
    create_for_two(ada, "dinosaurs_extinct")
    page.click('button.join[data-seat="1"]')  # hot seat: the same token
    page.click('button.leave[data-seat="1"]')  # changed her mind ...
    ada.shows_you("You play seat 1 (Ada).")
    page.click('button.join[data-seat="1"]')  # ... and back
    page.click("#start")
    assert page.locator("#you").inner_text() == (
        "You play seat 1 (Ada) and seat 2 (Ada)."
    )
    seats_acting: set[str] = set()
    for _ in range(400):
        page.wait_for_function(READY)
        if page.locator("#outcome").count():
            break
        button = page.locator("#actions button.action:not([disabled])").first
        try:
            seats_acting.add(button.get_attribute("data-seat", timeout=3000) or "")
            button.click(timeout=3000)
        except Exception:  # redrawn under the click: look again
            continue
    assert page.locator("#outcome").count() == 1
    assert seats_acting == {"0", "1"}
    assert ada.errors == []
