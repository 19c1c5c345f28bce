"""Egg Race: roll a die and add it to your score, or hold; a 1 ends your
turn; the first to reach the target wins. Each player's nest (1 to 3) is
drawn at the start and seen by that player only: the heuristic bot rolls
one more time than its nest in each turn.

The smallest game with every part a real one has: options, a scenario,
chance recorded in events (through ``Script``), a secret redacted per
viewer, an enum, a map, optional fields, and a decision (the winner) made
in ``decide`` and only applied by ``evolve``.
"""

from __future__ import annotations

from domain.chance import Rng, Script
from domain.errors import InvalidCommand, RuleViolation, position_invalid
from domain.frozen import replace
from domain.rules import GameConfig, GameRules, Outcome, Viewer
from domain.seats import no_such_seat, seat_number
from tests.adding_a_game.egg_race.bots import heuristic_bot
from tests.adding_a_game.egg_race.model import (
    DEFAULT_TARGET,
    DieRolled,
    EggRaceCommand,
    EggRaceEvent,
    EggRaceState,
    EggRaceView,
    Hold,
    NestDrawn,
    Options,
    Phase,
    Position,
    RacerLeft,
    RaceWon,
    RollDie,
    Scenario,
    TurnPassed,
)
from tests.adding_a_game.egg_race.search import SEARCH


class EggRaceRules(GameRules[EggRaceState, EggRaceCommand, EggRaceEvent, EggRaceView]):
    game_type = "egg_race"
    title = "Egg Race (a toy)"
    rules_version = "1"
    min_players = 2
    max_players = 3
    options_type = Options
    scenario_type = Scenario
    state_type = EggRaceState
    view_type = EggRaceView
    command_types = (RollDie, Hold)
    event_types = (NestDrawn, DieRolled, TurnPassed, RaceWon, RacerLeft)
    character_events = frozenset()
    bots = {"heuristic": heuristic_bot}
    search = SEARCH
    position_type = Position

    def validate_config(self, config: GameConfig[EggRaceState]) -> None:
        target = config.options.target
        if target and not 5 <= target <= 30:
            raise InvalidCommand(
                "BAD_TARGET", "The target is 5 to 30.", field="options.target"
            )
        position = self.position(config)
        if position is not None:
            validate_position(position, config.players, target or DEFAULT_TARGET)

    def initial_state(self, config: GameConfig[EggRaceState]) -> EggRaceState:
        rolls = config.scenario.rolls if config.scenario else ()
        state = EggRaceState(
            config.options.target or DEFAULT_TARGET,
            (0,) * config.players,
            scenario_rolls=rolls,
        )
        position = self.position(config)
        if position is None:
            return state
        return replace(
            state,
            scores=position.scores,
            turn=position.turn,
            given_nests=position.nests,
        )

    def start(self, state: EggRaceState, rng: Rng) -> list[EggRaceEvent]:
        """Each seat's nest: a position's, or drawn at random."""
        return [
            NestDrawn(seat, nest)
            for seat, nest in enumerate(
                state.given_nests
                or [1 + rng.below(3) for _ in range(len(state.scores))]
            )
        ]

    def redact_position(self, position: Position, viewer: Viewer) -> Position:
        """A seat sees its own nest only; a spectator none (0: not seen)."""
        if viewer.sees_everything:
            return position
        nests = tuple(n if viewer.plays(s) else 0 for s, n in enumerate(position.nests))
        return replace(position, nests=nests)

    def decide(
        self, state: EggRaceState, seat: int, command: EggRaceCommand, rng: Rng
    ) -> list[EggRaceEvent]:
        if seat != state.turn:
            raise RuleViolation(
                "NOT_YOUR_TURN", f"It is seat {seat_number(state.turn)}'s turn."
            )
        next_seat = TurnPassed(next_in_race(state, seat))
        match command:
            case RollDie():
                value = Script(rng, state.scenario_rolls, state.rolls_used).roll()
                if state.scores[seat] + value >= state.target:
                    return [DieRolled(seat, value), RaceWon(seat)]
                if value == 1:
                    return [DieRolled(seat, value), next_seat]
                return [DieRolled(seat, value)]
            case Hold() if state.rolls_this_turn == 0:
                raise RuleViolation("ROLL_FIRST", "Roll at least once before holding.")
            case Hold():
                return [next_seat]
            case _:
                raise InvalidCommand("UNKNOWN_COMMAND", f"Not a command: {command!r}")

    def evolve(self, state: EggRaceState, event: EggRaceEvent) -> EggRaceState:
        match event:
            case NestDrawn(seat=seat, nest=nest):
                nests = {**state.nests, seat: nest or 0}
                return replace(state, nests=nests, phase=Phase.RACING)
            case DieRolled(seat=seat, value=value):
                scores = list(state.scores)
                scores[seat] += value
                return replace(
                    state,
                    scores=tuple(scores),
                    rolls_used=state.rolls_used + 1,
                    rolls_this_turn=state.rolls_this_turn + 1,
                )
            case TurnPassed(next_seat=next_seat):
                return replace(state, turn=next_seat, rolls_this_turn=0)
            case RaceWon(seat=seat):
                return replace(state, winner=seat, phase=Phase.FINISHED)
            case RacerLeft(seat=seat):
                return replace(state, out=(*state.out, seat))
        return state  # pragma: no cover - every event is matched above

    def is_terminal(self, state: EggRaceState) -> bool:
        return state.phase is Phase.FINISHED

    def outcome(self, state: EggRaceState) -> Outcome:
        winners = () if state.winner is None else (state.winner,)
        return Outcome(winners, "reached_the_target")

    def active_seats(self, state: EggRaceState) -> frozenset[int]:
        if state.phase is not Phase.RACING:
            return frozenset()
        return frozenset({state.turn})

    def legal_actions(self, state: EggRaceState, seat: int) -> list[EggRaceCommand]:
        if seat not in self.active_seats(state):
            return []
        return [RollDie(), Hold()] if state.rolls_this_turn else [RollDie()]

    def view(self, state: EggRaceState, viewer: Viewer) -> EggRaceView:
        return EggRaceView(
            target=state.target,
            scores=state.scores,
            nests={s: n for s, n in state.nests.items() if viewer.plays(s)},
            turn=state.turn,
            rolls_this_turn=state.rolls_this_turn,
            phase=state.phase,
            winner=state.winner,
            out=state.out,
        )

    def leave(
        self, state: EggRaceState, seat: int, seats_in: tuple[int, ...]
    ) -> list[EggRaceEvent]:
        """The seat is out of the race: its score stays, its turns are
        skipped (on its turn, the turn passes on at once)."""
        events: list[EggRaceEvent] = [RacerLeft(seat)]
        if state.phase is Phase.RACING and state.turn == seat:
            after = replace(state, out=(*state.out, seat))
            events.append(TurnPassed(next_in_race(after, seat)))
        return events

    def redact(self, event: EggRaceEvent, viewer: Viewer) -> EggRaceEvent:
        if isinstance(event, NestDrawn) and not viewer.plays(event.seat):
            return NestDrawn(event.seat, None)
        return event


def next_in_race(state: EggRaceState, seat: int) -> int:
    """The seat after ``seat`` still in the race (``seat`` itself when no
    other is)."""
    players = len(state.scores)
    for step in range(1, players + 1):
        candidate = (seat + step) % players
        if candidate not in state.out:
            return candidate
    return seat


def validate_position(position: Position, players: int, target: int) -> None:
    """A position's every field within the game, or POSITION_INVALID naming
    the one that is not."""
    if len(position.scores) != players:
        raise position_invalid(
            "scores",
            f"The position has {len(position.scores)} scores for {players} seats.",
        )
    for seat, score in enumerate(position.scores):
        if not 0 <= score < target:
            raise position_invalid(
                f"scores[{seat}]",
                f"A score is 0 to {target - 1} (at {target}, the race is won).",
            )
    if not 0 <= position.turn < players:
        raise position_invalid("turn", no_such_seat(position.turn, players))
    if position.nests and len(position.nests) != players:
        raise position_invalid(
            "nests",
            f"The position has {len(position.nests)} nests for {players} seats.",
        )
    for seat, nest in enumerate(position.nests):
        if not 1 <= nest <= 3:
            raise position_invalid(f"nests[{seat}]", "A nest is 1 to 3.")
