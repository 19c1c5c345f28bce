"""Starting from a position (admin scenario): a game at the start of a round.

Given/when/then for the rule situations a position reaches at once (both
draw piles empty at the refill, a dinosaur one space from escaping, a
Disaster Area one Disaster from a deadly set), the refusals (each naming
the field that is wrong), what players see of it, and a property test over
random positions, valid and broken."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from strata.games.happy_little_dinosaurs.v1 import happy_little_dinosaurs_pb2

from domain.chance import Rng
from domain.frozen import replace
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.content import Kind, catalogue, eliminates
from domain.happy_little_dinosaurs.model import (
    CardsDrawn,
    DisasterFlipped,
    DiscardOffered,
    EffectPassed,
    EffectWindowOpened,
    EscapeMoved,
    GameWon,
    Hand,
    KeepHand,
    MainDeckReshuffled,
    Phase,
    PlayerEliminated,
    PlayerPosition,
    Position,
    Scenario,
    State,
    TableCleared,
    TakeDisaster,
)
from domain.rules import Viewer
from domain.session import SessionState, Status
from tests.gamekit import (
    RANDOM_SEEDS,
    assert_hidden_alike,
    assert_position_plays,
    check_random_positions,
    new_game,
    refusal,
)
from tests.games.happy_little_dinosaurs.helpers import (
    act,
    commit,
    deal,
    of_type,
    pass_all,
)
from tests.games.happy_little_dinosaurs.test_random_play import check_invariants

CARDS = catalogue()
MAIN = tuple(CARDS.main)
DISASTERS = tuple(CARDS.disasters)


def seat(
    hand: Sequence[str] = (),
    disasters: Sequence[str] = (),
    escape: int = 0,
    eliminated: bool = False,
) -> PlayerPosition:
    return PlayerPosition(tuple(hand), tuple(disasters), escape, eliminated)


def start(position: Position) -> SessionState[State]:
    players = len(position.players)
    state, _ = new_game(RULES, players, "pos", scenario=Scenario(position=position))
    return state


def base(**changes: Any) -> Position:
    """Two seats with five plain cards each, the rest shuffled."""
    hands = deal(["cool_stick_1"], ["bow_and_dino_1"])
    position = Position(
        players=(seat(hands[0]), seat(hands[1])),
        rounds_played=3,
        shuffle_rest=True,
    )
    return replace(position, **changes)


# -- the position is where the game starts ----------------------------------


def test_a_position_sets_hands_areas_escapes_decks_and_the_round() -> None:
    hands = deal(["cool_stick_1"], ["bow_and_dino_1"])
    rest = [c for c in MAIN if c not in {*hands[0], *hands[1], "pet_rock_1"}]
    disasters = ["emotional_1", *(d for d in DISASTERS if d != "emotional_1")]
    disasters.remove("natural_1")
    position = Position(
        players=(
            seat(hands[0], ["natural_1"], escape=20),
            seat(hands[1], escape=31),
        ),
        rounds_played=6,
        main_deck=tuple(rest),
        discard=("pet_rock_1",),
        disaster_deck=tuple(disasters),
    )
    state = start(position)
    game = state.game
    assert state.status is Status.ACTIVE
    assert [p.hand for p in game.players] == [tuple(h) for h in hands]
    assert [p.escape for p in game.players] == [20, 31]
    assert game.players[0].disasters == ("natural_1",)
    assert game.round == 7 and game.phase is Phase.COMMIT
    assert game.disaster == "emotional_1"
    assert game.main_deck == tuple(rest) and game.discard == ("pet_rock_1",)
    assert game.disaster_deck == tuple(disasters[1:])
    assert RULES.active_seats(game) == {0, 1}
    check_invariants(game)


def test_an_eliminated_seat_in_the_position_never_acts() -> None:
    hands = deal(["cool_stick_1"], ["bow_and_dino_1"])
    position = Position(
        players=(
            seat(hands[0]),
            seat((), ["natural_1", "natural_2", "natural_3"], eliminated=True),
            seat(hands[1]),
        ),
        rounds_played=3,
        shuffle_rest=True,
    )
    game = start(position).game
    assert RULES.active_seats(game) == {0, 2}
    assert RULES.legal_actions(game, 1) == []


# -- named situations -------------------------------------------------------


def test_given_both_draw_piles_empty_when_hands_are_refilled_they_stay_short() -> None:
    # Every Main card is in a hand: the refill at the end of the round has
    # nothing to draw and nothing to reshuffle (README: "With both the Main
    # deck and the discard pile empty, hands stay short"); the cards cleared
    # from the table then form a new Main deck at once ("if at any time the
    # Main deck has no remaining cards").
    rest = [c for c in MAIN if c not in ("cool_stick_1", "bow_and_dino_1")]
    hands = (("cool_stick_1", *rest[:34]), ("bow_and_dino_1", *rest[34:]))
    position = Position(
        players=(seat(hands[0]), seat(hands[1])),
        disaster_deck=("emotional_1", *(d for d in DISASTERS if d != "emotional_1")),
    )
    game = start(position).game
    assert game.main_deck == () and game.discard == ()
    game, _ = commit(game, {0: "cool_stick_1", 1: "bow_and_dino_1"})
    game, _ = pass_all(game)
    assert game.phase is Phase.DISASTER and game.taker == 0
    game, _ = act(game, 0, TakeDisaster())
    game, events = act(game, 0, KeepHand())
    assert not of_type(events, CardsDrawn)
    assert [type(e) for e in events[-3:]] == [
        TableCleared,
        MainDeckReshuffled,
        DisasterFlipped,
    ]
    assert [len(p.hand) for p in game.players] == [34, 33]
    # The played cards reach the discard pile only when the table is cleared,
    # and from there the new Main deck.
    assert sorted(game.main_deck) == ["bow_and_dino_1", "cool_stick_1"]
    assert game.round == 2 and game.discard == ()
    check_invariants(game)


def test_given_both_draw_piles_empty_treenoculars_has_nothing_to_look_at() -> None:
    # Its window opens only when the Main deck or the discard pile holds a
    # card (README, "Windows open on public grounds only").
    rest = [c for c in MAIN if c not in ("treenoculars_1", "cool_stick_1")]
    hands = (("treenoculars_1", *rest[:34]), ("cool_stick_1", *rest[34:]))
    position = Position(
        players=(seat(hands[0]), seat(hands[1])), disaster_deck=DISASTERS
    )
    game = start(position).game
    game, events = commit(game, {0: "treenoculars_1", 1: "cool_stick_1"})
    assert of_type(events, EffectPassed) == [EffectPassed(0, "treenoculars_1")]
    assert not of_type(events, EffectWindowOpened)
    assert game.phase is Phase.SCORING


def test_given_a_dinosaur_one_space_from_escaping_its_disaster_moves_it_out() -> None:
    # Nervous Rex is on 49 with one Disaster: it scores lowest, takes the
    # round's Disaster, and the escape move (one space per Disaster) takes
    # it past 50: it wins at once, though Bad Luck Bronto collected.
    hands = deal(["cool_stick_1"], ["bow_and_dino_1"])
    position = Position(
        players=(seat(hands[0], ["predatory_1"], escape=49), seat(hands[1], (), 10)),
        rounds_played=1,
        disaster_deck=("natural_1",),
        shuffle_rest=True,
    )
    game = start(position).game
    game, _ = commit(game, {0: "cool_stick_1", 1: "bow_and_dino_1"})
    game, _ = pass_all(game)
    assert game.players[1].escape == 10 + 7  # 6 + Bronto's Natural trait
    game, _ = act(game, 0, TakeDisaster())
    game, events = act(game, 0, KeepHand())
    assert of_type(events, EscapeMoved) == [EscapeMoved(moves={0: 2, 1: 0})]
    assert of_type(events, GameWon) == [GameWon(winners=(0,), result="escaped")]
    assert game.phase is Phase.OVER and game.players[0].escape == 51
    assert RULES.is_terminal(game)


def test_given_two_of_a_type_in_the_area_a_meteor_eliminates_and_the_rest_play_on() -> (
    None
):
    # Bad Luck Bronto holds two Predatory Disasters; the round's Disaster is
    # a Meteor (wild): three of a type, so it is eliminated, its hand is
    # discarded, no discard is offered, and the two others play on.
    hands = deal(["bow_and_dino_1"], ["cool_stick_1"], ["run_home_bat_1"])
    position = Position(
        players=(
            seat(hands[0], escape=5),
            seat(hands[1], ["predatory_1", "predatory_2"], escape=8),
            seat(hands[2], ["emotional_1"], escape=3),
        ),
        rounds_played=3,
        disaster_deck=("meteor_1",),
        shuffle_rest=True,
    )
    game = start(position).game
    game, _ = commit(
        game, {0: "bow_and_dino_1", 1: "cool_stick_1", 2: "run_home_bat_1"}
    )
    game, _ = pass_all(game)
    assert game.taker == 1
    game, events = act(game, 1, TakeDisaster())
    eliminated = of_type(events, PlayerEliminated)
    assert [e.seat for e in eliminated] == [1]
    assert set(eliminated[0].discarded) == set(hands[1]) - {"cool_stick_1"}
    assert not of_type(events, DiscardOffered) and not of_type(events, GameWon)
    assert of_type(events, EscapeMoved) == [EscapeMoved(moves={0: 0, 2: 1})]
    assert game.players[1].eliminated and game.players[1].hand == ()
    assert game.round == 5 and RULES.active_seats(game) == {0, 2}
    check_invariants(game)


def test_given_two_players_the_deadly_disaster_leaves_the_other_last_standing() -> None:
    hands = deal(["bow_and_dino_1"], ["cool_stick_1"])
    position = Position(
        players=(seat(hands[0]), seat(hands[1], ["natural_1", "predatory_1"])),
        rounds_played=2,
        disaster_deck=("emotional_1",),  # three types
        shuffle_rest=True,
    )
    game = start(position).game
    game, _ = commit(game, {0: "bow_and_dino_1", 1: "cool_stick_1"})
    game, _ = pass_all(game)
    game, events = act(game, 1, TakeDisaster())
    assert of_type(events, GameWon) == [GameWon(winners=(0,), result="last_standing")]
    assert RULES.is_terminal(game)


# -- refusals ---------------------------------------------------------------

HANDS = deal(["cool_stick_1"], ["bow_and_dino_1"])
P0, P1 = seat(HANDS[0]), seat(HANDS[1])
ELIMINATED = seat((), ["natural_1", "natural_2", "natural_3"], eliminated=True)

BROKEN = [
    (base(players=(P0,)), "position.players"),
    (base(players=(seat(["dodo_1", *HANDS[0][1:]]), P1)), "position.players[0].hand"),
    (base(players=(seat(["meteor_1", *HANDS[0][1:]]), P1)), "position.players[0].hand"),
    (
        base(players=(P0, seat(HANDS[1], ["pet_rock_1"]))),
        "position.players[1].disasters",
    ),
    (base(discard=(HANDS[1][2],)), "position.discard"),
    (base(disaster_deck=("natural_1", "natural_1")), "position.disaster_deck"),
    (base(shuffle_rest=False), "position.main_deck"),
    (
        base(
            shuffle_rest=False,
            main_deck=tuple(c for c in MAIN if c not in {*HANDS[0], *HANDS[1]}),
        ),
        "position.disaster_deck",
    ),
    (base(players=(seat(HANDS[0], escape=50), P1)), "position.players[0].escape"),
    (base(players=(P0, seat(HANDS[1], escape=-1))), "position.players[1].escape"),
    (
        base(players=(P0, seat(HANDS[1], ["natural_1", "meteor_1", "predatory_1"]))),
        "position.players[1].disasters",
    ),
    (
        base(
            players=(
                P0,
                P1,
                seat(["pet_rock_1"], ELIMINATED.disasters, eliminated=True),
            )
        ),
        "position.players[2].hand",
    ),
    (
        base(players=(P0, P1, seat((), ["natural_1", "natural_2"], eliminated=True))),
        "position.players[2].disasters",
    ),
    (
        base(
            players=(
                P0,
                P1,
                seat(
                    (),
                    ["natural_1", "natural_2", "natural_3", "natural_4"],
                    eliminated=True,
                ),
            )
        ),
        "position.players[2].disasters",
    ),
    (
        base(players=(seat([f"score_booster_{i}" for i in range(1, 6)]), P1)),
        "position.players[0].hand",
    ),
    (base(players=(seat(HANDS[0][:4]), P1)), "position.players[0].hand"),
    (base(players=(P0, ELIMINATED, ELIMINATED)), "position.players[2].disasters"),
    (
        base(
            players=(
                P0,
                ELIMINATED,
                seat((), ["predatory_1", "predatory_2", "meteor_1"], eliminated=True),
            )
        ),
        "position.players",
    ),
    (
        base(
            players=(seat(HANDS[0], ["natural_1"]), seat(HANDS[1], ["natural_2"])),
            rounds_played=1,
        ),
        "position.rounds_played",
    ),
    (base(rounds_played=-1), "position.rounds_played"),
]


def _players(position: Position) -> int:
    return 3 if len(position.players) == 3 else 2


@pytest.mark.parametrize(("position", "field"), BROKEN)
def test_a_broken_position_is_refused_naming_its_field(
    position: Position, field: str
) -> None:
    error = refusal(RULES, _players(position), Scenario(position=position))
    assert error is not None and error.field == field, error
    assert error.reason == "POSITION_INVALID"


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario(hands=(Hand(tuple(HANDS[0])),), position=base()),
        Scenario(main_deck=("pet_rock_1",), position=base()),
        Scenario(disaster_deck=("meteor_1",), position=base()),
    ],
)
def test_a_position_with_the_scenarios_own_deal_is_refused(scenario: Scenario) -> None:
    error = refusal(RULES, 2, scenario)
    assert error is not None and error.field in ("hands", "main_deck", "disaster_deck")


def test_short_hands_are_fine_when_the_main_deck_is_empty() -> None:
    # Every card placed, the Main deck empty: the refill had nothing to draw.
    hands = (("cool_stick_1", *MAIN[:2]), ("bow_and_dino_1",))
    placed = {*hands[0], *hands[1]}
    position = Position(
        players=(seat(hands[0]), seat(hands[1])),
        discard=tuple(c for c in MAIN if c not in placed),
        disaster_deck=DISASTERS,
    )
    assert refusal(RULES, 2, Scenario(position=position)) is None


# -- what players see -------------------------------------------------------


def test_players_see_their_own_hand_and_no_decks_order() -> None:
    position = base(
        players=(seat(HANDS[0], ["natural_1"], 4), seat(HANDS[1], (), 7)),
        main_deck=("pet_rock_1",),
        discard=("pet_rock_2",),
        disaster_deck=("meteor_1",),
    )
    shown = RULES.redact_position(position, Viewer.player(0))
    assert shown.players[0] == position.players[0]
    # Another seat's hand: as many unseen cards (the views show its size).
    assert shown.players[1] == seat(("",) * len(HANDS[1]), (), 7)
    assert shown.main_deck == () and shown.disaster_deck == ()
    assert shown.discard == ("pet_rock_2",) and shown.rounds_played == 3
    spectator = RULES.redact_position(position, Viewer.spectator())
    assert [set(p.hand) for p in spectator.players] == [{""}, {""}]
    assert RULES.redact_position(position, Viewer.admin()) == position
    played = assert_position_plays(
        RULES, happy_little_dinosaurs_pb2, 2, Scenario(position=position), "seen"
    )
    # Sizes stay visible through the view.
    view = RULES.view(start(position).game, Viewer.player(0))
    assert view.players[1].hand == () and view.players[1].hand_size == 5
    assert played.state.game.main_deck  # the deck is there, only hidden


# -- random positions -------------------------------------------------------


def random_position(rng: Rng, players: int) -> Position:
    """A position as a game could reach it, now and then broken in one way."""
    main = list(rng.shuffled(MAIN))
    disasters = list(rng.shuffled(DISASTERS))
    seats: list[PlayerPosition] = []
    # One seat now and then eliminated (with two, the game would be over).
    eliminated = rng.choice([()] * 4 + [(rng.roll(players) - 1,)] * (players - 2))
    for i in range(players):
        area: list[str] = []
        if i in eliminated:
            while not eliminates(RULES.disaster_type(c) for c in area):
                area.append(disasters.pop())
            seats.append(seat((), area, rng.roll(50) - 1, True))
            continue
        for _ in range(rng.roll(4) - 1):
            card = disasters[-1]
            if eliminates(RULES.disaster_type(c) for c in (*area, card)):
                break
            area.append(disasters.pop())
        hand = [main.pop() for _ in range(4 + rng.roll(3))]
        if not any(CARDS.cards[c].kind is Kind.POINT for c in hand):
            hand.append(next(c for c in main if CARDS.cards[c].kind is Kind.POINT))
            main.remove(hand[-1])
        seats.append(seat(hand, area, rng.roll(50) - 1))
    discard = [main.pop() for _ in range(rng.roll(10) - 1)]
    shuffle_rest = rng.roll(2) == 1
    position = Position(
        players=tuple(seats),
        rounds_played=sum(len(s.disasters) for s in seats) + rng.roll(4) - 1,
        main_deck=tuple(main[: rng.roll(5)] if shuffle_rest else main),
        discard=tuple(discard),
        disaster_deck=tuple(disasters[: rng.roll(3)] if shuffle_rest else disasters),
        shuffle_rest=shuffle_rest,
    )
    return _broken(rng, position) if rng.roll(6) == 1 else position


def _broken(rng: Rng, position: Position) -> Position:
    """``position`` broken in one of a few ways."""
    first = position.players[0]
    match rng.roll(5):
        case 1:
            players = (replace(first, escape=50), *position.players[1:])
            return replace(position, players=players)
        case 2 if first.hand:  # a card in two places (an eliminated seat has none)
            return replace(position, discard=(*position.discard, first.hand[0]))
        case 3:
            return replace(position, rounds_played=-1)
        case 4:
            return replace(position, players=position.players[1:])
    return replace(position, main_deck=position.main_deck[1:])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_positions_start_and_play_or_are_refused_with_a_reason(
    players: int,
) -> None:
    refused, played = check_random_positions(
        RULES,
        happy_little_dinosaurs_pb2,
        players,
        lambda rng, _: Scenario(position=random_position(rng, players)),
        max(RANDOM_SEEDS // 10, 10),
        check_each_step=check_invariants,
        steps=80,
    )
    assert refused and played  # both kinds were tried


def break_readme_example(data: dict[str, Any]) -> str:
    """Break the README's example position (proto JSON) in one field: a
    third Natural Disaster already in Bad Luck Bronto's area, a deadly set
    for a living dinosaur. The path of that field (the end-to-end tests
    check the service names it)."""
    data["players"][1]["disasters"].append("natural_4")
    return "players[1].disasters"


def test_hands_that_could_hold_every_point_card_a_redraw_needs_are_refused() -> None:
    """Three seats: with two hands of 26 cards the third seat's later
    redraw could find all 53 Point cards but one held by them and its own
    last one played (hands keep what they hold above five); with two of 25,
    three stay outside them."""
    points = [c for c in MAIN if RULES.card(c).kind is Kind.POINT]
    others = [c for c in MAIN if RULES.card(c).kind is not Kind.POINT]

    def three(big: int) -> Position:
        pool = points + others
        hands = [pool[:big], pool[big : 2 * big], [*points[-1:], *others[-4:]]]
        return Position(
            players=tuple(seat(h) for h in hands), rounds_played=1, shuffle_rest=True
        )

    error = refusal(RULES, 3, Scenario(position=three(26)))
    assert error is not None and error.field == "position.players[0].hand", error
    assert "redraw" in error.message
    assert refusal(RULES, 3, Scenario(position=three(25))) is None


def test_a_short_hand_counts_as_five_for_the_redraws() -> None:
    """Both draw piles empty, seats holding 48, 1 and 1 cards: the short
    hands are refilled to five later (once cards are discarded and
    reshuffled), so with the big one they could hold every Point card but
    one: refused, though the cards held now leave several outside."""
    points = [c for c in MAIN if RULES.card(c).kind is Kind.POINT]
    others = [c for c in MAIN if RULES.card(c).kind is not Kind.POINT]
    position = Position(
        players=(seat(points[2:50]), seat(points[:1]), seat(points[1:2])),
        discard=(*points[50:], *others),
        disaster_deck=DISASTERS,
    )
    error = refusal(RULES, 3, Scenario(position=position))
    assert error is not None and error.field == "position.players[0].hand", error
    assert "redraw" in error.message


def test_rounds_played_are_bounded() -> None:
    error = refusal(RULES, 2, Scenario(position=base(rounds_played=1_000_000)))
    assert error is not None and error.field == "position.rounds_played"


def test_another_seats_hand_and_the_decks_are_hidden() -> None:
    position = base()
    placed = {c for p in position.players for c in p.hand}
    spare = next(
        c for c in MAIN if c not in placed and RULES.card(c).kind is Kind.POINT
    )
    hand = position.players[1].hand
    twin = replace(
        position,
        players=(position.players[0], seat([spare, *hand[1:]])),
    )
    viewers = [Viewer.spectator(), Viewer.player(0)]
    assert_hidden_alike(RULES, 2, position, twin, viewers)
    decks = replace(position, shuffle_rest=False, main_deck=(), disaster_deck=())
    full = replace(
        decks,
        main_deck=tuple(c for c in MAIN if c not in placed),
        disaster_deck=DISASTERS,
    )
    reordered = replace(
        full,
        main_deck=full.main_deck[::-1],
        disaster_deck=full.disaster_deck[::-1],
    )
    assert_hidden_alike(RULES, 2, full, reordered, [*viewers, Viewer.player(1)])
