"""Dinosaurs Extinct?: race your Dino from the Prehistoric Era to the 21st
Century, and enter it alive and well.

Declared shape: 2 to 4 players, one Dino each, seat 0 first ("the youngest
player goes first"), then clockwise (increasing seats). Chance is one die
(rolled for every move, Earth Event and Dino Challenge, each roll recorded in
a ``DieRolled`` event) and the shuffled stack of Earth Event cards, whose
order only the admin sees. Everything else is public.

On each turn (``RollDie``) the Dino rolls and moves, then faces its space:

- "No Bones on Me": its Life Card is recharged (no bones showing);
- Earth Event: draw the top card and roll; higher than the card's number
  survives, otherwise one more overlay shows bones; the card goes to the
  bottom of the stack;
- Footprint: if other Dinos stand there, a Dino Challenge: everyone on the
  space rolls, the highest wins, those tied for highest roll again; every
  loser shows one more bone and goes back by its own roll (without facing
  the space it lands on);
- Dino Switch: the Dino must switch places with another Dino of its choice
  (``SwitchWith``), then faces its new space; a Dino that reaches a Switch
  space through a switch does not switch again;
- Time Warp: the Dino travels to the other end of the warp and faces any
  Dinos there as on a Footprint space.

A Life Card showing every bone means extinction: back to the Prehistoric
Era with every overlay closed. Only an alive and well Dino (no bones) may
enter the 21st Century, and it needs no exact roll; a Dino with bones stops
on the step before it, and a Dino with bones beyond the last "No Bones on Me"
space heads back toward it, turning around again once it passes it. The first
Dino to enter the 21st Century wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from domain.chance import Rng, Script
from domain.dinosaurs_extinct.bots import heuristic_bot
from domain.dinosaurs_extinct.content import Content, Space, load
from domain.dinosaurs_extinct.model import (
    EVENT_TYPES,
    UNSEEN,
    Command,
    DieRolled,
    Dino,
    DinoChallengeBegan,
    DinoChallengeTied,
    DinoChallengeWon,
    DinoEnteredTwentyFirstCentury,
    DinoLeftRace,
    DinoMoved,
    DinoPushedBack,
    DinosSwitched,
    DinoSwitchLapsed,
    DinoSwitchReached,
    DinoView,
    DinoWarped,
    DinoWentExtinct,
    EarthEventDrawn,
    EarthEventsShuffled,
    EarthEventSurvived,
    Event,
    Heading,
    LifeCardRecharged,
    Options,
    OverlayFlipped,
    Phase,
    Position,
    RollDie,
    RollPurpose,
    Scenario,
    State,
    SwitchWith,
    TurnPassed,
    View,
    dino_entered_v1_to_v2,
)
from domain.dinosaurs_extinct.search import SEARCH
from domain.errors import InvalidCommand, RuleViolation, position_invalid, quote
from domain.frozen import replace
from domain.rules import (
    Bot,
    GameConfig,
    GameRules,
    ImplicitDecisions,
    Outcome,
    Search,
    Upcaster,
    Viewer,
)
from domain.seats import no_such_seat, seat_number

RESULT_REACHED_21ST_CENTURY = "reached_21st_century"


def heading(content: Content, dino: Dino) -> Heading:
    """A Dino with bones past the last "No Bones on Me" space must go back to it."""
    if dino.bones > 0 and dino.step > content.last_no_bones:
        return Heading.BACKWARD
    return Heading.FORWARD


class DinosaursExtinctRules(GameRules[State, Command, Event, View]):
    """The rules of Dinosaurs Extinct?."""

    game_type: ClassVar[str] = "dinosaurs_extinct"
    title: ClassVar[str] = "Dinosaurs Extinct?"
    rules_version: ClassVar[str] = "2"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    options_type: ClassVar[type] = Options
    scenario_type: ClassVar[type] = Scenario
    position_type: ClassVar[type | None] = Position
    state_type: ClassVar[type] = State
    view_type: ClassVar[type] = View
    command_types: ClassVar[tuple[type, ...]] = (RollDie, SwitchWith)
    character_events: ClassVar[frozenset[type] | None] = frozenset()  # by seat
    event_types: ClassVar[tuple[type, ...]] = EVENT_TYPES
    bots: ClassVar[Mapping[str, Bot]] = {"heuristic": heuristic_bot}
    search: ClassVar[Search | None] = SEARCH
    upcasters: ClassVar[Mapping[tuple[str, int], Upcaster]] = {
        ("DinoEnteredTwentyFirstCentury", 1): dino_entered_v1_to_v2,
    }

    def __init__(self) -> None:
        self.content = load()

    # -- set-up -----------------------------------------------------------------

    def validate_config(self, config: GameConfig[State]) -> None:
        scenario = config.scenario
        if scenario is None:
            return
        if not isinstance(scenario, Scenario):
            raise InvalidCommand(
                "SCENARIO_INVALID", "Not a Dinosaurs Extinct? scenario."
            )
        sides = self.content.die_sides
        for i, value in enumerate(scenario.dice):
            if not 1 <= value <= sides:
                raise InvalidCommand(
                    "SCENARIO_INVALID",
                    f"Die result {i} is {value}; the die shows 1 to {sides}.",
                )
        ids = sorted(card.id for card in self.content.earth_events)
        if scenario.earth_events and sorted(scenario.earth_events) != ids:
            raise InvalidCommand(
                "SCENARIO_INVALID",
                f"The Earth Event order must list every card id {ids} once.",
            )
        if scenario.position is not None:
            if scenario.earth_events:
                raise InvalidCommand(
                    "POSITION_INVALID",
                    "With a position, its earth_deck gives the stack's order; "
                    "leave the scenario's earth_events empty.",
                    "earth_events",
                )
            self._validate_position(scenario.position, config.players, ids)

    def _validate_position(
        self, position: Position, players: int, ids: list[int]
    ) -> None:
        """A position's every field within the game (the lifecycle then
        checks that it is not over and a seat may act)."""
        content = self.content

        if len(position.dinos) != players:
            raise position_invalid(
                "dinos",
                f"The position has {len(position.dinos)} Dinos for {players} seats.",
            )
        for seat, dino in enumerate(position.dinos):
            if not 0 <= dino.step < content.finish:
                raise position_invalid(
                    f"dinos[{seat}].step",
                    f"Seat {seat_number(seat)}'s Dino is on step {dino.step}; a Dino "
                    f"still racing is on step 0 to {content.finish - 1}.",
                )
            if not 0 <= dino.bones < content.life_card_overlays:
                raise position_invalid(
                    f"dinos[{seat}].bones",
                    f"Seat {seat_number(seat)}'s Dino shows {dino.bones} bones; 0 to "
                    f"{content.life_card_overlays - 1} (one more is extinct).",
                )
        if not 0 <= position.turn < players:
            raise position_invalid("turn", no_such_seat(position.turn, players))
        if position.earth_deck and sorted(position.earth_deck) != ids:
            raise position_invalid(
                "earth_deck",
                f"The Earth Event stack must list every card id {ids} once.",
            )
        last = position.last_earth_event
        if last is not None and last not in ids:
            raise position_invalid(
                "last_earth_event", f"No Earth Event card {quote(last)}."
            )
        if last is not None and position.earth_deck and position.earth_deck[-1] != last:
            raise position_invalid(
                "last_earth_event",
                f"Earth Event {last} was drawn last, so it lies at the bottom of "
                f"the stack (earth_deck's last card), not {position.earth_deck[-1]}.",
            )

    def initial_state(self, config: GameConfig[State]) -> State:
        scenario = config.scenario if config.scenario is not None else Scenario()
        state = State(
            players=config.players,
            dinos=tuple(Dino() for _ in range(config.players)),
            scripted_dice=scenario.dice,
            scripted_deck=scenario.earth_events,
        )
        position = scenario.position
        if position is None:
            return state
        return replace(
            state,
            dinos=tuple(Dino(step=d.step, bones=d.bones) for d in position.dinos),
            turn=position.turn,
            scripted_deck=position.earth_deck,
            last_earth_event=position.last_earth_event,
        )

    def start(self, state: State, rng: Rng) -> list[Event]:
        """Shuffle the Earth Event cards (every Dino is on the Prehistoric
        Era, or where the position put it, and the turn is seat 0's or the
        position's)."""
        last = state.last_earth_event  # a position's card drawn last
        order = state.scripted_deck or (
            *rng.shuffled([c.id for c in self.content.earth_events if c.id != last]),
            *(() if last is None else (last,)),  # drawn, it went to the bottom
        )
        return [EarthEventsShuffled(order=tuple(order), cards=len(order))]

    def redact_position(self, position: Position, viewer: Viewer) -> Position:
        if viewer.sees_everything:
            return position
        return replace(position, earth_deck=())

    # -- who acts, with what ----------------------------------------------------

    def active_seats(self, state: State) -> frozenset[int]:
        if state.phase in (Phase.ROLL, Phase.CHOOSE_SWITCH):
            return frozenset({state.turn})
        return frozenset()

    def legal_actions(self, state: State, seat: int) -> list[Command]:
        if seat != state.turn:
            return []
        match state.phase:
            case Phase.ROLL:
                return [RollDie()]
            case Phase.CHOOSE_SWITCH:
                return [
                    SwitchWith(target_seat=other)
                    for other in range(state.players)
                    if other != seat and not state.dinos[other].out
                ]
            case _:
                return []

    def leave(self, state: State, seat: int, seats_in: tuple[int, ...]) -> list[Event]:
        """The seat's Dino leaves the race (off the track: no turn, no
        challenge, no switch); on its turn, a Dino Switch it was to choose
        lapses and the turn passes on."""
        events: list[Event] = [DinoLeftRace(seat=seat)]
        if state.turn != seat:
            return events
        if state.phase is Phase.CHOOSE_SWITCH:
            events.append(DinoSwitchLapsed(seat=seat))
        if state.phase in (Phase.ROLL, Phase.CHOOSE_SWITCH):
            after = state
            for event in events:
                after = self.evolve(after, event)
            events.append(TurnPassed(seat=next_in_race(after, seat)))
        return events

    # -- deciding ---------------------------------------------------------------

    def decide(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> list[Event]:
        return self.decide_and_evolve(state, seat, command, rng)[0]

    def decide_and_evolve(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> tuple[list[Event], State]:
        if isinstance(command, SwitchWith) and not (
            0 <= command.target_seat < state.players
        ):
            raise InvalidCommand(
                "SEAT_OUT_OF_RANGE",
                no_such_seat(command.target_seat, state.players),
            )
        if state.phase is Phase.OVER:
            raise RuleViolation("GAME_OVER", "A Dino has entered the 21st Century.")
        if state.phase is Phase.SETTING_UP:
            raise RuleViolation("GAME_NOT_STARTED", "The game has not started.")
        if seat != state.turn:
            raise RuleViolation(
                "NOT_YOUR_TURN", f"It is seat {seat_number(state.turn)}'s turn."
            )
        turn = _Turn(self, state, rng)
        match command:
            case RollDie():
                if state.phase is Phase.CHOOSE_SWITCH:
                    raise RuleViolation(
                        "SWITCH_TARGET_REQUIRED",
                        "You are on a Dino Switch space: choose a Dino to switch with.",
                    )
                turn.roll_and_move()
            case SwitchWith(target_seat=target):
                if state.phase is not Phase.CHOOSE_SWITCH:
                    raise RuleViolation(
                        "NO_SWITCH_PENDING", "You are not on a Dino Switch space."
                    )
                if target == seat:
                    raise RuleViolation(
                        "CANNOT_SWITCH_WITH_YOURSELF",
                        "Switch places with another Dino.",
                    )
                if state.dinos[target].out:
                    raise RuleViolation(
                        "DINO_OUT",
                        f"Seat {seat_number(target)}'s Dino has left the race.",
                    )
                turn.switch_with(target)
            case _:
                raise InvalidCommand(
                    "UNKNOWN_COMMAND", f"Unknown command {type(command).__name__}."
                )
        return turn.events, turn.state

    # -- evolving ---------------------------------------------------------------

    def evolve(self, state: State, event: Event) -> State:
        match event:
            case EarthEventsShuffled(order=order, cards=cards):
                # The turn is seat 0's, or a position's. A player's event
                # has no order: the stack is as many cards unseen.
                deck = order or (UNSEEN,) * cards
                return replace(state, earth_deck=deck, phase=Phase.ROLL)
            case DieRolled():
                return replace(state, dice_used=state.dice_used + 1)
            case (
                DinoMoved(seat=seat, to_step=to)
                | DinoPushedBack(seat=seat, to_step=to)
                | DinoWarped(seat=seat, to_step=to)
            ):
                return _with_dino(state, seat, step=to)
            case DinoEnteredTwentyFirstCentury(seat=seat, to_step=to):
                state = _with_dino(state, seat, step=to)
                return replace(state, winner=seat, phase=Phase.OVER)
            case LifeCardRecharged(seat=seat):
                return _with_dino(state, seat, bones=0)
            case EarthEventDrawn(card=card):
                # The top card, drawn, goes to the bottom of the stack (seen
                # now by everyone).
                deck = (*state.earth_deck[1:], card)
                return replace(state, earth_deck=deck, last_earth_event=card)
            case OverlayFlipped(seat=seat, bones=bones):
                return _with_dino(state, seat, bones=bones)
            case DinoWentExtinct(seat=seat):
                return _with_dino(state, seat, step=0, bones=0)
            case DinoSwitchReached():
                return replace(state, phase=Phase.CHOOSE_SWITCH)
            case DinosSwitched(
                seat=seat, target_seat=target, seat_step=a, target_step=b
            ):
                state = _with_dino(_with_dino(state, seat, step=b), target, step=a)
                return replace(state, phase=Phase.ROLL)
            case TurnPassed(seat=seat):
                return replace(state, turn=seat)
            case DinoLeftRace(seat=seat):
                return _with_dino(state, seat, out=True)
            case DinoSwitchLapsed():
                return replace(state, phase=Phase.ROLL)
            case _:
                # EarthEventSurvived and the challenge's begin, ties and
                # winner change nothing the state keeps: the moves and
                # overlays that follow them do.
                return state

    # -- the end ----------------------------------------------------------------

    def is_terminal(self, state: State) -> bool:
        return state.phase is Phase.OVER

    def outcome(self, state: State) -> Outcome:
        if state.winner is None:
            raise ValueError("the game is not over")
        return Outcome(winners=(state.winner,), result=RESULT_REACHED_21ST_CENTURY)

    # -- what viewers see -------------------------------------------------------

    def view(self, state: State, viewer: Viewer) -> View:
        content = self.content
        last = state.last_earth_event
        return View(
            phase=state.phase,
            turn=state.turn,
            dinos=tuple(
                DinoView(
                    seat=seat,
                    name=content.dinos[seat].name,
                    colour=content.dinos[seat].colour,
                    step=dino.step,
                    bones=dino.bones,
                    alive_and_well=dino.bones == 0,
                    heading=heading(content, dino),
                    out=dino.out,
                )
                for seat, dino in enumerate(state.dinos)
            ),
            board=content.spaces,
            time_warp=content.time_warp,
            last_no_bones_on_me=content.last_no_bones,
            life_card_overlays=content.life_card_overlays,
            earth_events_in_stack=len(state.earth_deck),
            last_earth_event=None if last is None else content.card(last),
            winner=state.winner,
            earth_deck=state.earth_deck if viewer.sees_everything else (),
        )

    def redact(self, event: Event, viewer: Viewer) -> Event:
        if isinstance(event, EarthEventsShuffled) and not viewer.sees_everything:
            return replace(event, order=())
        return event

    def characters(self, state: State) -> dict[int, str]:
        return {seat: self.content.dinos[seat].name for seat in range(state.players)}


def next_in_race(state: State, seat: int) -> int:
    """The next seat after ``seat`` (clockwise) whose Dino is still racing."""
    players = state.players
    for k in range(1, players + 1):
        other = (seat + k) % players
        if not state.dinos[other].out:
            return other
    return seat


def _with_dino(
    state: State,
    seat: int,
    *,
    step: int | None = None,
    bones: int | None = None,
    out: bool | None = None,
) -> State:
    dino = state.dinos[seat]
    dino = Dino(
        step=dino.step if step is None else step,
        bones=dino.bones if bones is None else bones,
        out=dino.out if out is None else out,
    )
    return replace(state, dinos=(*state.dinos[:seat], dino, *state.dinos[seat + 1 :]))


class _Turn:
    """One command's worth of play: each event is folded in as it is emitted,
    so every step reads the state the previous ones left."""

    def __init__(self, rules: DinosaursExtinctRules, state: State, rng: Rng) -> None:
        self._rules = rules
        self._content = rules.content
        self._dice = Script(rng, state.scripted_dice, state.dice_used)
        self.state = state
        self.events: list[Event] = []

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        self.state = self._rules.evolve(self.state, event)

    def _roll(self, seat: int, purpose: RollPurpose) -> int:
        value = self._dice.roll(self._content.die_sides)
        self._emit(DieRolled(seat=seat, value=value, purpose=purpose))
        return value

    def _dino(self, seat: int) -> Dino:
        return self.state.dinos[seat]

    # -- a turn -----------------------------------------------------------------

    def roll_and_move(self) -> None:
        seat = self.state.turn
        roll = self._roll(seat, RollPurpose.MOVE)
        dino = self._dino(seat)
        here, finish = dino.step, self._content.finish
        if heading(self._content, dino) is Heading.BACKWARD:
            to = max(0, here - roll)
            self._emit(DinoMoved(seat, here, to, Heading.BACKWARD))
        elif dino.bones == 0 and here + roll >= finish:
            self._emit(DinoEnteredTwentyFirstCentury(seat, here, finish))
            return
        else:
            # With bones showing, a Dino may not enter: it stops just before.
            to = min(here + roll, finish - 1)
            self._emit(DinoMoved(seat, here, to, Heading.FORWARD))
        self._face_space(seat, through_switch=False)
        self._end_turn()

    def switch_with(self, target: int) -> None:
        seat = self.state.turn
        self._emit(
            DinosSwitched(
                seat=seat,
                target_seat=target,
                seat_step=self._dino(seat).step,
                target_step=self._dino(target).step,
            )
        )
        self._face_space(seat, through_switch=True)
        self._end_turn()

    def _end_turn(self) -> None:
        if self.state.phase is Phase.ROLL:
            self._emit(TurnPassed(seat=next_in_race(self.state, self.state.turn)))

    # -- the spaces -------------------------------------------------------------

    def _face_space(self, seat: int, *, through_switch: bool) -> None:
        step = self._dino(seat).step
        match self._content.spaces[step]:
            case Space.NO_BONES_ON_ME:
                self._emit(LifeCardRecharged(seat=seat))
            case Space.EARTH_EVENT:
                self._earth_event(seat)
            case Space.FOOTPRINT:
                self._challenge_if_occupied(seat)
            case Space.DINO_SWITCH if not through_switch:
                self._emit(DinoSwitchReached(seat=seat, step=step))
            case Space.TIME_WARP:
                exit_step = self._content.warp_exit(step)
                self._emit(DinoWarped(seat=seat, from_step=step, to_step=exit_step))
                self._challenge_if_occupied(seat)
            case _:
                pass

    def _earth_event(self, seat: int) -> None:
        card = self._content.card(self.state.earth_deck[0])
        self._emit(EarthEventDrawn(seat, card.id, card.name, card.number))
        if self._roll(seat, RollPurpose.EARTH_EVENT) > card.number:
            self._emit(EarthEventSurvived(seat=seat, card=card.id))
        else:
            self._weaken(seat)

    def _weaken(self, seat: int) -> bool:
        """One more overlay shows bones; True when the Dino went extinct."""
        dino = self._dino(seat)
        bones = dino.bones + 1
        self._emit(OverlayFlipped(seat=seat, bones=bones))
        if bones >= self._content.life_card_overlays:
            self._emit(DinoWentExtinct(seat=seat, from_step=dino.step))
            return True
        return False

    def _challenge_if_occupied(self, seat: int) -> None:
        step = self._dino(seat).step
        players = self.state.players
        clockwise = [(seat + k) % players for k in range(1, players)]
        defenders = tuple(
            s for s in clockwise if self._dino(s).step == step and not self._dino(s).out
        )
        if not defenders:
            return  # relax and enjoy your territory
        self._emit(DinoChallengeBegan(seat=seat, step=step, defenders=defenders))
        everyone = (seat, *defenders)
        contenders = everyone
        last_roll: dict[int, int] = {}
        while True:
            for s in contenders:
                last_roll[s] = self._roll(s, RollPurpose.CHALLENGE)
            top = max(last_roll[s] for s in contenders)
            tied = tuple(s for s in contenders if last_roll[s] == top)
            if len(tied) == 1:
                break
            self._emit(DinoChallengeTied(seats=tied))
            contenders = tied
        winner = tied[0]
        losers = tuple(s for s in everyone if s != winner)
        self._emit(DinoChallengeWon(seat=winner, losers=losers))
        for loser in losers:
            if not self._weaken(loser):
                back = max(0, step - last_roll[loser])
                self._emit(DinoPushedBack(seat=loser, from_step=step, to_step=back))


class DinosaursExtinctRulesV1(
    ImplicitDecisions[State, Command, Event, View], DinosaursExtinctRules
):
    """Rules version 1, for the games created under it: the same rules, but
    a Dino Switch that lapsed when its chooser left was not recorded (the
    fold dropped it with the Dino that left the race)."""

    rules_version: ClassVar[str] = "1"
    unrecorded: ClassVar[tuple[type, ...]] = (DinoSwitchLapsed,)

    def implied(self, state: State, event: Event) -> list[Event]:
        if (
            isinstance(event, DinoLeftRace)
            and state.turn == event.seat
            and state.phase is Phase.CHOOSE_SWITCH
        ):
            return [DinoSwitchLapsed(seat=event.seat)]
        return []
