"""Two people at one table, each in their own browser context, and a
spectator: each seat sees its own hand and never the other's, in the page
and in every response the page received; the spectator sees no hand."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from service.server import Running
from tests.web.conftest import Person, api, create_for_two


@dataclass
class Table:
    """A started two-seat game of Happy Little Dinosaurs, every seat a person,
    with both hands as the admin sees them (nobody has played yet)."""

    game_id: str
    ada: Person
    bea: Person
    hands: list[list[str]]


@pytest.fixture(scope="module")
def table(browser: Any, base_url: str, web_server: Running) -> Iterator[Table]:
    ada = Person(browser, base_url)
    bea = Person(browser, base_url)
    try:
        yield start(ada, bea, web_server)
    finally:
        ada.close()
        bea.close()
    assert ada.errors == [] and bea.errors == []


def start(ada: Person, bea: Person, web_server: Running) -> Table:
    create_for_two(ada, "happy_little_dinosaurs")
    link = ada.page.locator("#share").input_value()
    game_id = link.rsplit("/", 1)[1]

    bea.page.goto(link)
    assert "spectator" in bea.page.locator("#you").inner_text()
    bea.page.fill("#join-name", "Bea")
    bea.page.click('button.join[data-seat="1"]')
    bea.shows_you("You play seat 2 (Bea).")

    ada.page.click("#start")
    ada.page.wait_for_selector("#hand [data-card]")
    game = api(web_server, "GetGame", {"gameId": game_id})["game"]
    players = game["view"]["happyLittleDinosaurs"]["players"]
    hands = [sorted(p["hand"]) for p in players]
    assert all(len(hand) == 5 for hand in hands)
    for person, hand in ((ada, hands[0]), (bea, hands[1])):
        person.page.wait_for_function(
            "n => document.querySelectorAll('#hand [data-card]').length === n",
            arg=len(hand),
        )
        # Both may act: the table is still until one of them clicks.
        person.page.wait_for_selector("#actions button.action")
    return Table(game_id, ada, bea, hands)


def cards_shown(person: Person) -> list[str]:
    return sorted(
        person.page.locator("#hand [data-card]").evaluate_all(
            "cards => cards.map(c => c.dataset.card)"
        )
    )


def test_each_seat_sees_its_own_hand_and_never_the_others(table: Table) -> None:
    seen = {"ada": cards_shown(table.ada), "bea": cards_shown(table.bea)}
    assert seen == {"ada": table.hands[0], "bea": table.hands[1]}
    for person, other in ((table.ada, table.hands[1]), (table.bea, table.hands[0])):
        html = person.page.content()
        assert not [card for card in other if f'"{card}"' in html]
        # Their actions offer only their own cards.
        labels = " ".join(person.page.locator("#actions button").all_inner_texts())
        assert labels.startswith("Play ")


def test_no_response_to_a_seat_carries_the_other_seats_hand(table: Table) -> None:
    for person, own, other in (
        (table.ada, table.hands[0], table.hands[1]),
        (table.bea, table.hands[1], table.hands[0]),
    ):
        bodies = person.received()
        assert len(bodies) >= 4  # GetGame, ListLegalActions, WatchGame, ...
        received = b"\n".join(bodies).decode("utf-8", "replace")
        # The check can see a hand: the seat's own is there, in the view and
        # in the events the stream delivered (the deal) ...
        assert all(f'"{card}"' in received for card in own)
        streamed = b"".join(person.streamed()).decode("utf-8", "replace")
        assert '"type": "GameStarted"' in streamed
        assert all(f'"{card}"' in streamed for card in own)
        # ... and the other seat's never is.
        assert [card for card in other if f'"{card}"' in received] == []


def test_a_spectator_sees_no_hand(table: Table, people: Any) -> None:
    carl: Person = people()
    # Carl finds the game in the lobby's list of games being played.
    link = f'#active-games a[href="/game/{table.game_id}"]'
    for _ in range(10):  # the list is a projection: it may lag a moment
        carl.goto("/")
        try:
            carl.page.locator(link).wait_for(timeout=2000)
            break
        except Exception:
            continue
    carl.page.click(link)
    carl.page.wait_for_selector("#players table")
    assert "You are watching as a spectator." in carl.page.locator("#you").inner_text()
    assert carl.page.locator("#hand").count() == 0
    assert carl.page.locator("#actions button.action").count() == 0
    # Both players' hands are counted, not shown.
    hand_sizes = carl.page.locator(
        '#players tbody td[data-label="Cards in hand"]'
    ).all_text_contents()
    assert hand_sizes == ["5", "5"]
    received = b"\n".join(carl.received()).decode("utf-8", "replace")
    every_card = table.hands[0] + table.hands[1]
    assert [card for card in every_card if f'"{card}"' in received] == []
    html = carl.page.content()
    assert [card for card in every_card if f'"{card}"' in html] == []
    assert carl.errors == []


def test_a_reload_keeps_the_seat_its_hand_and_the_log(table: Table) -> None:
    page = table.bea.page
    log = page.locator("#log li").all_inner_texts()
    page.reload()
    page.wait_for_function(
        "n => document.querySelectorAll('#hand [data-card]').length === n",
        arg=len(table.hands[1]),
    )
    assert page.locator("#you").inner_text() == "You play seat 2 (Bea)."
    assert cards_shown(table.bea) == table.hands[1]
    page.wait_for_function(
        "n => document.querySelectorAll('#log li').length >= n", arg=len(log)
    )
    assert page.locator("#log li").all_inner_texts()[: len(log)] == log


def test_a_move_of_one_seat_reaches_the_other_live(table: Table) -> None:
    log = table.bea.page.locator("#log li")
    before = log.count()
    table.ada.page.locator("#actions button.action").first.click()
    # Bea did nothing: the move came to her page on its WatchGame stream,
    # face down (which card Ada played is not Bea's to know).
    table.bea.page.wait_for_function(
        "n => document.querySelectorAll('#log li').length > n", arg=before
    )
    table.bea.page.wait_for_selector("#log li >> text=Ada played a card face down.")
    table.bea.page.wait_for_selector("#players td >> text=face down")


def test_a_name_is_shown_as_text_never_run_as_markup(people: Any) -> None:
    mallory: Person = people()
    mallory.goto("/")
    name = '<img src=x onerror="window.pwned=1">Mal'
    mallory.page.select_option("#game-type", "dinosaurs_extinct")
    mallory.page.select_option('#seat-choices select[data-seat="1"]', "random")
    mallory.page.fill("#player-name", name)
    mallory.page.click("#create")
    mallory.page.wait_for_url(re.compile(r"/game/[0-9a-f]+$"))
    mallory.page.click("#start")
    mallory.page.wait_for_selector("#log li >> text=took seat 1")
    assert name in mallory.page.locator("#you").inner_text()
    assert mallory.page.locator("main img").count() == 0
    assert mallory.page.evaluate("window.pwned") is None
