"""A viewer can fold its own stream, in every game.

A frontend may keep its game by folding the events ``WatchGame`` sends it,
redacted for its seat (or for a spectator), with the game's own ``evolve``.
For each seat and a spectator of random games (each option switched on,
seats leaving in some), that fold never raises, and at every version what
the service would show that viewer of the folded state is what it shows of
the true one: the game's view for that viewer and the lifecycle's part of
``GetGame`` (status, seats, who may act, the outcome) at every version,
and the whole ``GetGame`` message (``game_to_proto``) every
:data:`PROTO_EVERY` versions and at the end (the mapping to protobuf is a
function of those). What a viewer may not see is an unseen placeholder in
its folded state (docs/ADDING_A_GAME.md, *A viewer's fold*), which no view
it is given shows.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain import registry
from domain.chance import Rng
from domain.rules import Viewer
from domain.session import Session, SessionState, Status
from service.answers import game_to_proto
from service.callers import Caller, hash_token
from service.games import Loaded
from tests.gamekit import RANDOM_SEEDS, fold_each, option_sets

#: Random games per player count and options (each is folded again for
#: every viewer at every version).
SEEDS = max(2, RANDOM_SEEDS // 150)
MAX_COMMANDS = 20_000
#: Every how many versions the whole GetGame message is compared.
PROTO_EVERY = 16


def token(seat: int) -> str:
    return f"st_viewer-fold-{seat}"


def random_game(
    session: Session[Any], players: int, seed: str, options: Any, leaver: bool
) -> list[Any]:
    """A whole game's events, random legal moves; with ``leaver``, a seat
    leaves part-way (its stand-in, or a game's own events, take over)."""
    events: list[Any] = [session.create(players, seed, options, salt="salt")]
    state = session.fold(events)
    for seat in range(players):
        joined = session.join(state, f"p{seat}", hash_token(token(seat)), seat)
        events += joined
        state = session.fold(joined, state)
    started = session.start(state, Rng(seed, state.version))
    events += started
    state = session.fold(started, state)
    chooser = Rng(seed, -1)
    leave_at = 7 if leaver else -1
    for step in range(MAX_COMMANDS):
        if state.status is Status.FINISHED:
            return events
        if step == leave_at:
            seat = chooser.choice(list(state.seats_in))
            new = session.leave(state, seat, rng=Rng(seed, state.version))
        else:
            seat = chooser.choice(sorted(session.active_seats(state)))
            command = chooser.choice(session.legal_actions(state, seat))
            new = session.play(state, seat, command, Rng(seed, state.version))
        events += new
        state = session.fold(new, state)
    raise AssertionError(f"game {seed} did not end")


def shown(
    session: Session[Any], state: SessionState[Any], caller: Caller, true: Any
) -> Any:
    """The game the service shows ``caller`` of ``state`` (its seats are
    judged on the true state, as the service judges them on the stored one)."""
    return game_to_proto("g", Loaded("g", session, state, None), caller, true)


def seen(session: Session[Any], state: SessionState[Any], viewer: Viewer) -> Any:
    """What :func:`shown` maps to protobuf: the lifecycle's part and the
    game's view for ``viewer``."""
    seats = [None if s is None else (s.name, s.bot) for s in state.seats]
    lifecycle = (state.status, state.version, state.rules_version, state.outcome)
    return (
        lifecycle,
        seats,
        state.left,
        state.rematch,
        session.active_seats(state),
        session.rules.view(state.game, viewer),
    )


@pytest.mark.parametrize(
    ("game_type", "players"),
    [
        (g, p)
        for g in registry.game_types()
        for p in range(
            registry.rules_for(g).min_players, registry.rules_for(g).max_players + 1
        )
    ],
)
def test_each_viewer_folds_its_own_stream_to_the_game_it_is_shown(
    game_type: str, players: int
) -> None:
    rules = registry.rules_for(game_type)
    session = Session(rules)
    for options in option_sets(rules):
        for n in range(SEEDS):
            seed = f"fold-{players}-{n}"
            events = random_game(session, players, seed, options, n % 2 == 1)
            check_viewers(session, players, events)


def check_viewers(session: Session[Any], players: int, events: list[Any]) -> None:
    callers = [Caller(token=token(s)) for s in range(players)] + [Caller()]
    truths = fold_each(session, events)
    for caller in callers:
        viewer = caller.viewer(truths[-1])
        assert viewer.seats or caller is callers[-1]
        folded = None
        for event, true in zip(events, truths, strict=True):
            folded = session.evolve(folded, session.redact(event, viewer))
            where = (type(event).__name__, true.version, viewer)
            assert seen(session, folded, viewer) == seen(session, true, viewer), where
            if true.version % PROTO_EVERY == 0 or true is truths[-1]:
                assert shown(session, folded, caller, true) == shown(
                    session, true, caller, true
                ), where
