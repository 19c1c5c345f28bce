"""Consent between seats through the service: in Escaping Extinction a seat
cannot move another seat's goods. Its trade from the other seat's Dino is
only an offer; the trade itself, sent for the other seat, is refused with
nothing written; the other seat's consent makes it happen."""

from __future__ import annotations

import pytest

from domain.errors import NotYourSeat
from domain.escaping_extinction.content import Dino
from domain.escaping_extinction.model import (
    AcceptTrade,
    GiveItem,
    Item,
    TradeOffered,
    Travel,
    TravelMode,
)
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.callers import Caller
from service.errors import PermissionDenied
from service.verification import verify_game

GAME = "escaping_extinction"


def two_seats(app: GameApp) -> tuple[str, list[str]]:
    """A started 2-seat game (seat 0: Terry and Rex; seat 1: Sara and Long
    Neck) where Terry walked out and back: he has room for 2 Food."""
    game_id, _, _ = app.create_game(Caller(admin=True), GAME, 2, seed="consent")
    tokens = [app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in (0, 1)]
    app.start_game(app.caller(tokens[0]), game_id)
    seat0 = app.caller(tokens[0])
    out = Travel(Dino.TERRY, 1, TravelMode.WALK)
    app.submit(seat0, game_id, 0, "out", out)
    app.submit(seat0, game_id, 0, "back", Travel(Dino.TERRY, 0, TravelMode.WALK))
    return game_id, tokens


def food(app: GameApp, game_id: str, dino: Dino) -> int:
    state = app.load(game_id).state.game
    food: int = next(d.food for d in state.dinos if d.dino is dino)
    return food


def test_another_seats_goods_move_only_with_that_seats_consent() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, tokens = two_seats(app)
    seat0, seat1 = app.caller(tokens[0]), app.caller(tokens[1])
    sara, terry = food(app, game_id, Dino.SARA), food(app, game_id, Dino.TERRY)
    ask = GiveItem(Dino.SARA, Dino.TERRY, Item.FOOD)
    assert ask in [c for _, c in app.legal_actions(seat0, game_id, 0)[1]]

    # Seat 0's trade from Sara is an offer: nothing moves.
    offered = app.submit(seat0, game_id, 0, "ask", ask)
    assert [type(e) for _, e in offered.events] == [TradeOffered]
    assert food(app, game_id, Dino.SARA) == sara

    # Seat 0 completing the trade for seat 1 is refused, nothing written.
    version = app.load(game_id).state.version
    events = app.store.stream_version(game_id)
    with pytest.raises(NotYourSeat) as refused:
        app.submit(seat0, game_id, 0, "steal", AcceptTrade(Dino.SARA))
    assert refused.value.reason == "NOT_YOUR_DINO"
    with pytest.raises(PermissionDenied):  # seat 0's token does not act for 1
        app.submit(seat0, game_id, 1, "steal-2", AcceptTrade(Dino.SARA))
    assert app.load(game_id).state.version == version
    assert app.store.stream_version(game_id) == events
    assert food(app, game_id, Dino.SARA) == sara

    # Seat 1 sees the offer among its legal actions and accepts it.
    legal = [c for _, c in app.legal_actions(seat1, game_id, 1)[1]]
    assert AcceptTrade(Dino.SARA) in legal
    app.submit(seat1, game_id, 1, "yes", AcceptTrade(Dino.SARA))
    assert food(app, game_id, Dino.SARA) == sara - 1
    assert food(app, game_id, Dino.TERRY) == terry + 1
    assert verify_game(app.store, game_id).ok
