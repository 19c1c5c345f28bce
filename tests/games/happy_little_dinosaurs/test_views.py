"""What each viewer sees: own hand and commitment, public cards, sizes, and
never another player's hand, face-down card or a deck order."""

from __future__ import annotations

import dataclasses

from domain.chance import Rng
from domain.happy_little_dinosaurs import RULES
from domain.happy_little_dinosaurs.model import (
    CardsDrawn,
    GameSetUp,
    MainDeckReshuffled,
    PlayPointCard,
    State,
)
from domain.rules import Viewer
from domain.session import Session
from tests.gamekit import new_game

from .helpers import act, deal, redacted, table


def test_a_player_sees_their_own_hand_and_only_the_size_of_others() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]))
    view = RULES.view(state, Viewer.player(0))
    assert view.players[0].hand == state.players[0].hand
    assert view.players[1].hand == () and view.players[1].hand_size == 5
    assert view.main_deck_size == len(state.main_deck)
    assert view.disaster_deck_size == len(state.disaster_deck)
    assert view.disaster == state.disaster


def test_spectators_see_no_hand_and_admins_see_every_hand() -> None:
    state = table(deal(["meteor_cannon_1"], ["cool_stick_1"]))
    state, _ = act(state, 0, PlayPointCard("meteor_cannon_1"))
    spectator = RULES.view(state, Viewer.spectator())
    assert all(p.hand == () and p.commitment is None for p in spectator.players)
    admin = RULES.view(state, Viewer.admin())
    assert admin.players[1].hand == state.players[1].hand
    assert admin.players[0].commitment == "meteor_cannon_1"


def test_set_up_and_reshuffle_events_hide_the_deck_orders() -> None:
    _, events = new_game(RULES, 2, "orders")
    setup = next(e for e in events if isinstance(e, GameSetUp))
    for viewer in (Viewer.player(0), Viewer.player(1), Viewer.spectator()):
        seen = redacted(setup, viewer)
        assert seen.main_deck == () and seen.disaster_deck == ()
        assert seen.main_deck_size == 69 and seen.disaster_deck_size == 28
    assert redacted(setup, Viewer.admin()) == setup
    shuffle = MainDeckReshuffled(("cool_stick_1", "pet_rock_1"), 2)
    assert redacted(shuffle, Viewer.player(0)) == MainDeckReshuffled((), 2)


def test_drawn_cards_are_shown_only_to_the_player_who_drew_them() -> None:
    drawn = CardsDrawn(1, ("cool_stick_1", "pet_rock_1"), 2)
    assert redacted(drawn, Viewer.player(1)) == drawn
    assert redacted(drawn, Viewer.player(0)) == CardsDrawn(1, (), 2)
    assert redacted(drawn, Viewer.spectator()) == CardsDrawn(1, (), 2)


def disguise(state: State, viewer: int) -> State:
    """The same game but for what ``viewer`` may not know: other hands and
    face-down cards exchanged with Main deck cards, the deck reversed."""
    deck = list(state.main_deck)
    players = list(state.players)
    committed = dict(state.committed)
    for seat, player in enumerate(players):
        if seat == viewer or player.eliminated:
            continue
        k = min(len(player.hand), len(deck))
        new_hand, deck = deck[:k], deck[k:] + list(player.hand[:k])
        players[seat] = dataclasses.replace(player, hand=(*new_hand, *player.hand[k:]))
        if seat in committed:
            points = [c for c in deck if RULES.card(c).kind.name == "POINT"]
            if points:
                deck.remove(points[0])
                deck.append(committed[seat])
                committed[seat] = points[0]
    return dataclasses.replace(
        state,
        players=tuple(players),
        main_deck=tuple(reversed(deck)),
        committed=committed,
    )


def test_views_do_not_depend_on_anything_secret_from_the_viewer() -> None:
    session = Session(RULES)
    checked = 0
    for players in (2, 3, 4):
        for i in range(6):
            seed = f"disguise-{players}-{i}"
            state, _ = new_game(RULES, players, seed)
            chooser = Rng(seed, -1)
            while not RULES.is_terminal(state.game):
                game = state.game
                holder = (
                    None if game.effect is None else RULES.holder(game, game.effect)
                )
                for viewer in range(players):
                    if holder == viewer and (game.effect_target is not None):
                        continue  # the Dino Grabber rightly sees that hand
                    other = disguise(game, viewer)
                    assert RULES.view(game, Viewer.player(viewer)) == RULES.view(
                        other, Viewer.player(viewer)
                    )
                    checked += 1
                seat = chooser.choice(sorted(RULES.active_seats(game)))
                command = chooser.choice(RULES.legal_actions(game, seat))
                events = session.play(state, seat, command, Rng(seed, state.version))
                state = session.fold(events, state)
    assert checked > 1000
