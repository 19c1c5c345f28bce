"""End to end: a player (and a spectator) folds what ``WatchGame`` sends it.

A frontend that keeps its game from the stream decodes each ``Event`` and
folds it with the game's own rules; through a real server, for every game
type, every seat and a spectator, that fold gives at every version the view
``GetGame`` (``at_version``) shows that caller.
"""

from __future__ import annotations

from typing import Any

import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient
from domain import codec, registry
from domain.fairness import SeedRevealed
from domain.rules import Viewer
from domain.session import (
    GameCreated,
    GameFinished,
    GameStarted,
    PlayerJoined,
    PlayerLeft,
    RematchCreated,
    SeatLeft,
    Session,
)
from service import protomap
from service.answers import game_module
from tests.service.test_secrecy import play_through_service


def decoded(session: Session[Any], event: pb.Event) -> Any:
    """The event a client reads in ``event`` (lifecycle or the game's)."""
    rules = session.rules
    game_type = rules.game_type

    def game_part(message: Any, tp: Any) -> Any:
        return protomap.from_proto(getattr(message, game_type), tp)

    match event.WhichOneof("body"):
        case "game_created":
            c = event.game_created
            scenario = (
                codec.encode(game_part(c.scenario, rules.scenario_type))
                if c.scenario.WhichOneof("game")
                else None
            )
            options = codec.encode(game_part(c.options, rules.options_type))
            return GameCreated(
                c.game_type,
                c.rules_version,
                c.players,
                c.seed,
                options,
                scenario,
                c.commitment,
                c.salt,
                c.reveal,
            )
        case "player_joined":
            j = event.player_joined
            return PlayerJoined(j.seat, j.player_name, "", j.bot)
        case "player_left":
            return PlayerLeft(event.player_left.seat)
        case "seat_left":
            return SeatLeft(event.seat_left.seat, event.seat_left.bot)
        case "game_started":
            return GameStarted()
        case "game_finished":
            outcome = event.game_finished.outcome
            return GameFinished(tuple(outcome.winners), outcome.result)
        case "rematch_created":
            return RematchCreated(event.rematch_created.game_id)
        case "seed_revealed":
            return SeedRevealed(event.seed_revealed.seed, event.seed_revealed.salt)
        case _:
            return game_part(event.game_event, rules.event_types)


@pytest.mark.parametrize("game_type", registry.game_types())
def test_a_seat_folds_its_watched_stream_to_the_game_it_is_shown(
    client: StrataClient, game_type: str
) -> None:
    rules = registry.rules_for(game_type)
    session = Session(rules)
    players = max(rules.min_players, 2)
    game_id, seats, _ = play_through_service(client, game_type, players, "fold")
    viewers = [(c, Viewer.player(s)) for s, c in seats.items()]
    viewers.append((client, Viewer.spectator()))
    for watcher, viewer in viewers:
        state = None
        versions = 0
        # The whole stream first: its deadline is the client's timeout.
        for event in list(watcher.watch_game(game_id, follow=False)):
            state = session.evolve(state, decoded(session, event))
            assert state.version == event.version
            versions += 1
            shown = watcher.get_game(game_id, at_version=event.version)
            folded = protomap.to_proto(
                rules.view(state.game, viewer), game_module(game_type).View()
            )
            assert getattr(shown.view, game_type) == folded, (event.type, viewer)
            assert list(shown.active_seats) == sorted(session.active_seats(state))
        assert state is not None and versions == watcher.get_game(game_id).version
