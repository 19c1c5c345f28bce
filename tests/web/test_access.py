"""Every page of every game for everyone: axe-core (from npm) finds no
violation on the lobby, the waiting room, a table being played and a
finished one (the last two in tests/web/test_play.py, which plays each game
to its end); focus lands on the next action after a move; the turn is
announced to screen readers and in the tab's title; and on a phone
(390x844) no page scrolls sideways, your actions are on the first screen
and no text is under 12 px."""

from __future__ import annotations

from typing import Any

import pytest

from domain import registry
from tests.web.conftest import api, axe_violations, create_for_two

GAMES = registry.game_types()
PHONE = (390, 844)
#: Words of each renderer's rules in brief (behind its help link).
RULES_WORDS = {
    "happy_little_dinosaurs": ["Elimination", "Traits: Bad Luck Bronto"],
    "escaping_extinction": ["Injured", "Rocket Parts"],
    "dinosaurs_extinct": ["Earth Event"],
    "cubosaurs": ["packet"],
}
ACTION = "#actions button.action:not([disabled])"

#: The page as a phone shows it: how wide it is beside the screen, the
#: smallest text drawn (SVG text scaled as drawn), where the first action is.
MEASURE = """() => {
  const small = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || el.closest(".visually-hidden")) continue;
    const rect = el.getBoundingClientRect();
    if (!rect.width || !rect.height) continue;
    let size = parseFloat(getComputedStyle(el).fontSize);
    if (el instanceof SVGElement && el.getScreenCTM()) size *= el.getScreenCTM().a;
    const text = node.textContent.trim().slice(0, 30);
    if (size < 12) small.push(`${size.toFixed(1)}px ${text}`);
  }
  const first = document.querySelector("#actions button.action");
  return {
    width: document.documentElement.scrollWidth,
    screen: window.innerWidth,
    small,
    actionBottom: first ? first.getBoundingClientRect().bottom : null,
  };
}"""


@pytest.mark.parametrize("game_type", GAMES)
def test_no_accessibility_violation_before_the_start(
    game_type: str, people: Any, axe_source: str
) -> None:
    ada, bob = people(), people()
    ada.goto("/")
    assert axe_violations(ada.page, axe_source) == []
    game_id = create_for_two(ada, game_type)
    ada.page.wait_for_selector("#join")
    assert axe_violations(ada.page, axe_source) == []
    bob.goto(f"/game/{game_id}")  # a spectator who may take the free seat
    bob.page.wait_for_selector("button.join")
    assert axe_violations(bob.page, axe_source) == []
    assert ada.errors == [] and bob.errors == []


@pytest.mark.parametrize("game_type", GAMES)
def test_a_phone_shows_the_table_without_sideways_scroll(
    game_type: str, people: Any
) -> None:
    ada = people(viewport=PHONE)
    create_for_two(ada, game_type, second="heuristic")
    page = ada.page
    assert page.evaluate(MEASURE)["width"] <= PHONE[0]  # the waiting room
    page.click("#start")
    page.wait_for_selector(ACTION)
    seen = page.evaluate(MEASURE)
    assert seen["width"] <= seen["screen"], seen
    assert seen["small"] == []
    # The first action is on the first screen, without scrolling.
    assert seen["actionBottom"] is not None
    assert seen["actionBottom"] <= PHONE[1], seen
    if game_type not in RULES_WORDS:
        assert ada.errors == []  # the generic renderer: no rules to show
        return
    # The game's rules in brief, behind its help link.
    page.click("#help summary")
    rules = page.locator("#help").inner_text()
    assert len(page.locator("#help p").all()) >= 2
    wanted = RULES_WORDS[game_type]
    assert all(word in rules for word in wanted), rules
    if game_type == "happy_little_dinosaurs":
        # Nobody has escaped yet: the Escape track's bars are empty (their
        # width is set through the CSSOM, which the page's CSP allows).
        widths = page.locator(".escape-fill").evaluate_all(
            "bars => bars.map((b) => b.getBoundingClientRect().width)"
        )
        assert widths and set(widths) == {0}
    assert ada.errors == []


def test_the_turn_is_announced_and_focus_follows_the_moves(people: Any) -> None:
    ada = people()
    create_for_two(ada, "dinosaurs_extinct", second="heuristic")
    page = ada.page
    page.click("#start")
    for _ in range(3):
        page.wait_for_selector(ACTION)
        page.wait_for_function(
            "() => document.activeElement"
            " && document.activeElement.matches('#actions button.action')"
        )
        assert page.title().startswith("Your move")
        announced = page.locator("#announce")
        assert announced.get_attribute("aria-live") == "polite"
        assert "Your move" in announced.inner_text()
        # A player on a keyboard: the focused action, by Enter.
        page.keyboard.press("Enter")
        # The focus never falls to the page's body.
        page.wait_for_function(
            "() => document.activeElement !== document.body"
            " || document.body.dataset.busy"
        )
    assert ada.errors == []


def test_a_place_on_the_escaping_extinction_map_is_clicked_to_travel(
    people: Any, web_server: Any
) -> None:
    ada = people()
    game_id = create_for_two(ada, "escaping_extinction", second="heuristic")
    page = ada.page
    page.click("#start")
    page.wait_for_selector(ACTION)
    assert ada.errors == []
    place = page.locator("svg.hexmap g.travel").first
    place.wait_for()
    position = int(place.get_attribute("data-position") or "0")
    assert "travel to" in (place.locator("title").text_content() or "")
    version = page.evaluate("document.body.dataset.version")
    place.click()
    page.wait_for_function(
        "v => Number(document.body.dataset.version) > Number(v)", arg=version
    )
    travel = ada.commands[-1]["command"]["escapingExtinction"]["travel"]
    assert travel.get("destination", 0) == position
    assert ada.commands[-1]["expectedVersion"] == version
    game = api(web_server, "GetGame", {"gameId": game_id})["game"]
    dinos = game["view"]["escapingExtinction"]["dinos"]
    assert position in [d.get("position", 0) for d in dinos]
    assert ada.errors == []


def test_a_timed_game_shows_each_seats_clock_running_down(
    people: Any, web_server: Any, axe_source: str
) -> None:
    created = api(
        web_server,
        "CreateGame",
        {
            "gameType": "dinosaurs_extinct",
            "players": 2,
            "bots": [{"seat": 1, "bot": "heuristic"}],
            "timeControl": {"baseSeconds": 300},
        },
    )
    ada = people()
    page = ada.page
    ada.goto(f"/game/{created['gameId']}")
    page.fill("#join-name", "Ada")
    page.click('button.join[data-seat="0"]')
    page.click("#start")
    page.wait_for_selector(ACTION)
    mine = page.locator('.seat[data-seat="0"] .clock')
    first = mine.inner_text()
    assert first.startswith("⏱ 5:00") or first.startswith("⏱ 4:"), first
    # Ada's clock runs while she has to act.
    page.wait_for_function(
        "t => document.querySelector('.seat[data-seat=\"0\"] .clock').textContent"
        " !== t",
        arg=first,
    )
    assert page.locator('.seat[data-seat="1"] .clock').count() == 1
    assert axe_violations(page, axe_source) == []
    assert ada.errors == []


#: A stand-in for the browser's WebAudio, counting each tone started.
AUDIO_STUB = """
window.__tones = 0;
window.AudioContext = class {
  constructor() { this.state = "running"; this.currentTime = 0; this.destination = {}; }
  resume() { return Promise.resolve(); }
  createGain() {
    const param = { setValueAtTime() {}, exponentialRampToValueAtTime() {} };
    return { gain: param, connect() {} };
  }
  createOscillator() {
    return { type: "", frequency: { value: 0 }, connect() {}, stop() {},
             start() { window.__tones += 1; } };
  }
};
"""
YOUR_MOVE = "() => document.title.startsWith('Your move')"


def _tones(person: Any) -> int:
    return int(person.page.evaluate("window.__tones"))


def _move_until_the_others_turn(me: Any, other: Any) -> None:
    """``me`` clicks its first action until it is ``other``'s move."""
    for _ in range(30):
        me.page.wait_for_function(YOUR_MOVE)
        version = me.page.evaluate("document.body.dataset.version")
        me.page.locator(ACTION).first.click()
        me.page.wait_for_function(
            "v => Number(document.body.dataset.version) > Number(v)", arg=version
        )
        try:
            other.page.wait_for_function(YOUR_MOVE, timeout=3000)
            return
        except Exception:  # still my move (a roll again, a challenge)
            continue
    raise AssertionError("the turn never passed")


def test_the_turn_sound_is_a_remembered_choice_off_by_default(people: Any) -> None:
    ada, bob = people(), people()
    for person in (ada, bob):
        person.context.add_init_script(AUDIO_STUB)
    game_id = create_for_two(ada, "dinosaurs_extinct")
    page = ada.page
    toggle = page.get_by_label("Sound when it is your move")
    assert toggle.get_attribute("type") == "checkbox"
    assert not toggle.is_checked()  # off by default
    toggle.check()
    page.reload()
    toggle = page.get_by_label("Sound when it is your move")
    toggle.wait_for()
    assert toggle.is_checked()  # remembered in this browser
    assert page.evaluate("localStorage.getItem('strata.turnSound')") == "on"

    bob.goto(f"/game/{game_id}")
    bob.page.fill("#join-name", "Bob")
    bob.page.click('button.join[data-seat="1"]')
    assert not bob.page.get_by_label("Sound when it is your move").is_checked()
    page.click("#start")
    page.wait_for_function(YOUR_MOVE)
    page.wait_for_function("() => window.__tones === 1")  # the start: Ada's move
    _move_until_the_others_turn(ada, bob)
    assert _tones(ada) == 1  # no sound while it is Bob's move
    _move_until_the_others_turn(bob, ada)
    # It became Ada's move again: one more tone; Bob's sound stayed off.
    page.wait_for_function("() => window.__tones === 2")
    assert _tones(bob) == 0
    assert ada.errors == [] and bob.errors == []


def test_the_focus_goes_from_the_status_line_to_the_actions_when_the_move_comes(
    people: Any,
) -> None:
    # After a move that left the player nothing to do, the focus may rest on
    # the status line (where the page puts it then, so that it never falls
    # to the body). When the move comes back, it goes to the first action,
    # as it does from the body.
    ada, bob = people(), people()
    game_id = create_for_two(ada, "dinosaurs_extinct")
    bob.goto(f"/game/{game_id}")
    bob.page.fill("#join-name", "Bob")
    bob.page.click('button.join[data-seat="1"]')
    ada.page.click("#start")
    ada.page.wait_for_function(YOUR_MOVE)
    _move_until_the_others_turn(ada, bob)
    ada.page.evaluate("document.getElementById('status').focus()")
    assert ada.page.evaluate("document.activeElement.id") == "status"
    _move_until_the_others_turn(bob, ada)
    ada.page.wait_for_function(
        "() => document.activeElement"
        " && document.activeElement.matches('#actions button.action')"
    )
    assert ada.errors == [] and bob.errors == []
