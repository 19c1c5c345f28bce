"""The fold only folds (rules version 3): what a DNA tile did (its cost, its
points, whether it removed its card), the tiles in the box and who won are
recorded in the events, so the fold reads neither ``tiles.json`` nor the
totals; stored schema-1 events are upcast with the tiles rules versions 1
and 2 printed, and verify as before (``tests/service/test_stored_games.py``)."""

from __future__ import annotations

import pytest

from domain import codec
from domain.cubosaurs import RULES
from domain.cubosaurs.content import TILES, Effect, Kind
from domain.cubosaurs.model import (
    SCHEMA_1_TILES,
    BuyTile,
    CubosaursState,
    DnaTokensGained,
    GameScored,
    RoundDealt,
    TileBought,
    game_scored_v1_to_v2,
    round_dealt_v1_to_v2,
    tile_bought_v1_to_v2,
)
from domain.session import Session
from tests.gamekit import when
from tests.games.cubosaurs.helpers import ADVANCED, dealt, fold, plain, state

FOSSIL_CACHE, AMBER_TROVE, EXTINCTION, POACHER = 0, 1, 2, 3
T_REX, STEGO = plain(Kind.T_REX), plain(Kind.STEGOSAURUS)
PENTA = plain(Kind.PENTACERATOPS)


def rich() -> CubosaursState:
    """Seat 0 (T-Rex, Stegosaurus) holds 8 tokens; seat 1 a Pentaceratops;
    Fossil Cache, Amber Trove, Extinction Event and Poacher on offer."""
    return state(
        2,
        dealt(
            [(T_REX, STEGO), (PENTA,)],
            (plain(Kind.BRACHIOSAURUS),),
            offer=(FOSSIL_CACHE, AMBER_TROVE, EXTINCTION, POACHER),
        ),
        DnaTokensGained(0, 8),
        options=ADVANCED,
    )


@pytest.mark.parametrize(
    ("command", "bought"),
    [
        (BuyTile(AMBER_TROVE), TileBought(0, AMBER_TROVE, cost=4, points=5)),
        (
            BuyTile(EXTINCTION, STEGO),
            TileBought(0, EXTINCTION, cost=3, points=0, card=STEGO, removed=True),
        ),
        (
            BuyTile(POACHER, PENTA),
            TileBought(0, POACHER, cost=4, points=0, card=PENTA),
        ),
    ],
)
def test_a_purchase_records_the_cost_the_points_and_what_became_of_the_card(
    command: BuyTile, bought: TileBought
) -> None:
    assert when(RULES, rich(), 0, command)[0] == bought


def test_the_fold_applies_a_purchase_as_recorded_not_as_printed() -> None:
    given = rich()

    # A Fossil Cache as no tiles.json prints it: the fold takes the event's word.
    after = fold(given, [TileBought(0, FOSSIL_CACHE, cost=3, points=7)])
    removed = fold(given, [TileBought(0, POACHER, 1, 0, card=STEGO, removed=True)])
    taken = fold(given, [TileBought(0, EXTINCTION, 1, 0, card=PENTA)])

    assert (after.seats[0].tokens, after.seats[0].instant) == (5, 7)
    assert after.supply == given.supply + 3
    assert removed.seats[0].collection == (T_REX,) and removed.discarded == (STEGO,)
    assert taken.seats[0].collection == (T_REX, STEGO, PENTA)
    assert taken.seats[1].collection == () and taken.discarded == ()


def test_a_deal_records_the_tiles_in_the_box_and_the_fold_takes_them() -> None:
    deal = dealt([(T_REX,), (PENTA,)], (STEGO,), offer=(1, 4, 7))
    assert deal.box == (0, 2, 3, 5, 6, 8, 9)

    after = state(2, RoundDealt(**{**vars(deal), "box": (9,)}), options=ADVANCED)

    assert after.box == (9,)


def test_the_end_records_the_winners_and_the_fold_takes_them() -> None:
    given = rich()

    after = fold(given, [GameScored((0, 0), (3, 9), (0,), "highest_total")])

    assert RULES.is_terminal(after)
    assert (RULES.outcome(after).winners, RULES.outcome(after).result) == (
        (0,),
        "highest_total",
    )


def test_the_tiles_schema_one_events_are_upcast_with_are_todays() -> None:
    # The day tiles.json changes, this fails: the change is a new rules
    # version, which keeps these for the games of versions 1 to 3.
    assert {
        t.id: (
            t.cost,
            t.points if t.effect is Effect.GAIN_POINTS else 0,
            t.effect is Effect.DISCARD_OWN_CARD,
        )
        for t in TILES
    } == SCHEMA_1_TILES


def test_schema_one_events_are_upcast_when_read() -> None:
    session = Session(RULES)

    bought = session.decode_event("TileBought", {"seat": 1, "tile": 2, "card": 7}, 1)
    poached = session.decode_event("TileBought", {"seat": 0, "tile": 3, "card": 4}, 1)
    scored = session.decode_event(
        "GameScored", {"token_points": [1, 0, 2], "totals": [9, 11, 11]}, 1
    )
    body = codec.encode(dealt([(T_REX,), (PENTA,)], (STEGO,), offer=(1, 4, 7)))
    old = {k: v for k, v in body.items() if k != "box"}
    deal = session.decode_event("RoundDealt", old, 1)

    assert bought == TileBought(1, 2, cost=3, points=0, card=7, removed=True)
    assert poached == TileBought(0, 3, cost=4, points=0, card=4, removed=False)
    assert scored == GameScored((1, 0, 2), (9, 11, 11), (1, 2), "shared_highest_total")
    assert deal.box == (0, 2, 3, 5, 6, 8, 9)
    # The basic mode had no offer, and no box.
    assert round_dealt_v1_to_v2({"offer": []}) == {"offer": [], "box": []}
    assert tile_bought_v1_to_v2({"tile": 1})["points"] == 5
    assert game_scored_v1_to_v2({"totals": [4, 2]})["winners"] == [0]
