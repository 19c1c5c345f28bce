"""Shared helpers for game tests: given/when/then and random play.

Every game's tests use these, so each game is held to the same contract:
legal actions are accepted, games end, replaying the events rebuilds the
same state, everything survives the JSON codec and the protobuf mapping.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from domain import codec, registry
from domain.chance import Rng
from domain.errors import InvalidCommand
from domain.rules import GameConfig, GameRules, Viewer
from domain.session import LIFECYCLE_EVENTS, Session, SessionState
from service import protomap


def game_package(game_type: str) -> str:
    """The package of a game's code: ``domain.<game_type>`` for the games
    shipped, a package of its own for one ``STRATA_EXTRA_GAMES`` registers
    (tests/extra_games.py)."""
    module = type(registry.rules_for(game_type)).__module__
    return module.rpartition(".")[0]


def game_folder(game_type: str) -> Path:
    """The folder of a game's files (its package's)."""
    module = sys.modules[type(registry.rules_for(game_type)).__module__]
    return Path(module.__file__ or "").parent


def new_game(
    rules: GameRules[Any, Any, Any, Any],
    players: int,
    seed: str = "test",
    options: Any = None,
    scenario: Any = None,
) -> tuple[SessionState[Any], list[Any]]:
    """A started game with every seat taken; returns (state, all events)."""
    session = Session(rules)
    events: list[Any] = [session.create(players, seed, options, scenario)]
    state = session.fold(events)
    for seat in range(players):
        joined = session.join(state, f"player{seat}", f"hash{seat}", seat)
        events += joined
        state = session.fold(joined, state)
    started = session.start(state, Rng(seed, state.version))
    events += started
    state = session.fold(started, state)
    return state, events


def given(
    rules: GameRules[Any, Any, Any, Any],
    players: int,
    events: Sequence[Any],
    options: Any = None,
    scenario: Any = None,
) -> Any:
    """The game state after ``events`` (game events only, no lifecycle)."""
    if options is None:
        options = rules.options_type()
    state = rules.initial_state(GameConfig(players, "given", options, scenario))
    for event in events:
        state = rules.evolve(state, event)
    return state


def when(
    rules: GameRules[Any, Any, Any, Any],
    state: Any,
    seat: int,
    command: Any,
    seed: str = "when",
) -> list[Any]:
    """The events ``command`` causes (raises the domain error if refused)."""
    return rules.decide(state, seat, command, Rng(seed, 0))


#: Random-play tests split their seeds into this many test items, so that
#: pytest-xdist can share one parameter set's games between its workers.
SEED_CHUNKS = 10

#: Seeds each random-play test plays per player count (and mode):
#: ``STRATA_RANDOM_SEEDS``, 300 unless set. `./dev test` keeps the default
#: (the whole suite well inside ten minutes on two cores); a deeper run:
#: ``STRATA_RANDOM_SEEDS=5000 ./dev test tests/games``.
RANDOM_SEEDS = int(os.environ.get("STRATA_RANDOM_SEEDS", "300"))

#: Parametrizes a random-play test with ``chunk``: see :func:`seed_chunk`.
over_seed_chunks = pytest.mark.parametrize(
    "chunk", range(SEED_CHUNKS), ids=[f"chunk{c}" for c in range(SEED_CHUNKS)]
)


def seed_chunk(seeds: int, chunk: int, chunks: int = SEED_CHUNKS) -> range:
    """The seed indices of ``chunk`` (0 to ``chunks - 1``) out of ``seeds``:
    the chunks together cover ``range(seeds)`` once each."""
    return range(seeds * chunk // chunks, seeds * (chunk + 1) // chunks)


@dataclasses.dataclass
class PlayedGame:
    state: SessionState[Any]
    events: list[Any]
    commands: list[tuple[int, Any]]


def option_sets(rules: GameRules[Any, Any, Any, Any]) -> list[Any]:
    """The game's default options, and each of its switches turned on (a
    mode, such as Cubosaurs' advanced one, plays events the default does
    not)."""
    default = rules.options_type()
    switches = [f.name for f in dataclasses.fields(default) if f.type == "bool"]
    return [default, *(dataclasses.replace(default, **{f: True}) for f in switches)]


def play_random(
    rules: GameRules[Any, Any, Any, Any],
    players: int,
    seed: str,
    options: Any = None,
    max_steps: int = 20_000,
    check_each_step: Any = None,
    scenario: Any = None,
    stop_after: int | None = None,
) -> PlayedGame:
    """Play a whole game choosing uniformly among legal actions (from the
    ``scenario``'s position, if it has one).

    Fails if a legal action is refused, if nobody can act before the end,
    or if the game does not end within ``max_steps`` commands.
    ``check_each_step(state)`` runs after the start and after every command
    (invariants). With ``stop_after``, returns after that many commands.
    """
    session = Session(rules)
    state, events = new_game(rules, players, seed, options, scenario)
    if check_each_step is not None:
        check_each_step(state.game)
    chooser = Rng(seed, -1)
    commands: list[tuple[int, Any]] = []
    for _ in range(max_steps):
        if rules.is_terminal(state.game) or len(commands) == stop_after:
            return PlayedGame(state, events, commands)
        active = sorted(rules.active_seats(state.game))
        assert active, f"nobody can act in a non-terminal state (seed {seed})"
        seat = chooser.choice(active)
        actions = rules.legal_actions(state.game, seat)
        assert actions, f"seat {seat} is active but has no legal action"
        command = chooser.choice(actions)
        new, state = session.advance(state, seat, command, Rng(seed, state.version))
        assert new, f"{command} produced no event"
        commands.append((seat, command))
        events += new
        if check_each_step is not None:
            check_each_step(state.game)
    raise AssertionError(f"game did not end in {max_steps} steps (seed {seed})")


def assert_replays(rules: GameRules[Any, Any, Any, Any], played: PlayedGame) -> None:
    """Folding the stored (JSON round-tripped) events gives the same state,
    and the state survives the snapshot codec."""
    session = Session(rules)
    stored = [
        session.decode_event(type(e).__name__, codec.encode(e)) for e in played.events
    ]
    assert stored == played.events
    rebuilt = session.fold(stored)
    assert rebuilt == played.state
    snapshot = codec.decode(type(played.state.game), codec.encode(played.state.game))
    assert snapshot == played.state.game


def assert_replays_deterministically(
    rules: GameRules[Any, Any, Any, Any], played: PlayedGame, seed: str
) -> None:
    """Re-deciding the same commands from the same seed gives the same events."""
    session = Session(rules)
    players = len(played.state.seats)
    config = played.state.config
    state, events = new_game(rules, players, seed, config.options, config.scenario)
    for seat, command in played.commands:
        new, state = session.advance(state, seat, command, Rng(seed, state.version))
        events += new
    assert events == played.events
    assert state == played.state


def assert_maps_to_proto(
    rules: GameRules[Any, Any, Any, Any], module: ModuleType, played: PlayedGame
) -> None:
    """Every event, command and view of the game maps to its protobuf
    messages and back unchanged (redacted forms included).

    The mapping is a function of the value alone, so a value that recurs
    (the same event twice, a redacted copy equal to the event, which went
    through the wire format too) is mapped once."""
    game_events = [e for e in played.events if not isinstance(e, LIFECYCLE_EVENTS)]
    sent, mapped = _Once(), _Once()
    for event in game_events:
        if sent.first(event):
            message = protomap.to_proto(event, module.Event())
            back = protomap.from_proto(
                module.Event.FromString(message.SerializeToString()),
                rules.event_types,
            )
            assert back == event, (event, back)
        for seat in range(len(played.state.seats)):
            redacted = rules.redact(event, Viewer.player(seat))
            if sent.seen(redacted) or not mapped.first(redacted):
                continue
            message = protomap.to_proto(redacted, module.Event())
            assert protomap.from_proto(message, rules.event_types) == redacted, redacted
    for _, command in played.commands:
        if not mapped.first(command):
            continue
        message = protomap.to_proto(command, module.Command())
        assert protomap.from_proto(message, rules.command_types) == command
    for viewer in [
        Viewer.admin(),
        Viewer.spectator(),
        *(Viewer.player(s) for s in range(len(played.state.seats))),
    ]:
        view = rules.view(played.state.game, viewer)
        message = protomap.to_proto(view, module.View())
        assert protomap.from_proto(message, rules.view_type) == view
    options = played.state.config.options
    assert (
        protomap.from_proto(
            protomap.to_proto(options, module.Options()), rules.options_type
        )
        == options
    )


class _Once:
    """Tells whether a value is seen for the first time (values that cannot
    be hashed, holding a dict say, are always new)."""

    def __init__(self) -> None:
        self._seen: set[Any] = set()

    def first(self, value: Any) -> bool:
        if self.seen(value):
            return False
        with contextlib.suppress(TypeError):
            self._seen.add(value)
        return True

    def seen(self, value: Any) -> bool:
        try:
            return value in self._seen
        except TypeError:
            return False


# -- positions ----------------------------------------------------------------


def refusal(
    rules: GameRules[Any, Any, Any, Any],
    players: int,
    scenario: Any,
    seed: str = "p",
    options: Any = None,
) -> InvalidCommand | None:
    """Why creating a game from ``scenario`` (with a position) is refused,
    or None if it is accepted. A refusal names the field that is wrong."""
    try:
        Session(rules).create(players, seed, options, scenario)
    except InvalidCommand as error:
        assert error.field, error
        assert error.reason.startswith("POSITION_"), error
        return error
    return None


def assert_position_plays(
    rules: GameRules[Any, Any, Any, Any],
    module: ModuleType,
    players: int,
    scenario: Any,
    seed: str,
    check_each_step: Any = None,
    steps: int = 30,
    options: Any = None,
) -> PlayedGame:
    """A game started from ``scenario``'s position: it maps to its proto and
    back, starts and plays ``steps`` random legal commands (keeping the
    invariants), and its events replay and re-decide to the same state;
    every viewer's GameCreated shows the position only as its seats may
    see it (the same as ``redact_position``), and every viewer's copy of
    the events folds to the true game's views for it
    (:func:`assert_viewers_fold`)."""
    message = protomap.to_proto(scenario, module.Scenario())
    assert protomap.from_proto(message, rules.scenario_type) == scenario
    played = play_random(
        rules,
        players,
        seed,
        options,
        scenario=scenario,
        check_each_step=check_each_step,
        stop_after=steps,
    )
    assert_replays(rules, played)
    assert_replays_deterministically(rules, played, seed)
    session = Session(rules)
    created = played.events[0]
    viewers = [Viewer.spectator(), *(Viewer.player(s) for s in range(players))]
    for viewer in viewers:
        seen = session.redact(created, viewer)
        assert seen.seed == "" and seen.salt == ""
        shown: Any = codec.decode(rules.scenario_type, seen.scenario)
        assert shown.position == rules.redact_position(scenario.position, viewer)
        assert shown == rules.scenario_type(position=shown.position)
    assert_viewers_fold(rules, played.events, viewers)
    return played


def fold_each(session: Session[Any], events: Sequence[Any]) -> list[SessionState[Any]]:
    """The state after each of ``events``, from the first."""
    states: list[SessionState[Any]] = []
    state = None
    for event in events:
        state = session.evolve(state, event)
        states.append(state)
    return states


def assert_viewers_fold(
    rules: GameRules[Any, Any, Any, Any],
    events: Sequence[Any],
    viewers: Sequence[Viewer],
) -> None:
    """Each viewer's copy of ``events`` folds, at every version, to a state
    whose view for it (and who may act) is that of the true state
    (docs/ADDING_A_GAME.md, *A viewer's fold*)."""
    session = Session(rules)
    truths = fold_each(session, events)
    for viewer in viewers:
        folded = None
        for event, true in zip(events, truths, strict=True):
            folded = session.evolve(folded, session.redact(event, viewer))
            where = (type(event).__name__, true.version, viewer)
            seen = rules.view(folded.game, viewer)
            assert seen == rules.view(true.game, viewer), where
            assert session.active_seats(folded) == session.active_seats(true), where


def check_random_positions(
    rules: GameRules[Any, Any, Any, Any],
    module: ModuleType,
    players: int,
    make: Any,
    tries: int,
    check_each_step: Any = None,
    steps: int = 30,
    options: Any = None,
    label: str = "",
) -> tuple[int, int]:
    """The property test of positions: ``tries`` scenarios from
    ``make(rng, i)`` (mostly valid, some broken); each is refused with a
    POSITION_ reason naming its field (:func:`refusal`), or starts and
    plays ``steps`` random legal commands keeping the invariants, replays
    and re-decides (:func:`assert_position_plays`). Returns (refused,
    played)."""
    refused = played = 0
    for i in range(tries):
        rng = Rng(f"positions-{label}{players}", i)
        scenario = make(rng, i)
        if refusal(rules, players, scenario, options=options) is not None:
            refused += 1
            continue
        assert_position_plays(
            rules,
            module,
            players,
            scenario,
            f"pos-{label}{players}-{i}",
            check_each_step=check_each_step,
            steps=steps,
            options=options,
        )
        played += 1
    return refused, played


def assert_hidden_alike(
    rules: GameRules[Any, Any, Any, Any],
    players: int,
    first: Any,
    second: Any,
    viewers: Sequence[Viewer],
    options: Any = None,
) -> None:
    """Two positions that differ only in what ``viewers`` may not see (a
    deck's order, another seat's hand, a face-down tile) give each of them
    the same GameCreated, which the admin sees differ: the redaction hides
    the difference itself, whatever it is."""
    session = Session(rules)
    made = [
        session.create(players, "twin", options, rules.scenario_type(position=p))
        for p in (first, second)
    ]
    assert made[0] != made[1], "the twins must differ"
    admin = Viewer.admin()
    assert session.redact(made[0], admin) != session.redact(made[1], admin)
    for viewer in viewers:
        assert session.redact(made[0], viewer) == session.redact(made[1], viewer), (
            viewer
        )
