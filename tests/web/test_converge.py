"""The table converges on the service's truth by itself, and a click plays
at most once: a page offline while the other player moved catches up when
the network is back (it says it is reconnecting meanwhile, and keeps no
stale error); a slow double click makes one move; a click on a table that
has moved on is refused, said so, and the refusal goes once the game moves
on. Every command the page sends carries the version it was chosen at."""

from __future__ import annotations

import json
from typing import Any

from service.server import Running
from tests.web.conftest import Person, api, create_for_two, hot_seat

ACTION = "#actions button.action:not([disabled])"
#: How long after a click the page ignores the next (table.js's GUARD_MS).
GUARD_MS = 700


def game_of_two(
    people: Any, game_type: str = "dinosaurs_extinct"
) -> tuple[Person, Person, str]:
    """A started game of two people, Ada (seat 1) and Bob (seat 2), each in
    their own browser; the game's id."""
    ada, bob = people(), people()
    game_id = create_for_two(ada, game_type)
    bob.goto(f"/game/{game_id}")
    bob.page.fill("#join-name", "Bob")
    bob.page.click('button.join[data-seat="1"]')
    ada.page.click("#start")
    return ada, bob, game_id


def truth(web_server: Running, game_id: str) -> dict[str, Any]:
    game: dict[str, Any] = api(web_server, "GetGame", {"gameId": game_id})["game"]
    return game


#: How long a page may take to be live again after a drop (ms): its longest
#: wait between attempts (8 s) and a last attempt that hangs until given up
#: (10 s), with room for a loaded machine.
RECONNECT_MS = 30_000


def caught_up(person: Person, version: str) -> None:
    """Waits until the page shows the game at `version`, online."""
    person.wait_until(
        "v => document.body.dataset.version === v"
        " && document.body.dataset.connection === 'live'",
        version,
        timeout=RECONNECT_MS,
    )


def play_until(person: Person, done: Any, moves: int = 60) -> None:
    """Clicks the person's first action until `done()`."""
    for _ in range(moves):
        if done():
            return
        try:
            person.page.locator(ACTION).first.click(timeout=5000)
        except Exception:  # redrawn under the click, or not this seat's move
            continue
    assert done()


def test_a_page_offline_while_the_other_moved_catches_up_by_itself(
    people: Any, web_server: Running
) -> None:
    ada, bob, game_id = game_of_two(people)

    def active() -> list[int]:
        return list(truth(web_server, game_id).get("activeSeats", []))

    play_until(ada, lambda: 0 not in active())  # Bob's move now
    ada.context.set_offline(True)
    ada.page.wait_for_selector("body[data-connection=reconnecting]")
    assert "Reconnecting" in ada.page.locator("#connection").inner_text()
    play_until(bob, lambda: 0 in active())  # Bob moved: Ada's move again
    version = truth(web_server, game_id)["version"]

    ada.context.set_offline(False)
    caught_up(ada, version)
    ada.page.wait_for_selector(ACTION)  # her actions are back, clickable
    assert ada.page.locator("#connection").is_hidden()
    # No error outlives the drop: nothing like "Failed to fetch" is shown.
    error = ada.page.locator("#error")
    assert error.is_hidden(), error.inner_text()
    assert "Your move" in ada.page.locator("#status").inner_text()
    # The log has every event the page missed, up to the last.
    versions = [
        int(v)
        for v in ada.page.locator("#log li").evaluate_all(
            "items => items.map((li) => li.dataset.version)"
        )
    ]
    assert versions == sorted(versions) and str(versions[-1]) == version
    assert ada.errors == [] and bob.errors == []


def test_a_page_offline_while_nothing_happened_is_live_again_at_once(
    people: Any, web_server: Running
) -> None:
    """Back online with nothing new in the game: the stream resumes at once
    (a stream from the next version would get no answer until someone
    moved, and the page stayed "Reconnecting" with its actions disabled)."""
    ada, _bob, game_id = game_of_two(people)
    ada.page.wait_for_selector("body[data-status=GAME_STATUS_ACTIVE]")
    version = truth(web_server, game_id)["version"]  # started: nobody moves
    caught_up(ada, version)
    ada.context.set_offline(True)
    ada.page.wait_for_selector("body[data-connection=reconnecting]")
    ada.context.set_offline(False)
    ada.wait_until(
        "v => document.body.dataset.version === v"
        " && document.body.dataset.connection === 'live'",
        version,
    )
    assert truth(web_server, game_id)["version"] == version  # nobody moved
    assert ada.errors == []


def test_a_slow_double_click_makes_one_move(people: Any, web_server: Running) -> None:
    # One browser playing both seats: after Ada's click, Bob's new buttons
    # appear at once under the pointer.
    ada = people()
    page = ada.page
    game_id = hot_seat(ada, "escaping_extinction")
    # When the page saw each press (on a loaded machine the two clicks may
    # reach it further apart than they were sent).
    page.evaluate(
        "() => { window.presses = [];"
        " addEventListener('pointerdown', (e) => presses.push(e.timeStamp), true); }"
    )
    doubles = 0
    # Five pairs, then (on a machine loaded enough that pairs sent within
    # the guard reached the page over it apart) up to five more well
    # within it, until three pairs were double clicks as the page saw them.
    pauses = [60, 300, 550, 550, 550, 400, 400, 400, 400, 400]
    for n, pause in enumerate(pauses):
        if n >= 5 and doubles >= 3:
            break
        # Where the first action is (the page may be drawing it again).
        x, y = page.wait_for_function(
            """sel => { const b = document.querySelector(sel);
                if (!b) return null; const r = b.getBoundingClientRect();
                return [r.x + 5, r.y + r.height / 2]; }""",
            arg=ACTION,
        ).json_value()
        before = truth(web_server, game_id)["version"]
        sent = len(ada.commands)
        page.mouse.click(x, y)
        page.wait_for_timeout(pause)
        page.mouse.click(x, y)  # the pointer has not moved: a slip
        caught_up(ada, truth(web_server, game_id)["version"])
        first, second = page.evaluate("() => presses.slice(-2)")
        assert truth(web_server, game_id)["version"] != before
        if second - first >= GUARD_MS:
            continue  # two clicks as the page saw them, not a double click
        doubles += 1
        assert len(ada.commands) == sent + 1, f"{pause} ms: two commands"
    assert doubles >= 3
    # Every command was pinned to the version its button was listed at.
    assert all("expectedVersion" in c for c in ada.commands)
    assert ada.errors == []


def test_a_click_on_a_table_that_moved_on_is_refused_until_it_moves_again(
    people: Any, web_server: Running
) -> None:
    ada = people()
    page = ada.page
    game_id = hot_seat(ada, "escaping_extinction")
    page.wait_for_selector(ACTION)
    played: list[str] = []

    def another_tab_moves_first(route: Any) -> None:
        # The same seat moves from elsewhere (another tab) before this
        # click reaches the service: the page's table is now stale.
        body = json.loads(route.request.post_data or "{}")
        token = route.request.headers["authorization"].split(" ", 1)[1]
        other = {**body, "commandId": "f" * 32}
        other.pop("expectedVersion", None)
        played.append(api(web_server, "SubmitCommand", other, token)["version"])
        route.continue_()

    page.route("**/SubmitCommand", another_tab_moves_first, times=1)
    shown = page.locator(ACTION).first.get_attribute("data-version")
    page.locator(ACTION).first.click()
    error = page.locator("#error")
    error.wait_for(state="visible")
    assert "moved on" in error.inner_text()
    # Refused, not played: only the other tab's move was made.
    assert ada.commands[-1]["expectedVersion"] == shown
    assert truth(web_server, game_id)["version"] == played[0]
    caught_up(ada, played[0])
    # The refusal goes once the game moves on from the table it was shown on.
    page.wait_for_selector(ACTION)
    page.locator(ACTION).first.click()
    page.wait_for_function(
        "v => Number(document.body.dataset.version) > Number(v)", arg=played[0]
    )
    assert error.is_hidden()
    assert ada.errors == []


def waiting_room(people: Any, web_server: Running, players: int) -> tuple[Person, str]:
    """A person at the waiting room of a new game of ``players`` free seats
    (created by the admin); the game's id."""
    created = api(
        web_server, "CreateGame", {"gameType": "dinosaurs_extinct", "players": players}
    )
    person = people()
    person.goto(f"/game/{created['gameId']}")
    return person, str(created["gameId"])


def test_a_name_being_typed_survives_another_player_joining(
    people: Any, web_server: Running
) -> None:
    carl, game_id = waiting_room(people, web_server, players=3)
    page = carl.page
    page.click("#join-name")
    page.fill("#join-name", "")
    page.keyboard.type("Bo")
    # Bob takes seat 1 meanwhile: Carl's waiting room is drawn again.
    api(web_server, "JoinGame", {"gameId": game_id, "seat": 0, "playerName": "Bob"}, "")
    page.wait_for_selector('button.join[data-seat="0"]', state="detached")
    page.keyboard.type("bby")  # the focus and the caret stayed in the field
    assert page.locator("#join-name").input_value() == "Bobby"
    page.click('button.join[data-seat="1"]')
    carl.shows_you("You play seat 2 (Bobby).")
    assert carl.errors == []


def test_a_seat_taken_just_before_is_told_in_the_pages_numbers(
    people: Any, web_server: Running
) -> None:
    bob, game_id = waiting_room(people, web_server, players=2)
    page = bob.page
    page.fill("#join-name", "Bob")

    def someone_else_first(route: Any) -> None:
        body = {"gameId": game_id, "seat": 1, "playerName": "Eve"}
        api(web_server, "JoinGame", body, "")
        route.continue_()

    page.route("**/JoinGame", someone_else_first, times=1)
    page.click('button.join[data-seat="1"]')  # "Take seat 2"
    error = page.locator("#error")
    error.wait_for(state="visible")
    # The service's own sentence, counting seats as the page does.
    assert error.inner_text() == "Seat 2 is taken: choose another."
    page.click('button.join[data-seat="0"]')  # the one left: the error goes
    bob.shows_you("You play seat 1 (Bob).")
    assert error.is_hidden()
    assert bob.errors == []


def test_a_click_across_a_redraw_of_the_table_is_not_lost(
    people: Any, web_server: Running
) -> None:
    """Carl presses "Take seat 1" as Bob's joining draws the waiting room
    again, and lets go after: the seat is his (the button pressed is the one
    released, not a new one in its place that never saw the press)."""
    carl, game_id = waiting_room(people, web_server, players=3)
    page = carl.page
    page.fill("#join-name", "Carl")
    page.hover('button.join[data-seat="0"]')
    page.mouse.down()
    with page.expect_response(lambda r: r.url.endswith("/GetGame")):
        bob = {"gameId": game_id, "seat": 2, "playerName": "Bob"}
        api(web_server, "JoinGame", bob, "")
        page.get_by_text("Bob took seat 3.").wait_for()
    page.wait_for_timeout(300)  # the page holds the new table: it would draw it
    page.mouse.up()
    carl.shows_you("You play seat 1 (Carl).")
    # Once let go, the page drew the table as it is: seat 3 is taken.
    assert page.locator('button.join[data-seat="2"]').count() == 0
    assert carl.errors == []
