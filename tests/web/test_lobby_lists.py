"""The lobby's lists as a player reads them: a game just started heads
"Games being played", however many older games are being played."""

from __future__ import annotations

from typing import Any

from service.callers import Caller
from service.server import Running
from tests.web.conftest import create_for_two

LINKS = "#active-games a"


def test_a_game_just_started_in_the_lobby_heads_the_games_being_played(
    people: Any, web_server: Running
) -> None:
    app = web_server.app
    # Older games being played, made through the API with request ids (so
    # with ids derived from them, in no particular order).
    for n in range(30):
        game_id, _, _ = app.create_game(
            Caller(admin=True), "dinosaurs_extinct", 2, request_id=f"older-{n}"
        )
        tokens = [
            app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in range(2)
        ]
        app.start_game(app.caller(tokens[0]), game_id)
    ada = people()
    game_id = create_for_two(ada, "dinosaurs_extinct", second="heuristic")
    ada.page.click("#start")
    ada.page.wait_for_selector("#actions button.action")
    carl = people()
    first = ""
    for _ in range(20):  # the list is a projection: it may lag a moment
        carl.goto("/")
        carl.page.wait_for_selector(LINKS)
        first = carl.page.locator(LINKS).first.get_attribute("href") or ""
        if first == f"/game/{game_id}":
            break
        carl.page.wait_for_timeout(250)
    assert first == f"/game/{game_id}", carl.showing()
