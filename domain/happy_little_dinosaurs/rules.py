"""Happy Little Dinosaurs: the rules, read top-down like the rulebook.

Declared shape: 2-4 players, each a dinosaur with traits; a Main deck of 53
Point and 16 Instant cards, a Disaster deck of 28 (see ``cards.json``).
Information is imperfect: hands, face-down commitments and deck orders are
secret; chance is the shuffles, recorded in events.

A round (``Phase``):

1. A Disaster is flipped face up. Every living player whose hand holds no
   Point card discards the hand and draws 5, until it does (automatic).
2. COMMIT: every living player places a Point card face down; once all have,
   they are revealed at once.
3. EFFECTS: the Flaming Chainsaw ("during this round") silences every other
   effect; otherwise each optional effect gets a window for its card's
   holder, lowest card value first (ties: fewest Escape points, then seat).
4. SCORING: scores are tallied (value + trait + Pet Rock / Smoothie), Mouth
   Traps swap the highest and lowest, then every living player with cards may
   play Score Boosters, Sappers and Inversions (doubled by Star Fruit) until
   all pass in a row.
5. The highest score(s) collect; a single lowest faces the Disaster, a tie
   for lowest plays Sudden Death; everyone tied sends it to the bottom.
6. DISASTER: the player facing it may play Insurance or Redirect, or takes
   it; three of a type or three different types (Meteors wild) eliminate;
   otherwise the taker may discard a card.
7. Escape movement (one space per Disaster), refill to 5, clear the table.

The game ends when a dinosaur reaches 50 (the highest total among those
who did wins, ties share) or only one dinosaur is left: decided with the
step that reaches it and recorded as ``GameWon``. A seat that left ranks
below every seat still in. ``evolve`` only folds: the inversions' swaps are
recorded too (``ScoresSwapped``). An emptied Main deck is rebuilt from the
discard pile the moment it empties. Rules versions 2 and 1 (``RULES_V2``,
``RULES_V1``, at the end of the module) are kept for their games.

Windows only open on public grounds (a hand holds cards, a target exists),
so who is asked to act never tells anyone what a hand holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import ClassVar

from domain.chance import Rng
from domain.errors import InvalidCommand, RuleViolation, position_invalid, quote
from domain.frozen import replace, without, without_any
from domain.happy_little_dinosaurs.bots import heuristic_bot
from domain.happy_little_dinosaurs.content import (
    Card,
    Catalogue,
    Dinosaur,
    DisasterType,
    Effect,
    InstantEffect,
    Kind,
    Timing,
    catalogue,
    eliminates,
)
from domain.happy_little_dinosaurs.model import (
    COMMAND_TYPES,
    EVENT_TYPES,
    UNSEEN,
    AddPointCardValue,
    BottomReason,
    CardsDiscarded,
    CardsDrawn,
    CardTaken,
    Command,
    DisasterDiscardChosen,
    DisasterFaced,
    DisasterFlipped,
    DisasterInsurancePlayed,
    DisasterRedirectPlayed,
    DisasterSentToBottom,
    DisasterTaken,
    DiscardCard,
    DiscardCards,
    DiscardOffered,
    EffectCardsDiscarded,
    EffectPassed,
    EffectWindowOpened,
    EscapeMoved,
    Event,
    GameSetUp,
    GameWon,
    HandLookedAt,
    InstantPassed,
    KeepCard,
    KeepHand,
    LookAtHand,
    LookAtTopCards,
    MainDeckReshuffled,
    MouthTrapSprung,
    Options,
    PassEffect,
    PassInstant,
    Phase,
    PlayDisasterInsurance,
    PlayDisasterRedirect,
    PlayedCardsSwapped,
    Player,
    PlayerEliminated,
    PlayerView,
    PlayerWithdrew,
    PlayPointCard,
    PlayScoreBooster,
    PlayScoreInversion,
    PlayScoreSapper,
    PointCardCommitted,
    PointCardsRevealed,
    PointCardValueAdded,
    PointsCollected,
    Position,
    Scenario,
    ScoreBoosterPlayed,
    ScoreInversionPlayed,
    ScoreSapperPlayed,
    ScoresSwapped,
    ScoresTallied,
    State,
    SuddenDeathCardsRevealed,
    SuddenDeathStarted,
    SwapPlayedCards,
    SwapWithNeighbour,
    TableCleared,
    TakeCard,
    TakeDisaster,
    TopCardKept,
    TopCardsLookedAt,
    View,
    lowest_cards,
    sudden_death_cards_revealed_v1_to_v2,
)
from domain.happy_little_dinosaurs.search import SEARCH
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

HAND_SIZE = 5
WINNING_ESCAPE = 50
DEFAULT_DINOSAURS = (
    Dinosaur.NERVOUS_REX,
    Dinosaur.BAD_LUCK_BRONTO,
    Dinosaur.CRY_CERATOPS,
    Dinosaur.STEGO,
)
# A round always settles long before this many automatic steps.
_MAX_STEPS = 10_000


#: The results of :class:`GameWon`.
ESCAPED, LAST_STANDING, LEAVER_ESCAPED = "escaped", "last_standing", "leaver_escaped"


def swapped(scores: dict[int, int]) -> ScoresSwapped:
    """An inversion of ``scores``: the highest and lowest swap, every tied
    player moves, the middle stays (everyone tied: nobody moves)."""
    if not scores:
        return ScoresSwapped(scores={})
    high, low = max(scores.values()), min(scores.values())
    if high == low:
        return ScoresSwapped(scores={})
    ends = {high: low, low: high}
    return ScoresSwapped(scores={s: ends[v] for s, v in scores.items() if v in ends})


#: The effects each command of the effect window uses (PassEffect: any).
_EFFECT_COMMANDS: dict[type, tuple[Effect, ...]] = {
    AddPointCardValue: (Effect.ADD_POINT_CARD_VALUE, Effect.ADD_EFFECT_CARD_VALUE),
    LookAtHand: (Effect.GRAB_CARD,),
    TakeCard: (Effect.GRAB_CARD,),
    SwapWithNeighbour: (Effect.SWAP_WITH_NEIGHBOUR,),
    DiscardCards: (Effect.DISCARD_UP_TO_THREE,),
    LookAtTopCards: (Effect.LOOK_AT_TOP_TWO,),
    KeepCard: (Effect.LOOK_AT_TOP_TWO,),
    SwapPlayedCards: (Effect.SWAP_TWO_OTHERS,),
}


#: What a seat that left chooses when it may (see ``stand_in``).
_STAND_IN_PASSES = (PassInstant, PassEffect, KeepHand, TakeDisaster)


class HappyLittleDinosaursRules(GameRules[State, Command, Event, View]):
    """The rules of Happy Little Dinosaurs."""

    game_type: ClassVar[str] = "happy_little_dinosaurs"
    title: ClassVar[str] = "Happy Little Dinosaurs"
    rules_version: ClassVar[str] = "3"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    options_type: ClassVar[type] = Options
    scenario_type: ClassVar[type] = Scenario
    position_type: ClassVar[type | None] = Position
    state_type: ClassVar[type] = State
    view_type: ClassVar[type] = View
    command_types: ClassVar[tuple[type, ...]] = COMMAND_TYPES
    character_events: ClassVar[frozenset[type] | None] = frozenset({GameSetUp})
    event_types: ClassVar[tuple[type, ...]] = EVENT_TYPES
    bots: ClassVar[Mapping[str, Bot]] = {"heuristic": heuristic_bot}
    search: ClassVar[Search | None] = SEARCH
    upcasters: ClassVar[Mapping[tuple[str, int], Upcaster]] = {
        ("SuddenDeathCardsRevealed", 1): sudden_death_cards_revealed_v1_to_v2,
    }

    @property
    def cards(self) -> Catalogue:
        return catalogue()

    def card(self, card_id: str) -> Card:
        return catalogue().cards[card_id]

    # -- configuration --------------------------------------------------------

    def validate_config(self, config: GameConfig[State]) -> None:
        options: Options = config.options
        if options.dinosaurs:
            if len(options.dinosaurs) != config.players:
                raise InvalidCommand(
                    "DINOSAURS_DO_NOT_MATCH_SEATS",
                    f"Choose one dinosaur per seat ({config.players}), "
                    f"not {len(options.dinosaurs)}.",
                    "options.dinosaurs",
                )
            if len(set(options.dinosaurs)) != len(options.dinosaurs):
                raise InvalidCommand(
                    "DINOSAUR_CHOSEN_TWICE",
                    "Each dinosaur can be played once.",
                    "options.dinosaurs",
                )
        scenario: Scenario | None = config.scenario
        if scenario is None:
            return
        main = set(self.cards.main)
        disasters = set(self.cards.disasters)

        def check(ids: Iterable[str], allowed: set[str], what: str) -> None:
            listed = list(ids)
            for card_id in listed:
                if card_id not in allowed:
                    raise InvalidCommand(
                        "SCENARIO_CARD_UNKNOWN",
                        f"{what}: no such card {quote(card_id)}.",
                    )
            if len(set(listed)) != len(listed):
                raise InvalidCommand(
                    "SCENARIO_CARD_REPEATED", f"{what}: a card is listed twice."
                )

        if len(scenario.hands) > config.players:
            raise InvalidCommand(
                "SCENARIO_TOO_MANY_HANDS",
                "The scenario deals to more seats than exist.",
            )
        for hand in scenario.hands:
            if len(hand.cards) not in (0, HAND_SIZE):
                raise InvalidCommand(
                    "SCENARIO_HAND_SIZE",
                    f"A dealt hand has {HAND_SIZE} cards (or none to deal at random).",
                )
        dealt = [c for hand in scenario.hands for c in hand.cards]
        check([*dealt, *scenario.main_deck], main, "hands and Main deck")
        check(scenario.disaster_deck, disasters, "Disaster deck")
        for order in scenario.reshuffles:
            check(order.cards, main, "reshuffle")
        if scenario.position is not None:
            self._validate_position(scenario, config.players)

    # -- starting from a position ---------------------------------------------

    def _validate_position(self, scenario: Scenario, players: int) -> None:
        """A position's every field within the game: each card in one place
        of its kind, seats alive or eliminated as their Disaster Areas say,
        the game not over (the lifecycle then checks that a seat may act)."""
        position = scenario.position
        assert position is not None
        for name in ("hands", "main_deck", "disaster_deck"):
            if getattr(scenario, name):
                raise InvalidCommand(
                    "POSITION_INVALID",
                    f"With a position, its seats and decks hold the cards; "
                    f"leave the scenario's {name} empty.",
                    name,
                )
        if len(position.players) != players:
            raise position_invalid(
                "players",
                f"The position has {len(position.players)} seats for "
                f"{players} players.",
            )
        self._check_places(position)
        for seat in range(players):
            self._check_seat(position, seat)
        if len([p for p in position.players if not p.eliminated]) < 2:
            raise position_invalid(
                "players",
                "At least two dinosaurs must be left (one alone has won).",
            )
        self._check_redraws(position)
        if not 0 <= position.rounds_played < 1_000_000:
            raise position_invalid(
                "rounds_played", f"{position.rounds_played} rounds cannot be played."
            )
        taken = sum(len(p.disasters) for p in position.players)
        if taken > position.rounds_played:
            raise position_invalid(
                "rounds_played",
                f"{taken} Disasters in Disaster Areas need at least {taken} "
                f"rounds played (one a round at most), not "
                f"{position.rounds_played}.",
            )

    def _check_places(self, position: Position) -> None:
        """Every card of the position is of the kind its place holds and in
        one place only; without ``shuffle_rest`` every card is placed."""
        seats = list(enumerate(position.players))
        main = _Places(set(self.cards.main), "a Main deck card")
        for seat, player in seats:
            main.put(player.hand, f"players[{seat}].hand")
        main.put(position.main_deck, "main_deck")
        main.put(position.discard, "discard")
        disasters = _Places(set(self.cards.disasters), "a Disaster card")
        for seat, player in seats:
            disasters.put(player.disasters, f"players[{seat}].disasters")
        disasters.put(position.disaster_deck, "disaster_deck")
        if not position.shuffle_rest:
            main.all_placed("main_deck")
            disasters.all_placed("disaster_deck")
        # A Disaster is always left to flip: Disaster Areas hold at most 18
        # of the 28 (a living seat's no deadly set, an eliminated seat's the
        # set its last Disaster made).

    def _check_seat(self, position: Position, seat: int) -> None:
        """A seat's escape, and its hand and Disaster Area as its being
        alive or eliminated requires."""
        player = position.players[seat]
        field = f"players[{seat}]"
        if not 0 <= player.escape < WINNING_ESCAPE:
            raise position_invalid(
                f"{field}.escape",
                f"Seat {seat_number(seat)} is on space {player.escape}; the race "
                f"runs from 0 to {WINNING_ESCAPE - 1} (at {WINNING_ESCAPE} it is won).",
            )
        types = [self.disaster_type(c) for c in player.disasters]
        if player.eliminated:
            if player.hand:
                raise position_invalid(
                    f"{field}.hand",
                    f"Seat {seat_number(seat)} was eliminated: its hand was discarded.",
                )
            if not eliminates(types) or all(
                eliminates(types[:i] + types[i + 1 :]) for i in range(len(types))
            ):
                raise position_invalid(
                    f"{field}.disasters",
                    f"Seat {seat_number(seat)} was eliminated by the Disaster that "
                    f"made its Disaster Area a deadly set (three of a type or three "
                    f"types, Meteors wild), which these Disasters are not.",
                )
            return
        if eliminates(types):
            raise position_invalid(
                f"{field}.disasters",
                f"Seat {seat_number(seat)}'s Disasters are a deadly set: it would "
                "be eliminated.",
            )
        if not any(self.card(c).kind is Kind.POINT for c in player.hand):
            raise position_invalid(
                f"{field}.hand",
                f"Seat {seat_number(seat)} holds no Point card (a living seat needs "
                f"one to play the round; the redraw of a hand without one is not "
                f"part of a position).",
            )
        if len(player.hand) < HAND_SIZE and self._main_deck_size(position):
            raise position_invalid(
                f"{field}.hand",
                f"Seat {seat_number(seat)} holds {len(player.hand)} cards: a hand is "
                f"refilled to {HAND_SIZE} while the Main deck holds cards.",
            )

    def _check_redraws(self, position: Position) -> None:
        """A later redraw must find a Point card: the other living hands
        must leave some outside them. A hand is refilled to five and never
        grows back once played below what it held, so each counts as its
        size or five, whichever is more; the largest hands but one, so
        counted, leave at least one Point card a living seat outside them."""
        points = sum(1 for c in self.cards.main if self.card(c).kind is Kind.POINT)
        living = sorted(
            (
                (max(len(p.hand), HAND_SIZE), seat)
                for seat, p in enumerate(position.players)
                if not p.eliminated
            ),
            key=lambda sized: (-sized[0], sized[1]),
        )
        others = sum(size for size, _ in living[:-1])
        if others > points - len(living):
            largest = living[0][1]
            raise position_invalid(
                f"players[{largest}].hand",
                f"The largest hands could hold all {points} Point cards but "
                f"{len(living)} (one a living seat): a later redraw of a hand "
                f"without one would find none. Hold fewer cards (the hands "
                f"but the smallest, each counted as at least {HAND_SIZE}, "
                f"{others} cards, at most {points - len(living)}).",
            )

    def _main_deck_size(self, position: Position) -> int:
        """How many cards the Main deck of a (valid) position holds."""
        if not position.shuffle_rest:
            return len(position.main_deck)
        held = sum(len(p.hand) for p in position.players)
        return len(self.cards.main) - held - len(position.discard)

    def initial_state(self, config: GameConfig[State]) -> State:
        options: Options = config.options
        dinosaurs = options.dinosaurs or DEFAULT_DINOSAURS[: config.players]
        state = State(
            players=tuple(Player(dinosaur=d) for d in dinosaurs),
            scenario=config.scenario,
        )
        position: Position | None = self.position(config)
        if position is None:
            return state
        players = tuple(
            Player(
                dinosaur=d,
                hand=p.hand,
                disasters=p.disasters,
                escape=p.escape,
                eliminated=p.eliminated,
            )
            for d, p in zip(dinosaurs, position.players, strict=True)
        )
        return replace(
            state,
            players=players,
            discard=position.discard,
            round=position.rounds_played,
        )

    def redact_position(self, position: Position, viewer: Viewer) -> Position:
        """Players see no deck's order and only their own seats' hands (the
        others' as many unseen cards, :data:`~.model.UNSEEN`: the views show
        every hand's size)."""
        if viewer.sees_everything:
            return position
        players = tuple(
            p if viewer.plays(seat) else replace(p, hand=(UNSEEN,) * len(p.hand))
            for seat, p in enumerate(position.players)
        )
        return replace(position, players=players, main_deck=(), disaster_deck=())

    def _start_from(self, state: State, position: Position, rng: Rng) -> list[Event]:
        """The position's decks (what it places nowhere shuffled below), and
        the round's Disaster flipped: hands are already held."""
        main_deck, disaster_deck = position.main_deck, position.disaster_deck
        if position.shuffle_rest:
            hands = (c for p in position.players for c in p.hand)
            placed = {*hands, *position.main_deck, *position.discard}
            main_deck += rng.shuffled([c for c in self.cards.main if c not in placed])
            areas = (c for p in position.players for c in p.disasters)
            placed = {*areas, *position.disaster_deck}
            disaster_deck += rng.shuffled(
                [c for c in self.cards.disasters if c not in placed]
            )
        events: list[Event] = [
            GameSetUp(
                dinosaurs=tuple(p.dinosaur for p in state.players),
                main_deck=main_deck,
                main_deck_size=len(main_deck),
                disaster_deck=disaster_deck,
                disaster_deck_size=len(disaster_deck),
            ),
            DisasterFlipped(round=position.rounds_played + 1, card=disaster_deck[0]),
        ]
        return self._then(state, events, rng)[0]

    def characters(self, state: State) -> dict[int, str]:
        names = {b.dinosaur: b.name for b in self.cards.dinosaurs}
        return {i: names[p.dinosaur] for i, p in enumerate(state.players)}

    # -- setting the table ----------------------------------------------------

    def start(self, state: State, rng: Rng) -> list[Event]:
        """Shuffle both decks, deal 5 to each, flip the first Disaster (from
        a position: its decks, and the round's Disaster flipped)."""
        scenario = state.scenario or Scenario()
        if scenario.position is not None:
            return self._start_from(state, scenario.position, rng)
        players = len(state.players)
        fixed = [
            scenario.hands[i].cards if i < len(scenario.hands) else ()
            for i in range(players)
        ]
        listed = {c for hand in fixed for c in hand} | set(scenario.main_deck)
        pool = list(rng.shuffled([c for c in self.cards.main if c not in listed]))
        deal: list[str] = []
        for hand in fixed:
            if hand:
                deal += hand
            else:
                deal += pool[:HAND_SIZE]
                pool = pool[HAND_SIZE:]
        main_deck = (*deal, *scenario.main_deck, *pool)
        top = list(scenario.disaster_deck)
        disaster_deck = (
            *top,
            *rng.shuffled([c for c in self.cards.disasters if c not in set(top)]),
        )
        events: list[Event] = [
            GameSetUp(
                dinosaurs=tuple(p.dinosaur for p in state.players),
                main_deck=main_deck,
                main_deck_size=len(main_deck),
                disaster_deck=disaster_deck,
                disaster_deck_size=len(disaster_deck),
            )
        ]
        for seat in range(players):
            hand = main_deck[seat * HAND_SIZE : (seat + 1) * HAND_SIZE]
            events.append(CardsDrawn(seat=seat, cards=hand, count=len(hand)))
        events.append(DisasterFlipped(round=1, card=disaster_deck[0]))
        return self._then(state, events, rng)[0]

    # -- who may do what ----------------------------------------------------------

    def living(self, state: State) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(state.players) if not p.eliminated)

    def holder(self, state: State, card: str) -> int | None:
        for seat, played in state.played.items():
            if played == card:
                return seat
        return None

    def silenced(self, state: State) -> bool:
        """True when a Flaming Chainsaw is face up: no other effect applies."""
        return any(
            self.card(c).effect is Effect.SILENCE_OTHERS for c in state.played.values()
        )

    def doubled(self, state: State) -> bool:
        """True when a Special Star Fruit doubles Boosters and Sappers."""
        return not self.silenced(state) and any(
            self.card(c).effect is Effect.DOUBLE_BOOSTERS_AND_SAPPERS
            for c in state.played.values()
        )

    def disaster_type(self, card_id: str) -> DisasterType:
        disaster = self.card(card_id).disaster
        if disaster is None:
            raise ValueError(f"{card_id} is not a Disaster card")
        return disaster

    def has_point_card(self, state: State, seat: int) -> bool:
        return any(self.card(c).kind is Kind.POINT for c in state.players[seat].hand)

    def neighbours(self, state: State, seat: int) -> tuple[int, ...]:
        """The living left and right neighbours (the same one with two)."""
        living = self.living(state)
        if seat not in living or len(living) < 2:
            return ()
        i = living.index(seat)
        left, right = living[(i + 1) % len(living)], living[i - 1]
        return (left,) if left == right else tuple(sorted({left, right}))

    def scoring_seats(self, state: State) -> tuple[int, ...]:
        """Who the scoring window waits for: living players holding cards."""
        return tuple(s for s in self.living(state) if state.players[s].hand)

    def active_seats(self, state: State) -> frozenset[int]:
        match state.phase:
            case Phase.COMMIT:
                return frozenset(
                    s for s in self.living(state) if s not in state.committed
                )
            case Phase.EFFECTS if state.effect is not None:
                seat = self.holder(state, state.effect)
                return frozenset() if seat is None else frozenset({seat})
            case Phase.SCORING:
                return frozenset(self.scoring_seats(state)) - set(state.passed)
            case Phase.SUDDEN_DEATH:
                return frozenset(
                    s for s in state.sudden_death if s not in state.committed
                )
            case Phase.DISASTER | Phase.DISCARD if state.taker is not None:
                return frozenset({state.taker})
        return frozenset()

    def leave(self, state: State, seat: int, seats_in: tuple[int, ...]) -> list[Event]:
        """The seat's dinosaur races on for nobody (:class:`PlayerWithdrew`),
        ranked below every seat still in; when that leaves one living
        dinosaur among the seats still in, it is the last standing (with
        one seat in, the lifecycle ends the game: ``opponents_left``)."""
        events: list[Event] = [PlayerWithdrew(seat=seat)]
        won = self.won(self.evolve(state, events[0]))
        if won is not None and len(seats_in) > 1:
            events.append(won)
        return events

    def stand_in(self, state: State, seat: int) -> Command:
        """A seat that left spends nothing it could keep: it passes every
        Instant window and optional effect, keeps its hand, takes a Disaster
        rather than play Insurance or a Redirect, and otherwise (its Point
        card) makes the first legal move."""
        legal = self.legal_actions(state, seat)
        for command in legal:
            if isinstance(command, _STAND_IN_PASSES):
                return command
        return legal[0]

    def legal_actions(self, state: State, seat: int) -> list[Command]:
        if seat not in self.active_seats(state):
            return []
        hand = state.players[seat].hand
        match state.phase:
            case Phase.COMMIT | Phase.SUDDEN_DEATH:
                return [
                    PlayPointCard(c) for c in hand if self.card(c).kind is Kind.POINT
                ]
            case Phase.EFFECTS if state.effect is not None:
                return self._effect_actions(state, seat, self.card(state.effect))
            case Phase.SCORING:
                actions: list[Command] = []
                for c in hand:
                    instant = self.card(c).instant
                    if instant is InstantEffect.BOOST:
                        actions += [PlayScoreBooster(c, t) for t in self.living(state)]
                    elif instant is InstantEffect.SAP:
                        actions += [PlayScoreSapper(c, t) for t in self.living(state)]
                    elif instant is InstantEffect.INVERT:
                        actions.append(PlayScoreInversion(c))
                return [*actions, PassInstant()]
            case Phase.DISASTER:
                actions = []
                for c in hand:
                    instant = self.card(c).instant
                    if instant is InstantEffect.INSURE:
                        actions.append(PlayDisasterInsurance(c))
                    elif instant is InstantEffect.REDIRECT:
                        actions += [
                            PlayDisasterRedirect(c, t)
                            for t in self.living(state)
                            if t != seat
                        ]
                return [*actions, TakeDisaster()]
            case Phase.DISCARD:
                return [*(DiscardCard(c) for c in hand), KeepHand()]
        return []

    def _effect_actions(self, state: State, seat: int, card: Card) -> list[Command]:
        hand = state.players[seat].hand
        match card.effect:
            case Effect.ADD_POINT_CARD_VALUE | Effect.ADD_EFFECT_CARD_VALUE:
                return [
                    *(
                        AddPointCardValue(c)
                        for c in hand
                        if self._may_add(card, self.card(c))
                    ),
                    PassEffect(),
                ]
            case Effect.GRAB_CARD if state.effect_target is not None:
                return [TakeCard(c) for c in state.players[state.effect_target].hand]
            case Effect.GRAB_CARD:
                return [
                    *(LookAtHand(t) for t in self._grab_targets(state, seat)),
                    PassEffect(),
                ]
            case Effect.SWAP_WITH_NEIGHBOUR:
                return [
                    *(SwapWithNeighbour(t) for t in self._snake_targets(state, seat)),
                    PassEffect(),
                ]
            case Effect.DISCARD_UP_TO_THREE:
                subsets = [
                    DiscardCards(cards)
                    for size in range(1, 4)
                    for cards in itertools.combinations(hand, size)
                ]
                return [*subsets, PassEffect()]
            case Effect.LOOK_AT_TOP_TWO if state.peeked:
                return [KeepCard(c) for c in state.peeked]
            case Effect.LOOK_AT_TOP_TWO:
                return [LookAtTopCards(), PassEffect()]
            case Effect.SWAP_TWO_OTHERS:
                others = [t for t in self.living(state) if t != seat]
                return [
                    *(
                        SwapPlayedCards(a, b)
                        for a, b in itertools.combinations(others, 2)
                    ),
                    PassEffect(),
                ]
        return [PassEffect()]

    def _may_add(self, effect_card: Card, card: Card) -> bool:
        if card.kind is not Kind.POINT:
            return False
        if effect_card.effect is Effect.ADD_EFFECT_CARD_VALUE:
            return card.effect is not Effect.NONE
        return True

    def _grab_targets(self, state: State, seat: int) -> tuple[int, ...]:
        return tuple(
            t for t in self.living(state) if t != seat and state.players[t].hand
        )

    def _snake_targets(self, state: State, seat: int) -> tuple[int, ...]:
        return tuple(
            t
            for t in self.neighbours(state, seat)
            if t in state.played and self.card(state.played[t]).effect is Effect.NONE
        )

    def _may_use(self, state: State, seat: int, card: Card) -> bool:
        """Whether an effect window opens, judged on public facts only."""
        match card.effect:
            case (
                Effect.ADD_POINT_CARD_VALUE
                | Effect.ADD_EFFECT_CARD_VALUE
                | Effect.DISCARD_UP_TO_THREE
            ):
                return bool(state.players[seat].hand)
            case Effect.GRAB_CARD:
                return bool(self._grab_targets(state, seat))
            case Effect.SWAP_WITH_NEIGHBOUR:
                return bool(self._snake_targets(state, seat))
            case Effect.LOOK_AT_TOP_TWO:
                return bool(state.main_deck or state.discard)
            case Effect.SWAP_TWO_OTHERS:
                return len(self.living(state)) >= 3
        return False

    # -- deciding -----------------------------------------------------------------

    def decide(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> list[Event]:
        return self.decide_and_evolve(state, seat, command, rng)[0]

    def decide_and_evolve(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> tuple[list[Event], State]:
        if state.phase in (Phase.SETUP, Phase.OVER):
            raise RuleViolation("WRONG_PHASE", "The game is not being played.")
        if state.players[seat].eliminated:
            raise RuleViolation("ELIMINATED", "An eliminated dinosaur plays no more.")
        return self._then(state, self._decide(state, seat, command, rng), rng)

    def _decide(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> list[Event]:
        hand = state.players[seat].hand
        match command:
            case PlayPointCard(card=card):
                self._expect_phase(state, Phase.COMMIT, Phase.SUDDEN_DEATH)
                if state.phase is Phase.SUDDEN_DEATH and seat not in state.sudden_death:
                    raise RuleViolation(
                        "NOT_IN_SUDDEN_DEATH", "Only the tied lowest play Sudden Death."
                    )
                if seat in state.committed:
                    raise RuleViolation(
                        "ALREADY_COMMITTED", "You already placed a card face down."
                    )
                self._expect_in_hand(hand, card)
                if self.card(card).kind is not Kind.POINT:
                    raise RuleViolation(
                        "NOT_A_POINT_CARD", f"{card} is not a Point card."
                    )
                return [PointCardCommitted(seat=seat, card=card)]
            case (
                PassEffect()
                | AddPointCardValue()
                | LookAtHand()
                | TakeCard()
                | SwapWithNeighbour()
                | DiscardCards()
                | LookAtTopCards()
                | KeepCard()
                | SwapPlayedCards()
            ):
                return self._decide_effect(state, seat, command, rng)
            case PlayScoreBooster() | PlayScoreSapper() | PlayScoreInversion():
                return self._decide_instant(state, seat, command)
            case PassInstant():
                self._expect_scoring_turn(state, seat)
                return [InstantPassed(seat=seat)]
            case PlayDisasterInsurance(card=card):
                disaster = self._expect_taker(state, seat, Phase.DISASTER)
                self._expect_instant(hand, card, InstantEffect.INSURE)
                return [
                    DisasterInsurancePlayed(seat=seat, card=card),
                    DisasterSentToBottom(card=disaster, reason=BottomReason.INSURANCE),
                ]
            case PlayDisasterRedirect(card=card, target=target):
                self._expect_taker(state, seat, Phase.DISASTER)
                self._expect_instant(hand, card, InstantEffect.REDIRECT)
                self._expect_other_living(state, seat, target)
                return [DisasterRedirectPlayed(seat=seat, card=card, target=target)]
            case TakeDisaster():
                disaster = self._expect_taker(state, seat, Phase.DISASTER)
                return [DisasterTaken(seat=seat, card=disaster)]
            case DiscardCard(card=card):
                self._expect_taker(state, seat, Phase.DISCARD)
                self._expect_in_hand(hand, card)
                return [DisasterDiscardChosen(seat=seat, card=card)]
            case KeepHand():
                self._expect_taker(state, seat, Phase.DISCARD)
                return [DisasterDiscardChosen(seat=seat, card=None)]
        raise InvalidCommand(
            "UNKNOWN_COMMAND", f"{type(command).__name__} is not a command."
        )

    def _decide_effect(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> list[Event]:
        """A command of the effect window: checked against the open effect,
        then decided by the one method of its type."""
        self._expect_phase(state, Phase.EFFECTS)
        if state.effect is None or self.holder(state, state.effect) != seat:
            raise RuleViolation(
                "NOT_YOUR_EFFECT", "No effect of yours is waiting to be used."
            )
        card = self.card(state.effect)
        effects = _EFFECT_COMMANDS.get(type(command))
        if effects is not None and card.effect not in effects:
            raise RuleViolation("WRONG_EFFECT", f"{card.name} does not do that.")
        match command:
            case PassEffect():
                return self._pass_effect(state, seat, card)
            case AddPointCardValue():
                return self._add_value(state, seat, card, command)
            case LookAtHand():
                return self._look_at_hand(state, seat, command)
            case TakeCard():
                return self._take_card(state, seat, command)
            case SwapWithNeighbour():
                return self._swap_with_neighbour(state, seat, card, command)
            case DiscardCards():
                return self._discard_cards(state, seat, card, command)
            case LookAtTopCards():
                return self._look_at_top_cards(state, seat, rng)
            case KeepCard():
                return self._keep_card(state, seat, command)
            case SwapPlayedCards():
                return self._swap_played_cards(state, seat, card, command)
        raise InvalidCommand(
            "UNKNOWN_COMMAND", f"{type(command).__name__} is not an effect."
        )

    @staticmethod
    def _midway(state: State) -> bool:
        """A two-step effect (Dino Grabber, Treenoculars) is half done."""
        return state.effect_target is not None or bool(state.peeked)

    def _pass_effect(self, state: State, seat: int, card: Card) -> list[Event]:
        if self._midway(state):
            raise RuleViolation("EFFECT_UNDER_WAY", "Finish the effect you started.")
        return [EffectPassed(seat=seat, card=card.id)]

    def _add_value(
        self, state: State, seat: int, card: Card, command: AddPointCardValue
    ) -> list[Event]:
        discarded = command.card
        self._expect_in_hand(state.players[seat].hand, discarded)
        if not self._may_add(card, self.card(discarded)):
            raise RuleViolation(
                "CARD_NOT_ALLOWED",
                f"{card.name} cannot discard {discarded} for points.",
            )
        value = self.card(discarded).value
        return [
            PointCardValueAdded(
                seat=seat, card=card.id, discarded=discarded, value=value
            )
        ]

    def _look_at_hand(
        self, state: State, seat: int, command: LookAtHand
    ) -> list[Event]:
        target = command.target
        if self._midway(state):
            raise RuleViolation("EFFECT_UNDER_WAY", "You already looked.")
        self._expect_other_living(state, seat, target)
        hand = state.players[target].hand
        if not hand:
            raise RuleViolation("HAND_EMPTY", "That hand has no cards.")
        return [HandLookedAt(seat=seat, target=target, hand=hand, count=len(hand))]

    def _take_card(self, state: State, seat: int, command: TakeCard) -> list[Event]:
        target = state.effect_target
        if target is None:
            raise RuleViolation("LOOK_FIRST", "Look at a hand first.")
        self._expect_in_hand(state.players[target].hand, command.card)
        return [CardTaken(seat=seat, target=target, card=command.card)]

    def _swap_with_neighbour(
        self, state: State, seat: int, card: Card, command: SwapWithNeighbour
    ) -> list[Event]:
        target = command.target
        self._expect_seat(state, target)
        if target not in self.neighbours(state, seat):
            raise RuleViolation(
                "NOT_A_NEIGHBOUR", f"Seat {seat_number(target)} is not next to you."
            )
        if self.card(state.played[target]).effect is not Effect.NONE:
            raise RuleViolation(
                "CARD_HAS_EFFECT", "The snake cannot take a card with an effect."
            )
        return [PlayedCardsSwapped(seat=seat, card=card.id, first=seat, second=target)]

    def _discard_cards(
        self, state: State, seat: int, card: Card, command: DiscardCards
    ) -> list[Event]:
        cards = command.cards
        if not 1 <= len(cards) <= 3 or len(set(cards)) != len(cards):
            raise InvalidCommand(
                "DISCARD_ONE_TO_THREE", "Discard one to three different cards."
            )
        for discarded in cards:
            self._expect_in_hand(state.players[seat].hand, discarded)
        return [EffectCardsDiscarded(seat=seat, card=card.id, cards=cards)]

    def _look_at_top_cards(self, state: State, seat: int, rng: Rng) -> list[Event]:
        if self._midway(state):
            raise RuleViolation("EFFECT_UNDER_WAY", "You already looked.")

        def looked(cards: tuple[str, ...]) -> Event:
            return TopCardsLookedAt(seat=seat, cards=cards, count=len(cards))

        return self._draw(state, 2, rng, looked)

    def _keep_card(self, state: State, seat: int, command: KeepCard) -> list[Event]:
        kept = command.card
        if kept not in state.peeked:
            raise RuleViolation(
                "CARD_NOT_LOOKED_AT", f"You did not look at {quote(kept)}."
            )
        discarded = without(state.peeked, kept)
        return [TopCardKept(seat=seat, kept=kept, discarded=discarded)]

    def _swap_played_cards(
        self, state: State, seat: int, card: Card, command: SwapPlayedCards
    ) -> list[Event]:
        first, second = command.first, command.second
        self._expect_other_living(state, seat, first)
        self._expect_other_living(state, seat, second)
        if first == second:
            raise RuleViolation("SAME_PLAYER", "Choose two different players.")
        return [PlayedCardsSwapped(seat=seat, card=card.id, first=first, second=second)]

    def _decide_instant(self, state: State, seat: int, command: Command) -> list[Event]:
        self._expect_scoring_turn(state, seat)
        hand = state.players[seat].hand
        amount_factor = 2 if self.doubled(state) else 1
        match command:
            case PlayScoreBooster(card=card, target=target):
                self._expect_instant(hand, card, InstantEffect.BOOST)
                self._expect_living(state, target)
                amount = self.card(card).amount * amount_factor
                return [
                    ScoreBoosterPlayed(
                        seat=seat, card=card, target=target, amount=amount
                    )
                ]
            case PlayScoreSapper(card=card, target=target):
                self._expect_instant(hand, card, InstantEffect.SAP)
                self._expect_living(state, target)
                amount = self.card(card).amount * amount_factor
                return [
                    ScoreSapperPlayed(
                        seat=seat, card=card, target=target, amount=amount
                    )
                ]
            case PlayScoreInversion(card=card):
                self._expect_instant(hand, card, InstantEffect.INVERT)
                return [
                    ScoreInversionPlayed(seat=seat, card=card),
                    swapped(state.scores),
                ]
        raise InvalidCommand(
            "UNKNOWN_COMMAND", f"{type(command).__name__} is not an Instant."
        )

    # -- refusals -----------------------------------------------------------------

    def _expect_phase(self, state: State, *phases: Phase) -> None:
        if state.phase not in phases:
            raise RuleViolation(
                "WRONG_PHASE", f"That cannot be done now ({state.phase.value})."
            )

    def _expect_in_hand(self, hand: tuple[str, ...], card: str) -> None:
        if card not in hand:
            raise RuleViolation(
                "CARD_NOT_IN_HAND", f"{quote(card)} is not in that hand."
            )

    def _expect_instant(
        self, hand: tuple[str, ...], card: str, instant: InstantEffect
    ) -> None:
        self._expect_in_hand(hand, card)
        if self.card(card).instant is not instant:
            raise RuleViolation("WRONG_CARD", f"{card} is not that Instant card.")

    def _expect_seat(self, state: State, target: int) -> None:
        if not 0 <= target < len(state.players):
            raise InvalidCommand(
                "SEAT_OUT_OF_RANGE", no_such_seat(target, len(state.players))
            )

    def _expect_living(self, state: State, target: int) -> None:
        self._expect_seat(state, target)
        if state.players[target].eliminated:
            raise RuleViolation(
                "TARGET_ELIMINATED", f"Seat {seat_number(target)} is eliminated."
            )

    def _expect_other_living(self, state: State, seat: int, target: int) -> None:
        self._expect_living(state, target)
        if target == seat:
            raise RuleViolation("TARGET_IS_YOU", "Choose another player.")

    def _expect_scoring_turn(self, state: State, seat: int) -> None:
        self._expect_phase(state, Phase.SCORING)
        if seat not in self.active_seats(state):
            raise RuleViolation(
                "NOT_YOUR_TURN", "You passed; wait until someone plays an Instant."
            )

    def _expect_taker(self, state: State, seat: int, phase: Phase) -> str:
        self._expect_phase(state, phase)
        if state.taker != seat:
            raise RuleViolation("NOT_YOUR_DISASTER", "The Disaster is not yours.")
        return state.disaster or ""

    # -- what happens by itself -----------------------------------------------

    def _then(
        self, state: State, events: list[Event], rng: Rng
    ) -> tuple[list[Event], State]:
        """``events`` followed by every automatic step they lead to, and the
        state after them all."""
        for event in events:
            state = self.evolve(state, event)
        out = list(events)
        for _ in range(_MAX_STEPS):
            step = self._step(state, rng)
            if not step:
                return out, state
            for event in step:
                state = self.evolve(state, event)
            out += step
        raise RuntimeError("the round did not settle")  # pragma: no cover

    def _step(self, state: State, rng: Rng) -> list[Event]:
        """The automatic events of the current phase; [] while a player must act."""
        won = self.won(state)
        if won is not None:
            return [won]
        playing = state.phase not in (Phase.SETUP, Phase.OVER)
        if playing and self._rebuild_due(state.main_deck, state.discard):
            return [self._rebuild(state, state.discard, state.reshuffles_used, rng)]
        match state.phase:
            case Phase.COMMIT:
                return self._commit_step(state, rng)
            case Phase.EFFECTS if state.effect is None:
                return self._next_effect(state)
            case Phase.SCORING if not self.active_seats(state):
                return self._compare(state)
            case Phase.LOWEST:
                return self._lowest(state)
            case Phase.SUDDEN_DEATH:
                return self._sudden_death(state)
            case Phase.DISASTER if state.taker is not None:
                return self._take_with_empty_hand(state, state.taker)
            case Phase.AFTER_DISASTER if state.taker is not None:
                return self._after_disaster(state, state.taker)
            case Phase.ROUND_END:
                return [self._escape(state)]
            case Phase.REFILL:
                return self._refill(state, rng)
        return []

    def won(self, state: State) -> GameWon | None:
        """The end of the game, when it is reached: a living dinosaur at 50
        (the highest total among them wins, equal totals share) or a single
        dinosaur left. Only a collection, an escape move, an elimination or
        a seat leaving reaches it, and it ends the game at once.

        A seat that left (:class:`PlayerWithdrew`) ranks below every seat
        still in: its dinosaur reaching 50 ends the race, but the seats
        still in furthest along win (``leaver_escaped``), and the last
        dinosaur standing is the last of the seats still in."""
        if state.phase in (Phase.SETUP, Phase.OVER):
            return None
        living = self.living(state)
        staying = tuple(s for s in living if s not in state.withdrawn)
        arrived = [s for s in living if state.players[s].escape >= WINNING_ESCAPE]
        if arrived:
            escaped = [s for s in arrived if s in staying]
            ranked = escaped or staying
            best = max((state.players[s].escape for s in ranked), default=0)
            winners = tuple(s for s in ranked if state.players[s].escape == best)
            return GameWon(winners, ESCAPED if escaped else LEAVER_ESCAPED)
        if len(staying) <= 1:
            return GameWon(winners=staying, result=LAST_STANDING)
        return None

    def _commit_step(self, state: State, rng: Rng) -> list[Event]:
        """Redraw a hand without a Point card; once all committed, reveal."""
        living = self.living(state)
        for seat in living:
            if seat not in state.committed and not self.has_point_card(state, seat):
                return self._redraw(state, seat, rng)
        if all(s in state.committed for s in living):
            return [PointCardsRevealed(cards=dict(sorted(state.committed.items())))]
        return []

    def _lowest(self, state: State) -> list[Event]:
        """A single lowest score faces the Disaster; a tie plays Sudden Death."""
        low = min(state.scores[s] for s in self.living(state))
        lowest = tuple(s for s in self.living(state) if state.scores[s] == low)
        if len(lowest) == 1:
            return [DisasterFaced(seat=lowest[0])]
        return [SuddenDeathStarted(seats=lowest)]

    def _take_with_empty_hand(self, state: State, taker: int) -> list[Event]:
        """With no card to answer it, the Disaster is taken by itself."""
        if state.players[taker].hand:
            return []
        return [DisasterTaken(seat=taker, card=state.disaster or "")]

    def _after_disaster(self, state: State, taker: int) -> list[Event]:
        """A deadly set eliminates; otherwise a discard is offered, or the
        round moves on."""
        player = state.players[taker]
        if eliminates(self.disaster_type(c) for c in player.disasters):
            return [PlayerEliminated(seat=taker, discarded=player.hand)]
        if player.hand:
            return [DiscardOffered(seat=taker)]
        return [self._escape(state)]

    def _redraw(self, state: State, seat: int, rng: Rng) -> list[Event]:
        """A hand without a Point card is discarded and 5 new cards drawn."""
        events: list[Event] = []
        hand = state.players[seat].hand
        if hand:
            events.append(CardsDiscarded(seat=seat, cards=hand))
            state = self.evolve(state, events[0])
        drawn = self._draw(state, HAND_SIZE, rng, self._drawn_by(seat))
        if not drawn:  # pragma: no cover - 53 Point cards cannot all be held
            raise RuntimeError("no card left to redraw")
        return events + drawn

    def _drawn_by(self, seat: int) -> Callable[[tuple[str, ...]], Event]:
        def make(cards: tuple[str, ...]) -> Event:
            return CardsDrawn(seat=seat, cards=cards, count=len(cards))

        return make

    def _draw(
        self,
        state: State,
        n: int,
        rng: Rng,
        make: Callable[[tuple[str, ...]], Event],
    ) -> list[Event]:
        """Take ``n`` cards from the Main deck, reshuffling the discard pile
        into a new deck whenever it runs out (fewer if both are empty)."""
        deck, discard, used = state.main_deck, state.discard, state.reshuffles_used
        events: list[Event] = []
        taken: list[str] = []
        left = n
        while left:
            if not deck:
                if not discard:
                    break
                if taken:
                    events.append(make(tuple(taken)))
                    taken = []
                rebuilt = self._rebuild(state, discard, used, rng)
                events.append(rebuilt)
                deck, discard, used = rebuilt.cards, (), used + 1
            k = min(left, len(deck))
            taken += deck[:k]
            deck, left = deck[k:], left - k
        if taken:
            events.append(make(tuple(taken)))
        if self._rebuild_due(deck, discard):
            events.append(self._rebuild(state, discard, used, rng))
        return events

    def _rebuild_due(self, deck: tuple[str, ...], discard: tuple[str, ...]) -> bool:
        """Whether the discard pile is shuffled into a new Main deck now, as
        the rulebook says, "if at any time the Main deck has no remaining
        cards": the moment it empties (rules version 3 on; before, only when
        the next draw found it empty)."""
        return not deck and bool(discard)

    def _rebuild(
        self, state: State, discard: tuple[str, ...], used: int, rng: Rng
    ) -> MainDeckReshuffled:
        """``discard`` shuffled into a new Main deck (the scenario's
        ``used``-th reshuffle fixes its top)."""
        fixed: tuple[str, ...] = ()
        if state.scenario is not None and used < len(state.scenario.reshuffles):
            pile = set(discard)
            fixed = tuple(c for c in state.scenario.reshuffles[used].cards if c in pile)
        cards = (*fixed, *rng.shuffled(without_any(discard, fixed)))
        return MainDeckReshuffled(cards=cards, count=len(cards))

    def _next_effect(self, state: State) -> list[Event]:
        """Open the window of the next Point card effect, or tally the scores."""
        pending = []
        if not self.silenced(state):
            for seat, card_id in state.played.items():
                card = self.card(card_id)
                if card.timing is Timing.NORMAL and card_id not in state.effects_done:
                    escape = state.players[seat].escape
                    pending.append((card.value, escape, seat, card_id))
        if pending:
            _, _, seat, card_id = min(pending)
            if self._may_use(state, seat, self.card(card_id)):
                return [EffectWindowOpened(seat=seat, card=card_id)]
            return [EffectPassed(seat=seat, card=card_id)]
        scores = self._tally(state)
        events: list[Event] = [ScoresTallied(scores=scores)]
        if not self.silenced(state):
            for seat, card_id in sorted(state.played.items()):
                if self.card(card_id).effect is Effect.SWAP_HIGHEST_AND_LOWEST:
                    swap = swapped(scores)
                    events += [MouthTrapSprung(seat=seat, card=card_id), swap]
                    scores = {**scores, **swap.scores}
        return events

    def _tally(self, state: State) -> dict[int, int]:
        disaster = self.disaster_type(state.disaster or "")
        scores = {}
        for seat in self.living(state):
            player = state.players[seat]
            scores[seat] = (
                self.card(state.played[seat]).value
                + self.cards.trait(player.dinosaur, disaster)
                + state.bonus.get(seat, 0)
            )
        return scores

    def _compare(self, state: State) -> list[Event]:
        """Highest collect; everyone tied sends the Disaster to the bottom."""
        scores = {s: state.scores[s] for s in self.living(state)}
        high, low = max(scores.values()), min(scores.values())
        if high == low:
            return [
                DisasterSentToBottom(
                    card=state.disaster or "", reason=BottomReason.ALL_TIED
                )
            ]
        return [
            PointsCollected(
                points={s: max(high, 0) for s, v in scores.items() if v == high}
            )
        ]

    def _sudden_death(self, state: State) -> list[Event]:
        if len(state.sudden_death) == 1:
            return [DisasterFaced(seat=state.sudden_death[0])]
        if not state.committed:
            out = [s for s in state.sudden_death if not self.has_point_card(state, s)]
            if len(out) == 1:
                return [DisasterFaced(seat=out[0])]
            if len(out) > 1:
                return [
                    DisasterSentToBottom(
                        card=state.disaster or "",
                        reason=BottomReason.SUDDEN_DEATH_OUT_OF_CARDS,
                    )
                ]
        if all(s in state.committed for s in state.sudden_death):
            cards = dict(sorted(state.committed.items()))
            return [SuddenDeathCardsRevealed(cards=cards, lowest=lowest_cards(cards))]
        return []

    def _escape(self, state: State) -> EscapeMoved:
        return EscapeMoved(
            moves={s: len(state.players[s].disasters) for s in self.living(state)}
        )

    def _refill(self, state: State, rng: Rng) -> list[Event]:
        """Draw to 5 (before the table is cleared), clear, flip a Disaster."""
        events: list[Event] = []
        for seat in self.living(state):
            need = HAND_SIZE - len(state.players[seat].hand)
            if need > 0:
                drawn = self._draw(state, need, rng, self._drawn_by(seat))
                for event in drawn:
                    state = self.evolve(state, event)
                events += drawn
        cleared = TableCleared(
            cards=(*(c for _, c in sorted(state.played.items())), *state.table)
        )
        events.append(cleared)
        state = self.evolve(state, cleared)
        if self._rebuild_due(state.main_deck, state.discard):
            events.append(
                self._rebuild(state, state.discard, state.reshuffles_used, rng)
            )
        if not state.disaster_deck:  # pragma: no cover - 28 Disasters suffice
            raise RuntimeError("the Disaster deck ran out")
        events.append(
            DisasterFlipped(round=state.round + 1, card=state.disaster_deck[0])
        )
        return events

    # -- evolving -----------------------------------------------------------------

    def evolve(self, state: State, event: Event) -> State:  # noqa: C901 (a flat match table)
        match event:
            case GameSetUp(
                dinosaurs=dinosaurs, main_deck=main, disaster_deck=disasters
            ):
                # The players' hands and areas are empty, or a position's. A
                # player's copy has the decks' sizes only: unseen cards.
                players = zip(state.players, dinosaurs, strict=True)
                return replace(
                    state,
                    players=tuple(replace(p, dinosaur=d) for p, d in players),
                    main_deck=main or (UNSEEN,) * event.main_deck_size,
                    disaster_deck=disasters or (UNSEEN,) * event.disaster_deck_size,
                )
            case CardsDrawn(seat=seat, cards=cards, count=count):
                drawn = cards or (UNSEEN,) * count
                state = self._hand(state, seat, state.players[seat].hand + drawn)
                return replace(state, main_deck=state.main_deck[count:])
            case MainDeckReshuffled(cards=cards, count=count):
                return replace(
                    state,
                    main_deck=cards or (UNSEEN,) * count,
                    discard=(),
                    reshuffles_used=state.reshuffles_used + 1,
                )
            case DisasterFlipped(round=number, card=card):
                return replace(
                    state,
                    phase=Phase.COMMIT,
                    round=number,
                    disaster_deck=state.disaster_deck[1:],
                    disaster=card,
                    committed={},
                    played={},
                    table=(),
                    effects_done=(),
                    effect=None,
                    effect_target=None,
                    peeked=(),
                    bonus={},
                    scores={},
                    passed=(),
                    sudden_death=(),
                    sudden_death_revealed={},
                    taker=None,
                )
            case CardsDiscarded(seat=seat, cards=cards):
                return self._discard(state, seat, cards)
            case PointCardCommitted(seat=seat, card=card):
                state = self._hand(state, seat, _taken(state.players[seat].hand, card))
                committed = card or UNSEEN
                return replace(state, committed={**state.committed, seat: committed})
            case PointCardsRevealed(cards=cards):
                return replace(
                    state, played=dict(cards), committed={}, phase=Phase.EFFECTS
                )
            case EffectWindowOpened(card=card):
                return replace(state, effect=card)
            case EffectPassed(card=card):
                return self._effect_done(state, card)
            case PointCardValueAdded(
                seat=seat, card=card, discarded=discarded, value=value
            ):
                state = self._discard(state, seat, (discarded,))
                bonus = {**state.bonus, seat: state.bonus.get(seat, 0) + value}
                return self._effect_done(replace(state, bonus=bonus), card)
            case HandLookedAt(target=target, hand=hand):
                # The hand as the looker saw it (no news in the true state).
                if hand:
                    state = self._hand(state, target, hand)
                return replace(state, effect_target=target)
            case CardTaken(seat=seat, target=target, card=card):
                state = self._hand(
                    state, target, _taken(state.players[target].hand, card)
                )
                taken = card or UNSEEN
                state = self._hand(state, seat, (*state.players[seat].hand, taken))
                return self._effect_done(state, state.effect)
            case PlayedCardsSwapped(card=card, first=first, second=second):
                played = {
                    **state.played,
                    first: state.played[second],
                    second: state.played[first],
                }
                return self._effect_done(replace(state, played=played), card)
            case EffectCardsDiscarded(seat=seat, card=card, cards=cards):
                return self._effect_done(self._discard(state, seat, cards), card)
            case TopCardsLookedAt(cards=cards, count=count):
                return replace(
                    state,
                    peeked=state.peeked + (cards or (UNSEEN,) * count),
                    main_deck=state.main_deck[count:],
                )
            case TopCardKept(seat=seat, kept=kept, discarded=discarded):
                hand = (*state.players[seat].hand, kept or UNSEEN)
                state = self._hand(state, seat, hand)
                state = replace(state, discard=state.discard + discarded)
                return self._effect_done(state, state.effect)
            case ScoresTallied(scores=scores):
                return replace(
                    state, scores=dict(scores), phase=Phase.SCORING, passed=()
                )
            case MouthTrapSprung():
                return state  # the ScoresSwapped that follows swaps the scores
            case ScoresSwapped(scores=scores):
                return replace(state, scores={**state.scores, **scores})
            case ScoreBoosterPlayed(seat=seat, card=card, target=target, amount=amount):
                state = self._to_table(state, seat, card)
                scores = {**state.scores, target: state.scores[target] + amount}
                return replace(state, scores=scores, passed=())
            case ScoreSapperPlayed(seat=seat, card=card, target=target, amount=amount):
                state = self._to_table(state, seat, card)
                scores = {**state.scores, target: state.scores[target] - amount}
                return replace(state, scores=scores, passed=())
            case ScoreInversionPlayed(seat=seat, card=card):
                state = self._to_table(state, seat, card)
                return replace(state, passed=())
            case InstantPassed(seat=seat):
                return replace(state, passed=(*state.passed, seat))
            case PointsCollected(points=points):
                return self._moved(state, points, Phase.LOWEST)
            case DisasterSentToBottom(card=card):
                return replace(
                    state,
                    disaster_deck=(*state.disaster_deck, card),
                    disaster=None,
                    phase=Phase.ROUND_END,
                )
            case SuddenDeathStarted(seats=seats):
                return replace(
                    state, sudden_death=seats, phase=Phase.SUDDEN_DEATH, committed={}
                )
            case SuddenDeathCardsRevealed(cards=cards, lowest=lowest):
                return replace(
                    state,
                    table=state.table + tuple(c for _, c in sorted(cards.items())),
                    sudden_death_revealed=dict(cards),
                    committed={},
                    sudden_death=lowest,
                )
            case DisasterFaced(seat=seat):
                return replace(state, taker=seat, phase=Phase.DISASTER)
            case DisasterInsurancePlayed(seat=seat, card=card):
                return self._to_table(state, seat, card)
            case DisasterRedirectPlayed(seat=seat, card=card, target=target):
                return replace(self._to_table(state, seat, card), taker=target)
            case DisasterTaken(seat=seat, card=card):
                player = replace(
                    state.players[seat],
                    disasters=(*state.players[seat].disasters, card),
                )
                return replace(
                    self._player(state, seat, player),
                    disaster=None,
                    phase=Phase.AFTER_DISASTER,
                )
            case PlayerEliminated(seat=seat, discarded=discarded):
                player = replace(state.players[seat], hand=(), eliminated=True)
                state = self._player(state, seat, player)
                state = replace(state, discard=state.discard + discarded)
                return replace(state, phase=Phase.ROUND_END)
            case DiscardOffered():
                return replace(state, phase=Phase.DISCARD)
            case DisasterDiscardChosen(seat=seat, card=card):
                if card is not None:
                    state = self._discard(state, seat, (card,))
                return replace(state, phase=Phase.ROUND_END)
            case EscapeMoved(moves=moves):
                return self._moved(state, moves, Phase.REFILL)
            case TableCleared(cards=cards):
                return replace(
                    state,
                    discard=state.discard + cards,
                    played={},
                    table=(),
                )
            case PlayerWithdrew(seat=seat):
                return replace(state, withdrawn=(*state.withdrawn, seat))
            case GameWon(winners=winners, result=result):
                return replace(state, phase=Phase.OVER, winners=winners, result=result)
        return state

    def _player(self, state: State, seat: int, player: Player) -> State:
        players = list(state.players)
        players[seat] = player
        return replace(state, players=tuple(players))

    def _hand(self, state: State, seat: int, hand: tuple[str, ...]) -> State:
        return self._player(state, seat, replace(state.players[seat], hand=hand))

    def _discard(self, state: State, seat: int, cards: tuple[str, ...]) -> State:
        hand = state.players[seat].hand
        for card in cards:
            hand = _taken(hand, card)
        state = self._hand(state, seat, hand)
        return replace(state, discard=state.discard + cards)

    def _to_table(self, state: State, seat: int, card: str) -> State:
        state = self._hand(state, seat, _taken(state.players[seat].hand, card))
        return replace(state, table=(*state.table, card))

    def _effect_done(self, state: State, card: str | None) -> State:
        """The window of ``card`` (the effect under way) is over."""
        done = state.effects_done if card is None else (*state.effects_done, card)
        return replace(
            state,
            effects_done=done,
            effect=None,
            effect_target=None,
            peeked=(),
        )

    def _moved(self, state: State, moves: dict[int, int], then: Phase) -> State:
        """Move dinosaurs along the Escape Route (whether that ends the game is
        decided next, and recorded as :class:`GameWon`)."""
        players = list(state.players)
        for seat, spaces in moves.items():
            players[seat] = replace(players[seat], escape=players[seat].escape + spaces)
        return replace(state, players=tuple(players), phase=then)

    # -- the end ------------------------------------------------------------------

    def is_terminal(self, state: State) -> bool:
        return state.phase is Phase.OVER

    def outcome(self, state: State) -> Outcome:
        return Outcome(winners=state.winners, result=state.result)

    # -- what a viewer sees -----------------------------------------------------

    def view(self, state: State, viewer: Viewer) -> View:
        effect_seat = None if state.effect is None else self.holder(state, state.effect)
        looked_at: tuple[str, ...] = ()
        if (
            state.effect_target is not None
            and effect_seat is not None
            and viewer.plays(effect_seat)
        ):
            looked_at = state.players[state.effect_target].hand
        peeked = (
            state.peeked
            if effect_seat is not None and viewer.plays(effect_seat)
            else ()
        )
        players = tuple(
            PlayerView(
                seat=seat,
                dinosaur=p.dinosaur,
                hand=p.hand if viewer.plays(seat) else (),
                hand_size=len(p.hand),
                disasters=p.disasters,
                escape=p.escape,
                eliminated=p.eliminated,
                committed=seat in state.committed,
                commitment=state.committed.get(seat) if viewer.plays(seat) else None,
                played=state.played.get(seat),
                bonus=state.bonus.get(seat, 0),
                score=state.scores.get(seat),
                sudden_death_card=state.sudden_death_revealed.get(seat),
            )
            for seat, p in enumerate(state.players)
        )
        return View(
            players=players,
            phase=state.phase,
            round=state.round,
            disaster=state.disaster,
            main_deck_size=len(state.main_deck),
            disaster_deck_size=len(state.disaster_deck),
            discard=state.discard,
            table=state.table,
            effects_done=state.effects_done,
            effect=state.effect,
            effect_seat=effect_seat,
            effect_target=state.effect_target,
            looked_at=looked_at,
            peeked=peeked,
            peeked_count=len(state.peeked),
            passed=state.passed,
            sudden_death=state.sudden_death,
            taker=state.taker,
            active_seats=tuple(sorted(self.active_seats(state))),
            winners=state.winners,
        )

    def redact(self, event: Event, viewer: Viewer) -> Event:
        match event:
            case GameSetUp() if not viewer.sees_everything:
                return replace(event, main_deck=(), disaster_deck=())
            case MainDeckReshuffled() if not viewer.sees_everything:
                return replace(event, cards=())
            case CardsDrawn(seat=seat) if not viewer.plays(seat):
                return replace(event, cards=())
            case PointCardCommitted(seat=seat) if not viewer.plays(seat):
                return replace(event, card=None)
            case HandLookedAt(seat=seat, target=target) if not (
                viewer.plays(seat) or viewer.plays(target)
            ):
                return replace(event, hand=())
            case CardTaken(seat=seat, target=target) if not (
                viewer.plays(seat) or viewer.plays(target)
            ):
                return replace(event, card=None)
            case TopCardsLookedAt(seat=seat) if not viewer.plays(seat):
                return replace(event, cards=())
            case TopCardKept(seat=seat) if not viewer.plays(seat):
                return replace(event, kept=None)
        return event


class _Places:
    """Where a position puts the cards of one kind (Main or Disaster)."""

    def __init__(self, cards: set[str], kind: str) -> None:
        self.cards = cards
        self.kind = kind
        self.where: dict[str, str] = {}

    def put(self, cards: Iterable[str], field: str) -> None:
        for card in cards:
            if card not in self.cards:
                raise position_invalid(field, f"{quote(card)} is not {self.kind}.")
            if card in self.where:
                raise position_invalid(field, f"{card} is also in {self.where[card]}.")
            self.where[card] = field

    def all_placed(self, field: str) -> None:
        missing = sorted(self.cards - set(self.where))
        if missing:
            raise position_invalid(
                field,
                f"{len(missing)} cards are placed nowhere ({', '.join(missing[:3])}"
                f"{', …' if len(missing) > 3 else ''}): list every card once, or "
                f"set shuffle_rest.",
            )


class HappyLittleDinosaursRulesV2(
    ImplicitDecisions[State, Command, Event, View], HappyLittleDinosaursRules
):
    """Rules version 2, for the games created under it: the inversions'
    swaps were not recorded (no :class:`ScoresSwapped`: the fold swapped the
    scores after each :class:`MouthTrapSprung` and
    :class:`ScoreInversionPlayed`); an emptied Main deck was rebuilt only
    when the next draw found it empty; and a seat that left stayed in the
    ranking (no :class:`PlayerWithdrew`: a win of its dinosaur went to
    nobody, the lifecycle leaving it out of the winners)."""

    rules_version: ClassVar[str] = "2"
    unrecorded: ClassVar[tuple[type, ...]] = (ScoresSwapped,)

    def implied(self, state: State, event: Event) -> list[Event]:
        if isinstance(event, MouthTrapSprung | ScoreInversionPlayed):
            return [swapped(state.scores)]
        return []

    def _rebuild_due(self, deck: tuple[str, ...], discard: tuple[str, ...]) -> bool:
        return False

    def leave(self, state: State, seat: int, seats_in: tuple[int, ...]) -> list[Event]:
        return []


class HappyLittleDinosaursRulesV1(HappyLittleDinosaursRulesV2):
    """Rules version 1, for the games created under it: version 2, and the
    end of the game was not recorded either (no :class:`GameWon`); the fold
    worked it out after each collection, escape move and elimination."""

    rules_version: ClassVar[str] = "1"
    unrecorded: ClassVar[tuple[type, ...]] = (ScoresSwapped, GameWon)

    def implied(self, state: State, event: Event) -> list[Event]:
        implied = super().implied(state, event)
        if isinstance(event, PointsCollected | EscapeMoved | PlayerEliminated):
            won = self.won(state)
            if won is not None:
                implied.append(won)
        return implied


RULES = HappyLittleDinosaursRules()
RULES_V2 = HappyLittleDinosaursRulesV2()
RULES_V1 = HappyLittleDinosaursRulesV1()


def _taken(hand: tuple[str, ...], card: str | None) -> tuple[str, ...]:
    """``hand`` without ``card``, which leaves it (None: a card the viewer
    did not see). In a hand folded from a player's events, a card it does
    not find there by name was one of the hand's unseen cards, or one the
    player saw there that left unseen: one of those goes, so the hand keeps
    its size (the true hand always holds the card)."""
    if card is not None and card in hand:
        return without(hand, card)
    if UNSEEN in hand:
        return without(hand, UNSEEN)
    return hand[1:]
