"""What each viewer sees: everything but the order of the Earth Event stack,
which only the admin sees."""

from __future__ import annotations

import dataclasses

import pytest

from domain.dinosaurs_extinct import RULES
from domain.dinosaurs_extinct.model import (
    EarthEventsShuffled,
    Heading,
    Phase,
    Scenario,
    State,
)
from domain.rules import Viewer
from domain.session import LIFECYCLE_EVENTS, GameCreated, Session
from tests.gamekit import new_game, play_random
from tests.games.dinosaurs_extinct.helpers import CONTENT, DECK, table

NOT_ADMIN = [Viewer.spectator(), *(Viewer.player(s) for s in range(4))]


def test_the_view_shows_the_board_the_dinos_and_the_stack_size() -> None:
    state = table(3, 0, bones={0: 1})

    view = RULES.view(state, Viewer.player(1))

    assert view.phase is Phase.ROLL
    assert view.turn == 0
    assert view.board == CONTENT.spaces
    assert len(view.board) == 37
    assert view.time_warp == CONTENT.time_warp
    assert view.last_no_bones_on_me == CONTENT.last_no_bones
    assert view.life_card_overlays == 3
    assert view.earth_events_in_stack == 14
    assert view.earth_deck == ()
    first = view.dinos[0]
    assert (first.seat, first.step, first.bones) == (0, 3, 1)
    assert first.name == "Green Rex"
    assert first.colour == "green"
    assert not first.alive_and_well
    assert view.dinos[1].alive_and_well
    assert first.heading is Heading.FORWARD
    assert view.winner is None


def test_the_last_earth_event_drawn_is_face_up_for_everyone() -> None:
    state = dataclasses.replace(table(0, 0), last_earth_event=DECK[0])

    view = RULES.view(state, Viewer.spectator())

    card = CONTENT.card(DECK[0])
    assert view.last_earth_event is not None
    assert (view.last_earth_event.id, view.last_earth_event.name) == (
        card.id,
        card.name,
    )
    assert view.last_earth_event.number == card.number


def test_only_the_admin_sees_the_order_of_the_earth_event_stack() -> None:
    state = table(0, 0)

    assert RULES.view(state, Viewer.admin()).earth_deck == DECK
    for viewer in NOT_ADMIN:
        view = RULES.view(state, viewer)
        assert view.earth_deck == ()
        assert view.earth_events_in_stack == len(DECK)


@pytest.mark.parametrize("viewer", NOT_ADMIN, ids=repr)
def test_two_games_differing_only_in_the_stack_order_look_the_same(
    viewer: Viewer,
) -> None:
    order_a = DECK
    order_b = tuple(reversed(DECK))
    game_a, events_a = new_game(RULES, 4, scenario=Scenario(earth_events=order_a))
    game_b, events_b = new_game(RULES, 4, scenario=Scenario(earth_events=order_b))
    session = Session(RULES)

    assert game_a.game.earth_deck != game_b.game.earth_deck
    assert RULES.view(game_a.game, viewer) == RULES.view(game_b.game, viewer)
    # The whole stream, the scenario in GameCreated included.
    redacted_a = [session.redact(e, viewer) for e in events_a]
    redacted_b = [session.redact(e, viewer) for e in events_b]
    assert redacted_a == redacted_b


def test_the_scenario_in_the_first_event_is_for_the_admin_only() -> None:
    scenario = Scenario(dice=(6, 6, 1), earth_events=tuple(reversed(DECK)))
    _, events = new_game(RULES, 2, scenario=scenario)
    created = events[0]
    session = Session(RULES)

    assert isinstance(created, GameCreated)
    assert session.redact(created, Viewer.admin()) == created
    for viewer in NOT_ADMIN:
        assert session.redact(created, viewer).scenario is None


def test_the_shuffle_is_redacted_to_a_count_for_everyone_but_the_admin() -> None:
    shuffled = EarthEventsShuffled(order=DECK, cards=14)

    assert RULES.redact(shuffled, Viewer.admin()) == shuffled
    for viewer in NOT_ADMIN:
        assert RULES.redact(shuffled, viewer) == EarthEventsShuffled(order=(), cards=14)


def _with_deck(state: State, deck: tuple[int, ...]) -> State:
    return dataclasses.replace(state, earth_deck=deck)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_no_view_or_event_in_a_played_game_tells_a_player_the_stack_order(
    players: int,
) -> None:
    session = Session(RULES)
    for i in range(20):
        played = play_random(RULES, players, f"secret-{players}-{i}")
        state = None
        for event in played.events:
            state = session.evolve(state, event)
            game = state.game
            if not game.earth_deck:
                continue
            # The same game with the stack turned over: no player can tell.
            other = _with_deck(game, tuple(reversed(game.earth_deck)))
            for viewer in [Viewer.spectator()] + [
                Viewer.player(s) for s in range(players)
            ]:
                assert RULES.view(game, viewer) == RULES.view(other, viewer)
                if not isinstance(event, LIFECYCLE_EVENTS):
                    seen = RULES.redact(event, viewer)
                    if isinstance(seen, EarthEventsShuffled):
                        assert seen.order == ()
                    else:
                        # Every other event is public as it stands.
                        assert seen == event
