"""Hidden information: the deck order and the cards out of play reach nobody
but an admin, through views or events. Collections and the packet are public.

The proof: re-deal the secret part of a state (the deck and the cards out of
play shuffled together and split again at the same sizes) and check that
every player's and a spectator's view, and every event as they receive it,
is the same as before."""

from __future__ import annotations

import dataclasses
import random

import pytest

from domain.cubosaurs import RULES
from domain.cubosaurs.model import CubosaursState, Options, RoundDealt
from domain.rules import Viewer
from domain.session import LIFECYCLE_EVENTS
from tests.gamekit import play_random

SEEDS = 10
VIEW_EVERY = 7  # views are compared after every 7th event


def resecret(state: CubosaursState, chooser: random.Random) -> CubosaursState:
    """``state`` with its deck and out-of-play cards dealt differently."""
    hidden = [*state.deck, *state.out_of_play]
    chooser.shuffle(hidden)
    size = len(state.deck)
    return dataclasses.replace(
        state, deck=tuple(hidden[:size]), out_of_play=tuple(sorted(hidden[size:]))
    )


def resecret_event(event: RoundDealt, chooser: random.Random) -> RoundDealt:
    hidden = [*event.deck, *event.out_of_play]
    chooser.shuffle(hidden)
    size = len(event.deck)
    return dataclasses.replace(
        event, deck=tuple(hidden[:size]), out_of_play=tuple(sorted(hidden[size:]))
    )


def viewers(players: int) -> list[Viewer]:
    return [Viewer.spectator(), *(Viewer.player(s) for s in range(players))]


@pytest.mark.parametrize("advanced", [False, True], ids=["basic", "advanced"])
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_no_view_or_event_shows_a_player_the_deck_or_the_cards_out_of_play(
    players: int, advanced: bool
) -> None:
    chooser = random.Random(players)
    for index in range(SEEDS):
        played = play_random(RULES, players, f"secret-{index}", Options(advanced))
        game = RULES.initial_state(played.state.config)
        for step, event in enumerate(played.events):
            if isinstance(event, LIFECYCLE_EVENTS):
                continue
            if isinstance(event, RoundDealt):
                other = resecret_event(event, chooser)
                assert other != event
                for viewer in viewers(players):
                    redacted = RULES.redact(event, viewer)
                    assert isinstance(redacted, RoundDealt)
                    assert redacted.deck == redacted.out_of_play == ()
                    assert redacted.deck_size == len(event.deck)
                    assert RULES.redact(other, viewer) == redacted
            else:
                for viewer in viewers(players):
                    assert RULES.redact(event, viewer) == event
            game = RULES.evolve(game, event)
            if step % VIEW_EVERY:
                continue
            other_game = resecret(game, chooser)
            for viewer in viewers(players):
                view = RULES.view(game, viewer)
                assert view.deck == view.out_of_play == ()
                assert RULES.view(other_game, viewer) == view


def test_an_admin_sees_the_deck_and_the_cards_out_of_play() -> None:
    played = play_random(RULES, 3, "admin", Options())
    deal = next(e for e in played.events if isinstance(e, RoundDealt))
    assert RULES.redact(deal, Viewer.admin()) == deal
    game = RULES.initial_state(played.state.config)
    game = RULES.evolve(game, deal)
    view = RULES.view(game, Viewer.admin())
    assert view.deck == deal.deck
    assert view.out_of_play == deal.out_of_play


def test_collections_and_the_packet_are_public() -> None:
    played = play_random(RULES, 3, "public", Options(advanced=True))
    game = RULES.initial_state(played.state.config)
    for event in played.events[:40]:
        if not isinstance(event, LIFECYCLE_EVENTS):
            game = RULES.evolve(game, event)
    view = RULES.view(game, Viewer.spectator())
    assert [tuple(c.id for c in p.collection) for p in view.players] == [
        s.collection for s in game.seats
    ]
    assert tuple(c.id for c in view.packet) == game.packet
    assert view.deck_size == len(game.deck)
