"""No view or streamed event shows a face-down tile, a deck order or an
unrevealed card to anyone but an admin."""

from __future__ import annotations

import dataclasses

from domain.escaping_extinction import RULES
from domain.escaping_extinction.model import (
    EarthquakeStruck,
    ExplorationDeckReshuffled,
    State,
    TileRevealed,
    WorldSetUp,
)
from domain.frozen import replace
from domain.rules import GameConfig, Viewer
from domain.session import LIFECYCLE_EVENTS
from tests.gamekit import play_random

VIEWERS = [Viewer.spectator(), *(Viewer.player(s) for s in range(4))]


def twin(state: State) -> State:
    """The same table but for its secrets: face-down tiles swapped around,
    every deck in another order."""
    hidden = [i for i, p in enumerate(state.places) if not p.revealed]
    tiles = [state.places[i].tile for i in hidden]
    places = list(state.places)
    for i, tile in zip(hidden, [*tiles[1:], *tiles[:1]], strict=True):
        places[i] = dataclasses.replace(places[i], tile=tile)
    return dataclasses.replace(
        state,
        places=tuple(places),
        meteor_deck=tuple(reversed(state.meteor_deck)),
        docket_deck=tuple(reversed(state.docket_deck)),
        exploration_deck=tuple(reversed(state.exploration_deck)),
    )


def test_views_do_not_depend_on_face_down_tiles_or_deck_orders() -> None:
    for n in range(40):
        played = play_random(RULES, 1 + n % 4, f"secret-{n}")
        state = played.state.game
        other = twin(state)
        for viewer in VIEWERS:
            assert RULES.view(state, viewer) == RULES.view(other, viewer)
        if sum(not p.revealed for p in state.places) > 1:
            assert RULES.view(state, Viewer.admin()) != RULES.view(
                other, Viewer.admin()
            )


def test_views_mid_game_show_no_face_down_tile() -> None:
    session_events = play_random(RULES, 2, "midgame").events
    state = RULES.initial_state(GameConfig(2, "midgame", RULES.options_type(), None))
    for event in session_events:
        if isinstance(event, LIFECYCLE_EVENTS):
            continue
        state = RULES.evolve(state, event)
        for viewer in VIEWERS:
            view = RULES.view(state, viewer)
            for place in view.places:
                if not place.revealed:
                    assert place.tile == "" and place.terrain is None
                    assert place.token is None
            assert RULES.view(twin(state), viewer) == view


def test_redacted_events_hide_the_layout_and_deck_orders() -> None:
    played = play_random(RULES, 3, "redact")
    secret_types = (WorldSetUp, EarthquakeStruck, ExplorationDeckReshuffled)
    for event in played.events:
        if isinstance(event, LIFECYCLE_EVENTS):
            continue
        for viewer in VIEWERS:
            redacted = RULES.redact(event, viewer)
            match redacted:
                case WorldSetUp():
                    # The decks' sizes stay: they are public (the views).
                    assert redacted == replace(
                        event,
                        layout=(),
                        meteor_deck=(),
                        rocket_docket_deck=(),
                        exploration_deck=(),
                    )
                case EarthquakeStruck(layout=layout):
                    assert layout == () and redacted == replace(event, layout=())
                case ExplorationDeckReshuffled(order):
                    assert order == ()
                case _:
                    assert not isinstance(redacted, secret_types)
                    assert redacted == event
        assert RULES.redact(event, Viewer.admin()) == event


def test_a_tile_is_named_in_an_event_only_when_it_is_revealed() -> None:
    played = play_random(RULES, 1, "reveal")
    revealed = [e for e in played.events if isinstance(e, TileRevealed)]
    assert revealed, "a random game reveals tiles"
    # TileRevealed is the only event that names a tile, and it is public by
    # nature: the tile is face up from then on.
    state = played.state.game
    for e in revealed:
        assert e.tile in {p.tile for p in state.places}


def test_the_seed_and_scenario_of_a_game_reach_only_an_admin() -> None:
    from domain.escaping_extinction.model import Scenario
    from domain.session import GameCreated, Session

    session = Session(RULES)
    created = session.create(2, "secret-seed", scenario=Scenario(die_faces=(3,)))
    for viewer in VIEWERS:
        shown = session.redact(created, viewer)
        assert isinstance(shown, GameCreated)
        assert shown.seed == "" and shown.scenario is None
    assert session.redact(created, Viewer.admin()) == created
