"""Cubosaurs: collect dinosaurs by taking packets of cards or passing them on.

The game, as its rulebook tells it:

- **Shape.** 2 to 5 players; 55 cards (7 species x 7 copies and 6 Eggs).
  Each round uses 10 random cards per player; the rest stay out of play,
  unseen. Each player starts the round with 4 face-up cards as a
  collection; the other cards are the face-down deck. Collections and the
  packet are public; the deck order and the cards out of play are secret
  from everyone (but an admin).
- **Turn.** The player to act is passed a packet of cards. With an empty
  packet they first draw one card from the deck: that card is the packet.
  They either take the packet into their collection, or pass it on to the
  next player after adding one card of their collection whose kind is not
  in the packet (grey and black raptors are different kinds; each Egg is
  its own kind). A player who cannot add must take.
- **Rounds.** A round ends when a card must be drawn and the deck is empty.
  Every player scores the round; all cards return and a new round is dealt.
  Round 1 starts with seat 0 passing to the left (seat + 1); every later
  round starts with the lowest total so far (earliest seat on a tie) and
  passes the other way. 2 rounds at every player count unless the options
  say otherwise (rules version 1 played 3 with 2 players); the highest
  total wins, ties share the win; a seat that left ranks below every seat
  still in (rules version 3; versions 2 and 1 are at the end of the module).
- **Advanced mode** (an option): every card with the DNA symbol a player
  receives (starting cards too) earns a DNA token from the supply of 40; what
  the supply cannot pay comes from one other player of the receiver's
  choice. Players + 1 DNA tiles are on offer each round; once per turn,
  before or after the take or pass, a player may buy one by returning its
  cost in tokens to the supply. Instant tiles act at once; end-of-round
  tiles score at the end of the round. Between rounds all tiles return and
  the offer is dealt afresh; tokens are kept, and at the end of the game
  every unspent pair scores 1 point.

This module reads top-down: set-up, legal actions, decide (a match over the
command), the automatic steps that follow a decision (ending a turn,
drawing, scoring a round), evolve (the pure fold), the end, and the views;
the shapes (options, scenario, commands, events, state, view) are in
:mod:`domain.cubosaurs.model`, the cards, tiles and scoring in
:mod:`domain.cubosaurs.content`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import ClassVar

from domain.chance import Rng
from domain.cubosaurs.bots import heuristic_bot
from domain.cubosaurs.content import (
    CARD_COUNT,
    CARDS,
    DNA_TOKENS,
    TILE_COUNT,
    TILES,
    Effect,
    Kind,
    score_round,
)
from domain.cubosaurs.model import (
    UNSEEN,
    BuyTile,
    CardDrawn,
    CardList,
    ClaimDnaTokens,
    Command,
    CubosaursState,
    Debt,
    DnaTokensForgone,
    DnaTokensGained,
    DnaTokensOwed,
    EndTurn,
    Event,
    GameScored,
    Options,
    PacketPassed,
    PacketTaken,
    PassPacket,
    Phase,
    PlayerPosition,
    PlayerView,
    PlayerWithdrew,
    Position,
    RoundDealt,
    RoundScored,
    RoundSetup,
    Scenario,
    SeatState,
    TakePacket,
    TileBought,
    TurnEnded,
    View,
    game_scored_v1_to_v2,
    highest,
    round_dealt_v1_to_v2,
    tile_bought_v1_to_v2,
)
from domain.cubosaurs.search import SEARCH
from domain.errors import InvalidCommand, RuleViolation, position_invalid
from domain.frozen import replace, without
from domain.rules import (
    Bot,
    GameConfig,
    GameRules,
    Outcome,
    Search,
    Upcaster,
    Viewer,
)
from domain.seats import no_such_seat, seat_number

CARDS_PER_PLAYER = 10  # cards per player in a round's pool
STARTING_CARDS = 4  # face-up cards that start each collection
MAX_ROUNDS = 9
DEFAULT_ROUNDS = 2  # the rulebook's, at every player count
ROUND_SCORE_LIMIT = 100  # a position's finished round scores -100 to 100
EXTINCTION = next(t.id for t in TILES if t.effect is Effect.DISCARD_OWN_CARD)


# -- helpers ----------------------------------------------------------------


def _kinds(cards: Iterable[int]) -> set[Kind]:
    return {CARDS[c].kind for c in cards}


def _dna(cards: Iterable[int]) -> int:
    return sum(1 for c in cards if CARDS[c].dna)


def _owner(state: CubosaursState, card: int) -> int | None:
    for seat, s in enumerate(state.seats):
        if card in s.collection:
            return seat
    return None


def _seats_with(
    state: CubosaursState, seat: int, **changes: object
) -> tuple[SeatState, ...]:
    """The seats, with ``changes`` made to ``seat``'s."""
    seats = state.seats
    return (*seats[:seat], replace(seats[seat], **changes), *seats[seat + 1 :])


def _total(seat: SeatState) -> int:
    return sum(seat.scores)


class CubosaursRules(GameRules[CubosaursState, Command, Event, View]):
    """The rules of Cubosaurs."""

    game_type: ClassVar[str] = "cubosaurs"
    title: ClassVar[str] = "Cubosaurs"
    rules_version: ClassVar[str] = "3"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 5
    options_type: ClassVar[type] = Options
    scenario_type: ClassVar[type] = Scenario
    position_type: ClassVar[type | None] = Position
    state_type: ClassVar[type] = CubosaursState
    view_type: ClassVar[type] = View
    command_types: ClassVar[tuple[type, ...]] = (
        TakePacket,
        PassPacket,
        BuyTile,
        EndTurn,
        ClaimDnaTokens,
    )
    character_events: ClassVar[frozenset[type] | None] = frozenset()  # none
    event_types: ClassVar[tuple[type, ...]] = (
        RoundDealt,
        CardDrawn,
        PacketTaken,
        PacketPassed,
        TileBought,
        DnaTokensGained,
        DnaTokensOwed,
        DnaTokensForgone,
        TurnEnded,
        RoundScored,
        PlayerWithdrew,
        GameScored,
    )
    bots: ClassVar[Mapping[str, Bot]] = {"heuristic": heuristic_bot}
    search: ClassVar[Search | None] = SEARCH
    upcasters: ClassVar[Mapping[tuple[str, int], Upcaster]] = {
        ("RoundDealt", 1): round_dealt_v1_to_v2,
        ("TileBought", 1): tile_bought_v1_to_v2,
        ("GameScored", 1): game_scored_v1_to_v2,
    }

    # -- set-up -------------------------------------------------------------

    def validate_config(self, config: GameConfig[CubosaursState]) -> None:
        options = config.options
        if not isinstance(options, Options):
            raise InvalidCommand(
                "OPTIONS_INVALID", "Options are not Cubosaurs options."
            )
        if not 0 <= options.rounds <= MAX_ROUNDS:
            raise InvalidCommand(
                "ROUNDS_OUT_OF_RANGE",
                f"Rounds must be 0 (the default) to {MAX_ROUNDS}, "
                f"not {options.rounds}.",
                "options.rounds",
            )
        scenario = config.scenario
        if scenario is None:
            return
        if not isinstance(scenario, Scenario):
            raise InvalidCommand("SCENARIO_INVALID", "Not a Cubosaurs scenario.")
        rounds = options.rounds or self.default_rounds(config.players)
        if len(scenario.rounds) > rounds:
            raise InvalidCommand(
                "SCENARIO_TOO_MANY_ROUNDS",
                f"The scenario deals {len(scenario.rounds)} rounds of {rounds}.",
            )
        for number, setup in enumerate(scenario.rounds, start=1):
            self._validate_setup(number, setup, config.players, options.advanced)
        if scenario.position is not None:
            if scenario.rounds:
                raise InvalidCommand(
                    "POSITION_INVALID",
                    "With a position, its deck gives this round's cards and "
                    "later rounds are dealt at random; leave the scenario's "
                    "rounds empty.",
                    "rounds",
                )
            _validate_position(scenario.position, config.players, options, rounds)

    @staticmethod
    def _validate_setup(
        number: int, setup: RoundSetup, players: int, advanced: bool
    ) -> None:
        where = f"Scenario round {number}"
        if len(setup.collections) != players or any(
            len(c.cards) != STARTING_CARDS for c in setup.collections
        ):
            raise InvalidCommand(
                "SCENARIO_COLLECTIONS_INVALID",
                f"{where}: every seat needs {STARTING_CARDS} starting cards.",
            )
        deck_size = (CARDS_PER_PLAYER - STARTING_CARDS) * players
        if len(setup.deck) != deck_size:
            raise InvalidCommand(
                "SCENARIO_DECK_INVALID", f"{where}: the deck needs {deck_size} cards."
            )
        cards = [c for cl in setup.collections for c in cl.cards] + list(setup.deck)
        if len(set(cards)) != len(cards) or not all(0 <= c < CARD_COUNT for c in cards):
            raise InvalidCommand(
                "SCENARIO_CARDS_INVALID",
                f"{where}: cards must be distinct ids 0 to {CARD_COUNT - 1}.",
            )
        if setup.tiles and (
            not advanced or sorted(setup.tiles) != list(range(TILE_COUNT))
        ):
            raise InvalidCommand(
                "SCENARIO_TILES_INVALID",
                f"{where}: the tile order is every tile 0 to {TILE_COUNT - 1} once, "
                "in advanced mode only.",
            )

    def default_rounds(self, players: int) -> int:
        """The number of rounds when the options leave it to the rules (0):
        the rulebook's two ("both rounds' scores"), at every player count."""
        return DEFAULT_ROUNDS

    def initial_state(self, config: GameConfig[CubosaursState]) -> CubosaursState:
        options: Options = config.options
        state = CubosaursState(
            players=config.players,
            advanced=options.advanced,
            rounds=options.rounds or self.default_rounds(config.players),
            scenario=config.scenario,
            seats=tuple(SeatState() for _ in range(config.players)),
        )
        position = self.position(config)
        return state if position is None else _from_position(state, position)

    def start(self, state: CubosaursState, rng: Rng) -> list[Event]:
        """Deal round 1; or, from a position (already in the state), only
        what follows on its own: the draw for an empty packet."""
        if state.phase is not Phase.SETUP:
            return self._continue(state, [], rng)[0]
        return self._continue(state, self._deal(state, rng, 1, 0, 1), rng)[0]

    def redact_position(self, position: Position, viewer: Viewer) -> Position:
        """Players see a position as a round's events show it: its deck as
        that many unseen cards (:data:`~domain.cubosaurs.model.UNSEEN`)."""
        if viewer.sees_everything:
            return position
        return dataclasses.replace(position, deck=(UNSEEN,) * len(position.deck))

    def _deal(
        self,
        state: CubosaursState,
        rng: Rng,
        number: int,
        first: int,
        direction: int,
    ) -> list[Event]:
        """Deal round ``number`` (from the scenario if it fixes it) and pay
        the DNA tokens of the starting cards, seat by seat in turn order."""
        players = state.players
        scripted = state.scenario.rounds if state.scenario else ()
        setup = scripted[number - 1] if number <= len(scripted) else None
        if setup is not None:
            collections = setup.collections
            deck = setup.deck
        else:
            pool = rng.shuffled(range(CARD_COUNT))[: CARDS_PER_PLAYER * players]
            collections = tuple(
                CardList(pool[STARTING_CARDS * s : STARTING_CARDS * (s + 1)])
                for s in range(players)
            )
            deck = pool[STARTING_CARDS * players :]
        used = {c for cl in collections for c in cl.cards} | set(deck)
        out_of_play = tuple(c for c in range(CARD_COUNT) if c not in used)
        offer: tuple[int, ...] = ()
        if state.advanced:
            order = (
                setup.tiles
                if setup is not None and setup.tiles
                else rng.shuffled(range(TILE_COUNT))
            )
            offer = tuple(order[: players + 1])
        events: list[Event] = [
            RoundDealt(
                round=number,
                first_seat=first,
                direction=direction,
                collections=collections,
                deck=tuple(deck),
                deck_size=len(deck),
                out_of_play=out_of_play,
                out_of_play_size=len(out_of_play),
                offer=offer,
                box=tuple(t for t in range(TILE_COUNT) if t not in offer)
                if state.advanced
                else (),
            )
        ]
        if state.advanced:
            working = self.evolve(state, events[0])
            for i in range(players):
                seat = (first + i * direction) % players
                paid = self._pay_dna(working, seat, collections[seat].cards)
                working = self._fold(working, paid)
                events += paid
        return events

    # -- legal actions ------------------------------------------------------

    def active_seats(self, state: CubosaursState) -> frozenset[int]:
        if state.phase in (Phase.SETUP, Phase.OVER):
            return frozenset()
        if state.debts:
            return frozenset({state.debts[0].seat})
        return frozenset({state.turn})

    def leave(
        self, state: CubosaursState, seat: int, seats_in: tuple[int, ...]
    ) -> list[Event]:
        """The seat's collection stays on the table and scores, for nobody
        (:class:`PlayerWithdrew`): it ranks below every seat still in."""
        return [PlayerWithdrew(seat)]

    def stand_in(self, state: CubosaursState, seat: int) -> Command:
        """A seat that left takes every packet it is offered and buys no
        tile (ending its turn when it could); anything else it must do
        (claiming owed tokens) is its first legal move."""
        legal = self.legal_actions(state, seat)
        for kind in (TakePacket, EndTurn):
            for command in legal:
                if isinstance(command, kind):
                    return command
        return legal[0]

    def legal_actions(self, state: CubosaursState, seat: int) -> list[Command]:
        if seat not in self.active_seats(state):
            return []
        if state.debts:
            return [ClaimDnaTokens(s) for s in self._token_holders(state, seat)]
        actions: list[Command] = []
        if state.phase is Phase.TURN:
            actions.append(TakePacket())
            in_packet = _kinds(state.packet)
            actions += [
                PassPacket(card)
                for card in state.seats[seat].collection
                if CARDS[card].kind not in in_packet
            ]
        else:
            actions.append(EndTurn())
        actions += self._purchases(state, seat)
        return actions

    def _purchases(self, state: CubosaursState, seat: int) -> list[Command]:
        """Every tile purchase ``seat`` may make now, with every target."""
        if not state.advanced or state.bought:
            return []
        tokens = state.seats[seat].tokens
        out: list[Command] = []
        for tile_id in state.offer:
            tile = TILES[tile_id]
            if tile.cost > tokens:
                continue
            match tile.effect:
                case Effect.DISCARD_OWN_CARD:
                    out += [BuyTile(tile_id, c) for c in state.seats[seat].collection]
                case Effect.TAKE_CARD:
                    out += [
                        BuyTile(tile_id, c)
                        for other, s in enumerate(state.seats)
                        if other != seat
                        for c in s.collection
                    ]
                case _:
                    out.append(BuyTile(tile_id))
        return out

    @staticmethod
    def _token_holders(state: CubosaursState, seat: int) -> list[int]:
        return [
            s for s, other in enumerate(state.seats) if s != seat and other.tokens > 0
        ]

    # -- decide -------------------------------------------------------------

    def decide(
        self, state: CubosaursState, seat: int, command: Command, rng: Rng
    ) -> list[Event]:
        return self.decide_and_evolve(state, seat, command, rng)[0]

    def decide_and_evolve(
        self, state: CubosaursState, seat: int, command: Command, rng: Rng
    ) -> tuple[list[Event], CubosaursState]:
        if state.phase is Phase.OVER:
            raise RuleViolation("GAME_OVER", "The game is over.")
        if state.phase is Phase.SETUP:
            raise RuleViolation("GAME_NOT_STARTED", "No round has been dealt yet.")
        if not 0 <= seat < state.players:
            raise InvalidCommand("SEAT_OUT_OF_RANGE", no_such_seat(seat, state.players))
        if state.debts and not isinstance(command, ClaimDnaTokens):
            debtor = state.debts[0].seat
            raise RuleViolation(
                "DNA_TOKENS_OWED",
                f"Seat {seat_number(debtor)} must first choose whom to take owed DNA "
                "tokens from.",
            )
        if not isinstance(command, ClaimDnaTokens) and seat != state.turn:
            raise RuleViolation(
                "NOT_YOUR_TURN", f"It is seat {seat_number(state.turn)}'s turn."
            )
        events: list[Event]
        match command:
            case ClaimDnaTokens(from_seat=source):
                events = self._claim(state, seat, source)
            case TakePacket():
                self._require_turn_phase(state)
                events = [PacketTaken(seat, state.packet)]
                events += self._pay_dna(state, seat, state.packet)
            case PassPacket(card=card):
                self._require_turn_phase(state)
                events = [self._pass(state, seat, card)]
            case BuyTile(tile=tile, card=card):
                events = self._buy(state, seat, tile, card)
            case EndTurn():
                if state.phase is not Phase.ACTED:
                    raise RuleViolation(
                        "TAKE_OR_PASS_FIRST", "Take or pass the packet first."
                    )
                events = [self._end_turn(state)]
            case _:
                raise InvalidCommand(
                    "UNKNOWN_COMMAND", f"{type(command).__name__} is not a command."
                )
        return self._continue(state, events, rng)

    @staticmethod
    def _require_turn_phase(state: CubosaursState) -> None:
        if state.phase is not Phase.TURN:
            raise RuleViolation(
                "ALREADY_TOOK_OR_PASSED",
                "You already took or passed this turn: buy a tile or end the turn.",
            )

    def _claim(self, state: CubosaursState, seat: int, source: int) -> list[Event]:
        if not state.debts or state.debts[0].seat != seat:
            raise RuleViolation("NO_DNA_TOKENS_OWED", "You are owed no DNA tokens.")
        if not 0 <= source < state.players:
            raise InvalidCommand(
                "SEAT_OUT_OF_RANGE", no_such_seat(source, state.players)
            )
        if source == seat:
            raise RuleViolation(
                "CANNOT_TAKE_FROM_YOURSELF", "Choose another player to take from."
            )
        available = state.seats[source].tokens
        if available == 0:
            raise RuleViolation(
                "NO_DNA_TOKENS_TO_TAKE",
                f"Seat {seat_number(source)} holds no DNA token.",
            )
        return [DnaTokensGained(seat, min(state.debts[0].amount, available), source)]

    @staticmethod
    def _pass(state: CubosaursState, seat: int, card: int) -> PacketPassed:
        if not 0 <= card < CARD_COUNT:
            raise InvalidCommand("CARD_OUT_OF_RANGE", f"There is no card {card}.")
        if card not in state.seats[seat].collection:
            raise RuleViolation(
                "CARD_NOT_IN_COLLECTION", f"Card {card} is not in your collection."
            )
        if CARDS[card].kind in _kinds(state.packet):
            raise RuleViolation(
                "KIND_ALREADY_IN_PACKET",
                f"The packet already holds a {CARDS[card].kind.name}.",
            )
        return PacketPassed(seat, card, (seat + state.direction) % state.players)

    def _buy(
        self, state: CubosaursState, seat: int, tile_id: int, card: int | None
    ) -> list[Event]:
        if not state.advanced:
            raise RuleViolation(
                "ADVANCED_MODE_ONLY", "DNA tiles are only in the advanced mode."
            )
        if not 0 <= tile_id < TILE_COUNT:
            raise InvalidCommand("TILE_OUT_OF_RANGE", f"There is no tile {tile_id}.")
        if card is not None and not 0 <= card < CARD_COUNT:
            raise InvalidCommand("CARD_OUT_OF_RANGE", f"There is no card {card}.")
        if state.bought:
            raise RuleViolation(
                "ALREADY_BOUGHT_THIS_TURN", "You may buy one DNA tile per turn."
            )
        if tile_id not in state.offer:
            raise RuleViolation("TILE_NOT_ON_OFFER", f"Tile {tile_id} is not on offer.")
        tile = TILES[tile_id]
        if state.seats[seat].tokens < tile.cost:
            raise RuleViolation(
                "NOT_ENOUGH_DNA_TOKENS", f"{tile.name} costs {tile.cost} DNA tokens."
            )
        events: list[Event] = [
            TileBought(
                seat,
                tile_id,
                cost=tile.cost,
                points=tile.points if tile.effect is Effect.GAIN_POINTS else 0,
                card=card,
                removed=tile.effect is Effect.DISCARD_OWN_CARD,
            )
        ]
        match tile.effect:
            case Effect.DISCARD_OWN_CARD:
                if card is None or card not in state.seats[seat].collection:
                    raise RuleViolation(
                        "TARGET_NOT_IN_COLLECTION",
                        f"{tile.name} needs a card of your collection.",
                    )
            case Effect.TAKE_CARD:
                owner = None if card is None else _owner(state, card)
                if card is None or owner is None or owner == seat:
                    raise RuleViolation(
                        "TARGET_NOT_IN_OTHER_COLLECTION",
                        f"{tile.name} needs a card of another player's collection.",
                    )
                after = self.evolve(state, events[0])
                events += self._pay_dna(after, seat, (card,))
            case _:
                if card is not None:
                    raise RuleViolation(
                        "TILE_TAKES_NO_CARD", f"{tile.name} takes no target card."
                    )
        return events

    @staticmethod
    def _end_turn(state: CubosaursState) -> TurnEnded:
        return TurnEnded(state.turn, (state.turn + state.direction) % state.players)

    @staticmethod
    def _pay_dna(state: CubosaursState, seat: int, cards: Iterable[int]) -> list[Event]:
        """The DNA tokens ``seat`` earns for receiving ``cards`` (advanced
        mode): from the supply, and what it lacks as a debt to settle."""
        owed = _dna(cards) if state.advanced else 0
        if owed == 0:
            return []
        paid = min(owed, state.supply)
        events: list[Event] = []
        if paid:
            events.append(DnaTokensGained(seat, paid))
        if owed > paid:
            events.append(DnaTokensOwed(seat, owed - paid))
        return events

    # -- what follows on its own --------------------------------------------

    def _continue(
        self, state: CubosaursState, events: list[Event], rng: Rng
    ) -> tuple[list[Event], CubosaursState]:
        """``events`` followed by every step that needs no decision: settling
        a debt nobody can pay, ending a turn when no purchase is possible,
        drawing for an empty packet, scoring and dealing rounds; and the
        state after them all."""
        events = list(events)
        state = self._fold(state, events)
        while True:
            step = self._next_step(state, rng)
            if not step:
                return events, state
            state = self._fold(state, step)
            events += step

    def _next_step(self, state: CubosaursState, rng: Rng) -> list[Event]:
        if state.phase in (Phase.OVER, Phase.SETUP):
            return []
        if state.debts:
            debt = state.debts[0]
            if self._token_holders(state, debt.seat):
                return []
            return [DnaTokensForgone(debt.seat, debt.amount)]
        if state.phase is Phase.ACTED:
            if self._purchases(state, state.turn):
                return []
            return [self._end_turn(state)]
        if state.packet:
            return []
        if state.deck:
            return [CardDrawn(state.turn, state.deck[0])]
        return self._end_round(state, rng)

    def _end_round(self, state: CubosaursState, rng: Rng) -> list[Event]:
        scores = score_round(
            [s.collection for s in state.seats],
            [s.tiles for s in state.seats],
            [s.instant for s in state.seats],
        )
        scored = RoundScored(state.round, scores)
        if state.round >= state.rounds:
            token_points = tuple(
                s.tokens // 2 if state.advanced else 0 for s in state.seats
            )
            totals = tuple(
                _total(s) + score.total + points
                for s, score, points in zip(
                    state.seats, scores, token_points, strict=True
                )
            )
            # A seat that left ranks below every seat still in.
            staying = {s: t for s, t in enumerate(totals) if s not in state.withdrawn}
            winners, result = highest(staying)
            return [scored, GameScored(token_points, totals, winners, result)]
        after = self.evolve(state, scored)
        first = min(range(state.players), key=lambda s: (_total(after.seats[s]), s))
        return [
            scored,
            *self._deal(after, rng, state.round + 1, first, -state.direction),
        ]

    def _fold(self, state: CubosaursState, events: Iterable[Event]) -> CubosaursState:
        for event in events:
            state = self.evolve(state, event)
        return state

    # -- evolve -------------------------------------------------------------

    def evolve(self, state: CubosaursState, event: Event) -> CubosaursState:
        # The cases are tried in order: a turn's events first, the most
        # frequent (TurnEnded, four events in ten) at the top.
        match event:
            case TurnEnded(next_seat=next_seat):
                return replace(state, turn=next_seat, phase=Phase.TURN, bought=False)
            case PacketPassed(seat=seat, card=card):
                collection = without(state.seats[seat].collection, card)
                return replace(
                    state,
                    seats=_seats_with(state, seat, collection=collection),
                    packet=(*state.packet, card),
                    phase=Phase.ACTED,
                )
            case CardDrawn(card=card):
                return replace(state, deck=state.deck[1:], packet=(card,))
            case PacketTaken(seat=seat, cards=cards):
                collection = state.seats[seat].collection + cards
                return replace(
                    state,
                    seats=_seats_with(state, seat, collection=collection),
                    packet=(),
                    phase=Phase.ACTED,
                )
            case DnaTokensGained(seat=seat, amount=amount, from_seat=source):
                if source is None:
                    state = replace(state, supply=state.supply - amount)
                else:
                    state = self._change(
                        state, source, tokens=state.seats[source].tokens - amount
                    )
                    state = replace(state, debts=state.debts[1:])
                return self._change(
                    state, seat, tokens=state.seats[seat].tokens + amount
                )
            case TileBought():
                return self._bought(state, event)
            case RoundDealt():
                return replace(
                    state,
                    round=event.round,
                    phase=Phase.TURN,
                    turn=event.first_seat,
                    direction=event.direction,
                    # A player's copy has sizes only: as many unseen cards.
                    deck=event.deck or (UNSEEN,) * event.deck_size,
                    out_of_play=event.out_of_play or (UNSEEN,) * event.out_of_play_size,
                    packet=(),
                    discarded=(),
                    seats=tuple(
                        replace(s, collection=cl.cards, tiles=(), instant=0)
                        for s, cl in zip(state.seats, event.collections, strict=True)
                    ),
                    offer=event.offer,
                    box=event.box,
                    bought=False,
                    debts=(),
                )
            case DnaTokensOwed(seat=seat, amount=amount):
                return replace(state, debts=(*state.debts, Debt(seat, amount)))
            case DnaTokensForgone():
                return replace(state, debts=state.debts[1:])
            case RoundScored(scores=scores):
                return replace(
                    state,
                    seats=tuple(
                        replace(s, scores=(*s.scores, score.total))
                        for s, score in zip(state.seats, scores, strict=True)
                    ),
                )
            case GameScored(token_points=points, winners=winners, result=result):
                return replace(
                    state,
                    phase=Phase.OVER,
                    token_points=points,
                    winners=winners,
                    result=result,
                )
            case PlayerWithdrew(seat=seat):
                return replace(state, withdrawn=(*state.withdrawn, seat))
            case _:
                return state

    @staticmethod
    def _cards(state: CubosaursState, seat: int) -> tuple[int, ...]:
        return state.seats[seat].collection

    @staticmethod
    def _change(
        state: CubosaursState,
        seat: int,
        *,
        collection: tuple[int, ...] | None = None,
        tokens: int | None = None,
        tiles: tuple[int, ...] | None = None,
        instant: int | None = None,
    ) -> CubosaursState:
        old = state.seats[seat]
        seats = _seats_with(
            state,
            seat,
            collection=old.collection if collection is None else collection,
            tokens=old.tokens if tokens is None else tokens,
            tiles=old.tiles if tiles is None else tiles,
            instant=old.instant if instant is None else instant,
        )
        return replace(state, seats=seats)

    def _bought(self, state: CubosaursState, event: TileBought) -> CubosaursState:
        seat, card = event.seat, event.card
        buyer = state.seats[seat]
        state = self._change(
            state,
            seat,
            tokens=buyer.tokens - event.cost,
            tiles=(*buyer.tiles, event.tile),
            instant=buyer.instant + event.points,
        )
        state = replace(
            state,
            supply=state.supply + event.cost,
            offer=without(state.offer, event.tile),
            bought=True,
        )
        if card is None:
            return state
        if event.removed:
            state = self._change(
                state, seat, collection=without(self._cards(state, seat), card)
            )
            return replace(state, discarded=(*state.discarded, card))
        owner = _owner(state, card)
        if owner is not None:
            collection = without(self._cards(state, owner), card)
            state = self._change(state, owner, collection=collection)
        return self._change(state, seat, collection=(*self._cards(state, seat), card))

    # -- the end ------------------------------------------------------------

    def is_terminal(self, state: CubosaursState) -> bool:
        return state.phase is Phase.OVER

    def outcome(self, state: CubosaursState) -> Outcome:
        return Outcome(state.winners, state.result)

    @staticmethod
    def totals(state: CubosaursState) -> tuple[int, ...]:
        """Every seat's total: finished rounds plus (at the end) token points."""
        points = state.token_points or (0,) * state.players
        return tuple(_total(s) + p for s, p in zip(state.seats, points, strict=True))

    # -- views --------------------------------------------------------------

    def view(self, state: CubosaursState, viewer: Viewer) -> View:
        admin = viewer.sees_everything
        provisional = score_round(
            [s.collection for s in state.seats],
            [s.tiles for s in state.seats],
            [s.instant for s in state.seats],
        )
        totals = self.totals(state)
        points = state.token_points or (0,) * state.players
        return View(
            round=state.round,
            rounds=state.rounds,
            advanced=state.advanced,
            phase=state.phase,
            turn=state.turn,
            direction=state.direction,
            packet=tuple(CARDS[c] for c in state.packet),
            players=tuple(
                PlayerView(
                    seat=seat,
                    collection=tuple(CARDS[c] for c in s.collection),
                    dna_tokens=s.tokens,
                    tiles=tuple(TILES[t] for t in s.tiles),
                    round_score=provisional[seat],
                    scores=s.scores,
                    token_points=points[seat],
                    total=totals[seat],
                )
                for seat, s in enumerate(state.seats)
            ),
            deck_size=len(state.deck),
            out_of_play_size=len(state.out_of_play),
            discarded=tuple(CARDS[c] for c in state.discarded),
            offer=tuple(TILES[t] for t in state.offer),
            tiles_in_box=len(state.box),
            dna_supply=state.supply if state.advanced else 0,
            bought_this_turn=state.bought,
            debts=state.debts,
            deck=state.deck if admin else (),
            out_of_play=state.out_of_play if admin else (),
        )

    def redact(self, event: Event, viewer: Viewer) -> Event:
        if isinstance(event, RoundDealt) and not viewer.sees_everything:
            return dataclasses.replace(event, deck=(), out_of_play=())
        return event


# -- positions ----------------------------------------------------------------


def _round_direction(number: int) -> int:
    """Round 1 passes to seat + 1, and each round the other way from the last."""
    return 1 if number % 2 else -1


def _validate_position(
    position: Position, players: int, options: Options, rounds: int
) -> None:
    """A position's every field within the game, as a normal game's events
    would leave it at the start of a seat's turn, but for the deck, which
    may be longer than a deal makes it (README: a tutorial's small
    collections); the lifecycle then checks that it is not over and a seat
    may act."""
    if not 1 <= position.round <= rounds:
        raise position_invalid(
            "round", f"Round {position.round} is not one of the game's 1 to {rounds}."
        )
    if len(position.players) != players:
        raise position_invalid(
            "players",
            f"The position has {len(position.players)} players for {players} seats.",
        )
    if not 0 <= position.turn < players:
        raise position_invalid("turn", no_such_seat(position.turn, players))
    own = _round_direction(position.round)
    if position.direction not in (0, own):
        raise position_invalid(
            "direction",
            f"Round {position.round} passes {own:+d} (0 says so too): each round "
            "passes the other way from the last, round 1 to seat + 1.",
        )
    for seat, player in enumerate(position.players):
        _validate_scores(seat, player, position.round)
    _validate_cards(position, players)
    if options.advanced:
        _validate_dna(position, players)
    else:
        _validate_basic(position)


def _validate_scores(seat: int, player: PlayerPosition, number: int) -> None:
    field = f"players[{seat}].scores"
    if len(player.scores) != number - 1:
        raise position_invalid(
            field,
            f"In round {number} every player has {number - 1} finished round "
            f"scores; seat {seat_number(seat)} has {len(player.scores)}.",
        )
    if any(abs(score) > ROUND_SCORE_LIMIT for score in player.scores):
        raise position_invalid(
            field,
            f"A round scores -{ROUND_SCORE_LIMIT} to {ROUND_SCORE_LIMIT} "
            f"(seat {seat_number(seat)}: {list(player.scores)}).",
        )


def _card_places(position: Position) -> list[tuple[str, tuple[int, ...]]]:
    """Every place of a position that holds cards, with its field."""
    return [
        *(
            (f"players[{seat}].collection", player.collection)
            for seat, player in enumerate(position.players)
        ),
        ("packet", position.packet),
        ("discarded", position.discarded),
        ("deck", position.deck),
    ]


def _distinct(
    places: Iterable[tuple[str, tuple[int, ...]]], count: int, what: str
) -> set[int]:
    """The ids ``places`` hold, each refused (naming its place) unless it is
    0 to ``count - 1`` and in no other place."""
    seen: set[int] = set()
    for field, ids in places:
        for item in ids:
            if not 0 <= item < count:
                raise position_invalid(
                    field, f"There is no {what} {item} (0 to {count - 1})."
                )
            if item in seen:
                raise position_invalid(field, f"The {what} {item} is in two places.")
            seen.add(item)
    return seen


def _validate_cards(position: Position, players: int) -> None:
    """Every card in one place at most, the round's pool exactly 10 per
    player, a packet of distinct kinds, and something to play."""
    seen = _distinct(_card_places(position), CARD_COUNT, "card")
    pool = CARDS_PER_PLAYER * players
    if len(seen) != pool:
        raise position_invalid(
            "deck",
            f"A round of {players} players uses {pool} cards: the collections, "
            f"the packet, the discarded cards and the deck hold {len(seen)}.",
        )
    if len(_kinds(position.packet)) != len(position.packet):
        raise position_invalid("packet", "The packet holds two cards of one kind.")
    if not position.packet and not position.deck:
        raise position_invalid(
            "packet",
            "With an empty packet and an empty deck the round is over: give the "
            "seat to act a packet, or the deck a card.",
        )


def _validate_basic(position: Position) -> None:
    """The basic mode has no DNA tokens or tiles (nor cards they discard)."""
    if position.offer:
        raise position_invalid("offer", "The basic mode has no DNA tiles.")
    for seat, player in enumerate(position.players):
        if player.tiles:
            raise position_invalid(
                f"players[{seat}].tiles", "The basic mode has no DNA tiles."
            )
        if player.dna_tokens:
            raise position_invalid(
                f"players[{seat}].dna_tokens", "The basic mode has no DNA tokens."
            )
    if position.discarded:
        raise position_invalid(
            "discarded", "Only Extinction Event (advanced mode) discards."
        )


def _validate_dna(position: Position, players: int) -> None:
    """Every tile in one place at most, players + 1 dealt this round, one
    discarded card per Extinction Event bought, and the seats' tokens from
    the game's 40."""
    places = [("offer", position.offer)] + [
        (f"players[{seat}].tiles", p.tiles) for seat, p in enumerate(position.players)
    ]
    seen = _distinct(places, TILE_COUNT, "tile")
    if len(seen) != players + 1:
        raise position_invalid(
            "offer",
            f"A round deals {players + 1} DNA tiles; the offer and the tiles "
            f"bought hold {len(seen)}.",
        )
    if len(position.discarded) != int(EXTINCTION in seen - set(position.offer)):
        raise position_invalid(
            "discarded",
            "Extinction Event bought this round discards one card; else none is.",
        )
    held = 0
    for seat, player in enumerate(position.players):
        held += player.dna_tokens
        if player.dna_tokens < 0 or held > DNA_TOKENS:
            raise position_invalid(
                f"players[{seat}].dna_tokens",
                f"The players hold 0 to {DNA_TOKENS} DNA tokens in all; seat "
                f"{seat_number(seat)} holds {player.dna_tokens}, {held} so far.",
            )


def _from_position(state: CubosaursState, position: Position) -> CubosaursState:
    """``state`` (before any deal) at ``position``: the start of the turn
    of its seat to act."""
    placed = {c for _, cards in _card_places(position) for c in cards}
    bought = {t for p in position.players for t in p.tiles}
    out_of_play = tuple(c for c in range(CARD_COUNT) if c not in placed)
    unseen = position.deck.count(UNSEEN)
    if unseen:  # a player's copy: the deck's cards are among those not placed
        out_of_play = (UNSEEN,) * (len(out_of_play) - unseen)
    return replace(
        state,
        round=position.round,
        phase=Phase.TURN,
        turn=position.turn,
        direction=_round_direction(position.round),
        deck=position.deck,
        out_of_play=out_of_play,
        packet=position.packet,
        discarded=position.discarded,
        seats=tuple(
            SeatState(
                collection=p.collection,
                tokens=p.dna_tokens,
                tiles=p.tiles,
                instant=sum(
                    TILES[t].points
                    for t in p.tiles
                    if TILES[t].effect is Effect.GAIN_POINTS
                ),
                scores=p.scores,
            )
            for p in position.players
        ),
        supply=DNA_TOKENS - sum(p.dna_tokens for p in position.players),
        offer=position.offer,
        box=tuple(
            t for t in range(TILE_COUNT) if t not in bought and t not in position.offer
        )
        if state.advanced
        else (),
    )


class CubosaursRulesV2(CubosaursRules):
    """Rules version 2, for the games created under it: a seat that left
    stayed in the ranking (no :class:`PlayerWithdrew`): when its collection
    scored the highest total, the win went to nobody (the lifecycle leaving
    it out of the winners). Its events' schema-1 forms are upcast."""

    rules_version: ClassVar[str] = "2"

    def leave(
        self, state: CubosaursState, seat: int, seats_in: tuple[int, ...]
    ) -> list[Event]:
        return []


class CubosaursRulesV1(CubosaursRulesV2):
    """Rules version 1, for the games created under it: version 2, but 2
    players played 3 rounds unless the options said otherwise (a variant
    one review reports; the rulebook plays two at every player count)."""

    rules_version: ClassVar[str] = "1"

    def default_rounds(self, players: int) -> int:
        return 3 if players == 2 else DEFAULT_ROUNDS


RULES = CubosaursRules()
RULES_V2 = CubosaursRulesV2()
RULES_V1 = CubosaursRulesV1()
