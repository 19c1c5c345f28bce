"""Escaping Extinction: the cooperative race to build Dr Raptor's Rocket.

Read top-down, like the rulebook:

1. Shape. 1-4 players share the four Dinos (Terry, Rex, Sara, Long Neck,
   always taking their turns in that order): four players one each, three
   players one each and the fourth to seat 0 (or to all of them, an
   option), two players two each, one player all four. Chance: the face-down
   World, three shuffled decks and a six-sided die. Nobody knows a
   face-down tile or a deck order; everything else is open.
2. Set-up. The 18 terrain tiles lie face down around the Oasis (a radius-2
   hex map); the Meteor deck is shuffled the special way (three piles with
   one Earthquake each, the 5-card pile on top); the first Rocket Docket
   card is revealed; every Dino starts full of Food on the Oasis.
3. A turn. Up to two actions - Travel, Explore, Resupply, Collect a Rocket
   Part (what a face-up Rocket Docket card asks) and Sara's Heal Teammates -
   plus, for no action, trading with a Dino on the same tile, healing with
   Vines and playing held Exploration cards. A Dino reduced to 0 Health is
   Injured: its turn ends at once and it acts again only once healed.
4. A round is every Dino's turn, then one Meteor card: the Meteor moves
   (an Earthquake moves it back and reshuffles every unoccupied tile but
   the Oasis), and some cards carry a hazard.
5. The end. 5 Rocket Parts and 8 Wood on the Launchpad with all four Dinos
   on the Oasis wins for everyone; the Meteor reaching Earth, or a Meteor
   card needed from an empty deck, loses for everyone.

The rules are read in that order, in five modules of this folder:
``readings`` (who controls which Dino, small readings of the state, and the
end: ``the_end``, checked after every event ``decide`` emits and recorded as
``RocketLaunched`` or ``MeteorHitEarth``), ``positions`` (setting up, from
the rulebook's start or from a position, and checking a position),
``legality`` (who may act: the candidate commands, and the checks, one per
command type, from a table), this module (the rules class: ``_check`` for
seat, turn and pending decision, then ``decide``, a ``match`` over the
command, played out on a scratch table that applies every event as it is
emitted, then settled: ending a turn, passing to the next Dino, drawing the
Meteor card; views and redaction), and ``fold`` (``evolve``, the pure fold,
which decides nothing). Rules versions 2 (``RULES_V2``: trades without
consent) and 1 (``RULES_V1``) close this module.

Consent (version 3): a trade from a Dino the sending seat does not control
is only offered (``TradeOffered``); that Dino's seat answers with
``AcceptTrade`` or ``DeclineTrade``, and the offer lapses when the turn
ends (``_Table.lapse``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from domain.chance import Rng
from domain.errors import (
    InvalidCommand,
    NotYourSeat,
    RuleViolation,
)
from domain.escaping_extinction.bots import heuristic_bot
from domain.escaping_extinction.content import (
    CONTENT,
    CardEffect,
    DieColour,
    DieFace,
    Dino,
    MeteorHazard,
    Resource,
    Terrain,
)
from domain.escaping_extinction.fold import (
    evolve,
)
from domain.escaping_extinction.legality import (
    action_candidates,
    check_accept,
    check_rule,
    decision_candidates,
    free_candidates,
    offered_trade,
)
from domain.escaping_extinction.model import (
    COMMAND_TYPES,
    EVENT_TYPES,
    AcceptTrade,
    ActionKind,
    ActionTaken,
    CardGiven,
    CollectRocketPart,
    Command,
    DeclineTrade,
    DieRolled,
    DinoControl,
    DinoDamaged,
    DinoHealed,
    DinoReturnedToOasis,
    DinosHandedOver,
    DinoState,
    DinoTravelled,
    EarthquakeStruck,
    EndTurn,
    Event,
    ExplorationCardDiscarded,
    ExplorationCardDrawn,
    ExplorationCardKept,
    ExplorationCardPlayed,
    ExplorationCardRedrawn,
    ExplorationDeckReshuffled,
    Explore,
    ExtraActionGained,
    GiveCard,
    GiveItem,
    HealTeammates,
    HealWithVines,
    ItemGiven,
    KeepCard,
    LavaFlowPlaced,
    LeaveResource,
    LeaveSecretCaves,
    MakeRoom,
    MeteorCardDrawn,
    MeteorDeckRanOut,
    MeteorHitEarth,
    MeteorMoved,
    Options,
    Pending,
    PlaceSecretCave,
    PlaceView,
    PlayCard,
    Position,
    RedrawCard,
    RedrawDeclined,
    RedrawOffered,
    ResourceGained,
    ResourceLeft,
    ResourceReturned,
    ResourceTaken,
    Resupplied,
    Resupply,
    RocketDocketCardRevealed,
    RocketDocketClosed,
    RocketLaunched,
    RocketPartCollected,
    RollPurpose,
    RoomMade,
    RoomNeeded,
    Scenario,
    SecretCavePlacementOffered,
    SecretCavesLeft,
    SecretCavesPlaced,
    Source,
    State,
    Supply,
    TarpitHeld,
    TileRevealed,
    TokenReturned,
    TradeAccepted,
    TradeDeclined,
    TradeOffered,
    TradeOfferLapsed,
    Travel,
    TravelMode,
    TurnBegan,
    TurnEnded,
    View,
    VineSpent,
    WorldSetUp,
    earthquake_struck_v1_to_v2,
    tile_revealed_v1_to_v2,
    token_returned_v1_to_v2,
    turn_began_v1_to_v2,
    world_set_up_v1_to_v2,
)
from domain.escaping_extinction.positions import (
    fresh_dinos,
    fresh_places,
    position_set_up,
    position_state,
    redacted_position,
    turn_began,
    validate_position,
    world_set_up,
)
from domain.escaping_extinction.readings import (
    ALL_DECISIONS,
    ANSWERS,
    DECISIONS,
    DINOS,
    ESCAPED,
    GAIN_RESOURCE,
    OASIS,
    TRADES,
    controls,
    current_dino,
    dino_control,
    dino_name,
    dino_of,
    fixed_order,
    food_room,
    in_supply,
    max_health,
    meteor_shuffle,
    picked_up,
    satchel_room,
    seats_of,
    terrain_at,
    the_end,
)
from domain.escaping_extinction.search import SEARCH
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
from domain.seats import seat_number

# -- the scratch table decide plays on ------------------------------------------


class _Table:
    """The state as events are emitted, and the chance ``decide`` may draw."""

    def __init__(self, state: State, rng: Rng) -> None:
        self.state = state
        self.events: list[Event] = []
        self.rng = rng

    def emit(self, *events: Event) -> None:
        for event in events:
            if isinstance(event, TurnEnded):
                self.lapse()
            self.events.append(event)
            self.state = evolve(self.state, event)
            # The end is checked after every event, and recorded at once.
            end = the_end(self.state, event)
            if end is not None:
                self.lapse()
                self.emit(end)

    def lapse(self) -> None:
        """An unanswered trade offer lapses (the turn or the game ends)."""
        offer = self.state.offer
        if offer is not None:
            self.emit(TradeOfferLapsed(offer.dino))

    @property
    def over(self) -> bool:
        return bool(self.state.result)

    def dino(self, dino: Dino) -> DinoState:
        return dino_of(self.state, dino)

    def roll(self, dino: Dino, purpose: RollPurpose) -> DieFace:
        scenario = self.state.scenario
        used = self.state.dice_used
        if scenario is not None and used < len(scenario.die_faces):
            face = scenario.die_faces[used]
        else:
            face = self.rng.roll(len(CONTENT.die))
        die = CONTENT.die[face]
        self.emit(DieRolled(dino, purpose, face, die.number, die.colour))
        return die

    def damage(self, dino: Dino, amount: int) -> None:
        health = self.dino(dino).health
        amount = min(amount, health)
        if amount > 0:
            self.emit(DinoDamaged(dino, amount, health - amount))

    def heal(self, dino: Dino, amount: int) -> None:
        health = self.dino(dino).health
        amount = min(amount, max_health(dino) - health)
        if amount > 0:
            self.emit(DinoHealed(dino, amount, health + amount))


# -- the rules -------------------------------------------------------------------


#: The longest Meteor track ``Options.meteor_track_length`` may ask for.
MAX_TRACK_LENGTH = 20


class EscapingExtinctionRules(GameRules[State, Command, Event, View]):
    """Escaping Extinction: Based on a True Story."""

    game_type: ClassVar[str] = "escaping_extinction"
    title: ClassVar[str] = "Escaping Extinction"
    rules_version: ClassVar[str] = "4"
    min_players: ClassVar[int] = 1
    max_players: ClassVar[int] = 4
    options_type: ClassVar[type] = Options
    scenario_type: ClassVar[type] = Scenario
    position_type: ClassVar[type | None] = Position
    state_type: ClassVar[type] = State
    view_type: ClassVar[type] = View
    command_types: ClassVar[tuple[type, ...]] = COMMAND_TYPES
    # Set up front; a seat leaving hands its Dinos over.
    character_events: ClassVar[frozenset[type] | None] = frozenset({DinosHandedOver})
    event_types: ClassVar[tuple[type, ...]] = EVENT_TYPES
    bots: ClassVar[Mapping[str, Bot]] = {"heuristic": heuristic_bot}
    search: ClassVar[Search | None] = SEARCH
    upcasters: ClassVar[Mapping[tuple[str, int], Upcaster]] = {
        ("WorldSetUp", 1): world_set_up_v1_to_v2,
        ("TurnBegan", 1): turn_began_v1_to_v2,
        ("TileRevealed", 1): tile_revealed_v1_to_v2,
        ("TokenReturned", 1): token_returned_v1_to_v2,
        ("EarthquakeStruck", 1): earthquake_struck_v1_to_v2,
    }
    cooperative: ClassVar[bool] = True
    #: A trade from a Dino the sending seat does not control is an offer its
    #: seat accepts or declines (version 3 on); before, it happened at once.
    trades_need_consent: ClassVar[bool] = True

    # -- configuration and set-up -------------------------------------------

    def validate_config(self, config: GameConfig[State]) -> None:
        track = config.options.meteor_track_length
        if track and not CONTENT.track_length < track <= MAX_TRACK_LENGTH:
            raise InvalidCommand(
                "METEOR_TRACK_OUT_OF_RANGE",
                f"The Meteor track is the rulebook's (0) or {CONTENT.track_length + 1} "
                f"to {MAX_TRACK_LENGTH} spaces long, not {track}.",
                "options.meteor_track_length",
            )
        scenario = config.scenario
        if scenario is None:
            return

        def permutation(given: Sequence[Any], of: Sequence[Any], what: str) -> None:
            if given and sorted(given) != sorted(of):
                raise InvalidCommand(
                    "SCENARIO_INVALID", f"The scenario's {what} is not a full order."
                )

        def subset(given: Sequence[str], of: Sequence[str], what: str) -> None:
            if len(set(given)) != len(given) or not set(given) <= set(of):
                raise InvalidCommand(
                    "SCENARIO_INVALID", f"The scenario's {what} names unknown ids."
                )

        permutation(scenario.layout, CONTENT.tile_order, "layout")
        permutation(scenario.meteor_deck, CONTENT.meteor_order, "Meteor deck")
        permutation(
            scenario.rocket_docket_deck, CONTENT.docket_order, "Rocket Docket deck"
        )
        permutation(
            scenario.exploration_deck, CONTENT.exploration_order, "Exploration deck"
        )
        if any(face not in CONTENT.die for face in scenario.die_faces):
            raise InvalidCommand(
                "SCENARIO_INVALID", "The scenario's die faces must be 1 to 6."
            )
        for order in scenario.earthquake_orders:
            subset(order.tiles, CONTENT.tile_order, "Earthquake order")
        for cards in scenario.exploration_reshuffles:
            subset(cards.cards, CONTENT.exploration_order, "Exploration reshuffle")
        if scenario.position is not None:
            validate_position(
                scenario.position, scenario, config.options.meteor_track_length
            )

    def initial_state(self, config: GameConfig[State]) -> State:
        options: Options = config.options
        dinos = fresh_dinos()
        s = CONTENT.supply
        supply = Supply(
            food=s["food"] - sum(d.food for d in dinos),
            wood=s["wood"],
            vines=s["vines"],
            rocket_parts=s["rocket_parts"],
            lava_flows=s["lava_flows"],
        )
        state = State(
            players=config.players,
            control=dino_control(config.players, options.shared_fourth_dino),
            track_length=options.meteor_track_length,
            scenario=config.scenario,
            places=fresh_places(),
            dinos=dinos,
            supply=supply,
            launchpad_wood=0,
            launchpad_parts=0,
            meteor=0,
            meteor_deck=(),
            meteor_drawn=(),
            docket_deck=(),
            docket_open=(),
            docket_done=(),
            exploration_deck=(),
            exploration_discard=(),
        )
        position = self.position(config)
        return state if position is None else position_state(state, position)

    def start(self, state: State, rng: Rng) -> list[Event]:
        scenario = state.scenario or Scenario()
        table = _Table(state, rng)
        if scenario.position is not None:
            # The turn is under way already: only the deal is left to chance.
            table.emit(*position_set_up(scenario.position, rng))
            return table.events
        docket = scenario.rocket_docket_deck or rng.shuffled(CONTENT.docket_order)
        table.emit(
            world_set_up(
                layout=scenario.layout or rng.shuffled(CONTENT.tile_order),
                meteor_deck=scenario.meteor_deck or meteor_shuffle(rng),
                rocket_docket_deck=docket,
                exploration_deck=scenario.exploration_deck
                or rng.shuffled(CONTENT.exploration_order),
            ),
            RocketDocketCardRevealed(docket[0]),
        )
        table.emit(turn_began(table.state, DINOS[0], 1))
        return table.events

    def redact_position(self, position: Position, viewer: Viewer) -> Position:
        if viewer.sees_everything:
            return position
        return redacted_position(position)

    # -- who may do what -------------------------------------------------------

    def active_seats(self, state: State) -> frozenset[int]:
        if state.result or not state.turn_open:
            return frozenset()
        seats = set(state.control[state.current].seats)
        if state.offer is not None:
            seats.update(seats_of(state, state.offer.dino))
        return frozenset(seats)

    def legal_actions(self, state: State, seat: int) -> list[Command]:
        if state.result or not state.turn_open:
            return []
        legal: list[Command] = []
        offer = state.offer
        if offer is not None and seat in seats_of(state, offer.dino):
            # The seat asked for its consent answers (accepting only while
            # the trade can still happen).
            try:
                check_accept(state, offer)
                legal.append(AcceptTrade(offer.dino))
            except (RuleViolation, InvalidCommand):
                pass
            legal.append(DeclineTrade(offer.dino))
        if seat not in state.control[state.current].seats:
            return legal
        # The candidates are all for the Dino whose turn it is, decisions
        # only while one is pending: the rule-specific checks remain.
        for command in self._candidates(state):
            try:
                check_rule(state, command)
                self._check_consent(state, seat, command)
            except (RuleViolation, InvalidCommand):
                continue
            legal.append(command)
        return legal

    def _candidates(self, state: State) -> list[Command]:
        """Every command that may be legal now for the Dino whose turn it is:
        decisions only while one is pending; otherwise its actions (cheap
        filters first), then its free moves. ``_check`` has the last word
        on each."""
        d = current_dino(state)
        if state.pending is not None:
            return decision_candidates(state.pending, d.dino)
        out: list[Command] = []
        if d.health > 0 and state.actions_left > 0:
            out += action_candidates(state, d)
        out += free_candidates(state, d)
        out.append(EndTurn(d.dino))
        return out

    # -- checking a command ----------------------------------------------------

    def _check(self, state: State, seat: int, command: Command) -> None:
        """Raise the reason ``command`` from ``seat`` is refused now, if any."""
        if state.result:
            raise RuleViolation("GAME_OVER", "The game is over.")
        if not isinstance(command, COMMAND_TYPES):
            raise InvalidCommand(
                "UNKNOWN_COMMAND", f"{type(command).__name__} is not a command."
            )
        if isinstance(command, ANSWERS):
            self._check_answer(state, seat, command)
            return
        cur = current_dino(state)
        acting = cur.dino if isinstance(command, TRADES) else command.dino
        if not controls(state, seat, acting):
            raise NotYourSeat(
                "NOT_YOUR_DINO",
                f"Seat {seat_number(seat)} does not control {dino_name(acting)}.",
            )
        if not state.turn_open or (
            command.dino is not cur.dino and not isinstance(command, TRADES)
        ):
            raise RuleViolation(
                "NOT_THIS_DINOS_TURN", f"It is {dino_name(cur.dino)}'s turn."
            )
        pending = state.pending
        if pending is not None:
            if not isinstance(command, DECISIONS[pending.kind]):
                raise RuleViolation(
                    "DECISION_PENDING",
                    f"{dino_name(pending.dino)} must first decide "
                    f"({pending.kind.value.replace('_', ' ')}).",
                )
        elif isinstance(command, ALL_DECISIONS):
            raise RuleViolation("NO_DECISION_PENDING", "There is nothing to decide.")
        check_rule(state, command)
        self._check_consent(state, seat, command)

    def needs_consent(self, state: State, seat: int, command: Command) -> bool:
        """True when ``command`` from ``seat`` is a trade from a Dino the seat
        does not control: its seat must agree (an offer)."""
        return (
            self.trades_need_consent
            and isinstance(command, TRADES)
            and not controls(state, seat, command.dino)
        )

    def _check_consent(self, state: State, seat: int, command: Command) -> None:
        """One offer at a time: another waits for the first to be answered."""
        if state.offer is not None and self.needs_consent(state, seat, command):
            raise RuleViolation(
                "TRADE_OFFER_PENDING",
                f"The trade offered from {dino_name(state.offer.dino)} waits for an "
                "answer.",
            )

    def _check_answer(
        self, state: State, seat: int, command: AcceptTrade | DeclineTrade
    ) -> None:
        offer = state.offer
        if offer is None or offer.dino is not command.dino or not state.turn_open:
            raise RuleViolation(
                "NO_TRADE_OFFER", f"No trade from {dino_name(command.dino)} is offered."
            )
        if not controls(state, seat, command.dino):
            raise NotYourSeat(
                "NOT_YOUR_DINO",
                f"Seat {seat_number(seat)} does not control {dino_name(command.dino)}.",
            )
        if isinstance(command, AcceptTrade):
            check_accept(state, offer)

    # -- deciding ----------------------------------------------------------------

    def decide(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> list[Event]:
        return self.decide_and_evolve(state, seat, command, rng)[0]

    def decide_and_evolve(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> tuple[list[Event], State]:
        self._check(state, seat, command)
        t = _Table(state, rng)
        if self.needs_consent(state, seat, command):
            self._offer(t, command)
        else:
            self._play_command(t, command)
        self._settle(t)
        return t.events, t.state

    @staticmethod
    def _offer(t: _Table, trade: Command) -> None:
        """A trade from another seat's Dino waits for that seat's consent."""
        match trade:
            case GiveItem(dino=dino, recipient=recipient, item=item):
                t.emit(TradeOffered(dino, recipient, item, ""))
            case GiveCard(dino=dino, recipient=recipient, card=card):
                t.emit(TradeOffered(dino, recipient, None, card))

    def _play_command(self, t: _Table, command: Command) -> None:  # noqa: C901 (a flat match table)
        """What ``command`` (checked) does, one case per command type."""
        dino = command.dino
        match command:
            case Travel():
                self._travel(t, command)
            case Explore(gamble=gamble):
                self._explore(t, dino, gamble)
            case Resupply():
                self._resupply(t, dino)
            case CollectRocketPart(card=card):
                self._collect(t, dino, card)
            case HealTeammates():
                self._heal_teammates(t, dino)
            case HealWithVines(target=target):
                t.emit(VineSpent(dino))
                t.heal(target, 1)
            case GiveItem(recipient=recipient, item=item):
                t.emit(ItemGiven(dino, recipient, item))
            case GiveCard(recipient=recipient, card=card):
                t.emit(CardGiven(dino, recipient, card))
            case PlayCard(card=card, target=target):
                self._play(t, dino, card, target)
            case MakeRoom(discard=discard):
                self._resolve_room(t, discard)
            case LeaveResource():
                self._resolve_room(t, None)
            case KeepCard():
                self._keep_card(t, dino)
            case RedrawCard():
                t.emit(ExplorationCardRedrawn(dino, self._pending(t).card))
                self._draw(t, dino)
            case PlaceSecretCave(position=position):
                t.emit(SecretCavesPlaced(t.dino(dino).position, position))
            case LeaveSecretCaves():
                t.emit(SecretCavesLeft(dino))
            case EndTurn():
                t.emit(TurnEnded(dino))
            case AcceptTrade():
                offer = t.state.offer
                if offer is not None:  # _check guarantees one
                    t.emit(TradeAccepted(dino))
                    self._play_command(t, offered_trade(offer))
            case DeclineTrade():
                t.emit(TradeDeclined(dino))

    def _heal_teammates(self, t: _Table, dino: Dino) -> None:
        t.emit(ActionTaken(dino, ActionKind.HEAL_TEAMMATES))
        here = t.dino(dino).position
        for other in DINOS:
            if t.dino(other).position == here:
                t.heal(other, CONTENT.sara_heal)

    def _keep_card(self, t: _Table, dino: Dino) -> None:
        card = self._pending(t).card
        t.emit(RedrawDeclined(dino, card))
        self._follow(t, dino, card)

    @staticmethod
    def _pending(t: _Table) -> Pending:
        pending = t.state.pending
        if pending is None:  # _check guarantees one
            raise RuleViolation("NO_DECISION_PENDING", "There is nothing to decide.")
        return pending

    # Travel: Food, revealing, the Tarpit, the Volcano, Lava Flows, Caves.

    def _travel(self, t: _Table, command: Travel) -> None:
        dino, destination, mode = command.dino, command.destination, command.mode
        origin = t.dino(dino).position
        in_tarpit = terrain_at(t.state, origin) is Terrain.TARPIT
        t.emit(ActionTaken(dino, ActionKind.TRAVEL))
        if mode is TravelMode.PUSH:
            cost = CONTENT.tarpit_push_food
            if t.roll(dino, RollPurpose.TARPIT).number != CONTENT.tarpit_push_needs:
                t.emit(TarpitHeld(dino, cost))
                return
        elif mode is TravelMode.CAVE:
            cost = CONTENT.tarpit_cave_food if in_tarpit else 0
        else:
            cost = CONTENT.tarpit_walk_food if in_tarpit else 1
        t.emit(DinoTravelled(dino, origin, destination, mode, cost))
        self._arrive(t, dino, destination)

    def _arrive(self, t: _Table, dino: Dino, position: int) -> None:
        place = t.state.places[position]
        tile = CONTENT.tile(place.tile)
        if not place.revealed:
            resource = tile.resource
            token = resource is not None and in_supply(t.state.supply, resource) > 0
            t.emit(TileRevealed(position, place.tile, token, resource))
        if tile.terrain is Terrain.VOLCANO:
            t.damage(dino, t.roll(dino, RollPurpose.VOLCANO).number)
        if place.lava:
            t.damage(dino, CONTENT.lava_damage)

    # Explore: the tile's resource, then an Exploration card.

    def _explore(self, t: _Table, dino: Dino, gamble: bool) -> None:
        t.emit(ActionTaken(dino, ActionKind.EXPLORE))
        position = t.dino(dino).position
        place = t.state.places[position]
        resource = CONTENT.tile(place.tile).resource
        if not place.token or resource is None:
            self._draw(t, dino)
            return
        extra = 0
        if gamble:
            if t.roll(dino, RollPurpose.DOUBLE_OR_NOTHING).colour is DieColour.RED:
                t.emit(TokenReturned(position, resource))
                self._draw(t, dino)
                return
            extra = 1
        self._gain(t, dino, resource, 1, extra, draw_after=True)

    def _gain(
        self,
        t: _Table,
        dino: Dino,
        resource: Resource,
        from_tile: int,
        from_supply: int,
        draw_after: bool,
    ) -> None:
        """Take resources one by one; stop at the first that does not fit the
        Satchel, for its owner to decide (Food that does not fit is left)."""
        while from_tile + from_supply > 0:
            source = Source.TILE if from_tile else Source.SUPPLY
            if source is Source.SUPPLY and in_supply(t.state.supply, resource) == 0:
                from_supply = 0
                continue
            d = t.dino(dino)
            fits = (
                food_room(d) > 0 if resource is Resource.FOOD else satchel_room(d) > 0
            )
            if fits:
                t.emit(
                    ResourceTaken(dino, resource)
                    if source is Source.TILE
                    else ResourceGained(dino, resource)
                )
            elif resource is Resource.FOOD:
                t.emit(ResourceLeft(dino, resource, source))
            else:
                t.emit(RoomNeeded(dino, resource, from_tile, from_supply, draw_after))
                return
            if source is Source.TILE:
                from_tile -= 1
            else:
                from_supply -= 1
        if draw_after:
            self._draw(t, dino)

    def _resolve_room(self, t: _Table, discard: Resource | None) -> None:
        pending = self._pending(t)
        dino, resource = pending.dino, pending.resource
        if resource is None:  # a MAKE_ROOM decision always names it
            raise RuleViolation("NO_DECISION_PENDING", "There is nothing to decide.")
        source = Source.TILE if pending.from_tile else Source.SUPPLY
        if discard is None:
            t.emit(ResourceLeft(dino, resource, source))
        else:
            t.emit(RoomMade(dino, discard))
            if source is Source.TILE:
                t.emit(ResourceTaken(dino, resource))
            else:
                t.emit(ResourceGained(dino, resource))
        from_tile = pending.from_tile - (source is Source.TILE)
        from_supply = pending.from_supply - (source is Source.SUPPLY)
        self._gain(t, dino, resource, from_tile, from_supply, pending.draw_after)

    def _draw(self, t: _Table, dino: Dino) -> None:
        if not t.state.exploration_deck:
            discard = t.state.exploration_discard
            if not discard:
                return
            scenario = t.state.scenario
            n = t.state.reshuffles_used
            priority: Sequence[str] = ()
            if scenario is not None and n < len(scenario.exploration_reshuffles):
                priority = scenario.exploration_reshuffles[n].cards
            t.emit(ExplorationDeckReshuffled(fixed_order(discard, priority, t.rng)))
        card = t.state.exploration_deck[0]
        t.emit(ExplorationCardDrawn(dino, card))
        if dino is Dino.TERRY and not t.state.redraw_used:
            t.emit(RedrawOffered(dino, card))
            return
        self._follow(t, dino, card)

    def _follow(self, t: _Table, dino: Dino, card_id: str) -> None:
        """Do what a drawn Exploration card says."""
        card = CONTENT.exploration[card_id]
        if card.keep:
            t.emit(ExplorationCardKept(dino, card_id))
            return
        t.emit(ExplorationCardDiscarded(card_id))
        d = t.dino(dino)
        match card.effect:
            case CardEffect.GAIN_FOOD | CardEffect.GAIN_WOOD | CardEffect.GAIN_VINE:
                resource = GAIN_RESOURCE[card.effect]
                self._gain(t, dino, resource, 0, card.amount, draw_after=False)
            case CardEffect.DAMAGE:
                t.damage(dino, card.amount)
            case CardEffect.HEAL:
                t.heal(dino, card.amount)
            case CardEffect.LOSE_FOOD:
                for _ in range(min(card.amount, d.food)):
                    t.emit(ResourceReturned(dino, Resource.FOOD))
            case CardEffect.RETURN_TO_OASIS:
                if d.position != OASIS:
                    t.emit(DinoReturnedToOasis(dino, d.position))
            case CardEffect.REVEAL_ROCKET_DOCKET:
                if t.state.supply.rocket_parts > 0 and t.state.docket_deck:
                    t.emit(RocketDocketCardRevealed(t.state.docket_deck[0]))
            case CardEffect.LAVA_FLOW:
                if (
                    t.state.supply.lava_flows > 0
                    and not t.state.places[d.position].lava
                ):
                    t.emit(LavaFlowPlaced(d.position))
            case CardEffect.SECRET_CAVES:
                t.emit(SecretCavePlacementOffered(dino))
            case _:
                raise ValueError(f"{card.effect} is a card kept for later")

    def _play(self, t: _Table, dino: Dino, card_id: str, target: Dino) -> None:
        card = CONTENT.exploration[card_id]
        t.emit(ExplorationCardPlayed(dino, card_id, target))
        match card.effect:
            case CardEffect.TRAIL_MIX:
                self._gain(t, dino, Resource.FOOD, 0, card.amount, draw_after=False)
            case CardEffect.HEALING_HERBS:
                t.heal(target, card.amount)
            case CardEffect.BURST_OF_ENERGY:
                t.emit(ExtraActionGained(dino))
            case _:
                raise ValueError(f"{card.effect} is not a card kept for later")

    # Resupply and the Rocket Docket.

    def _resupply(self, t: _Table, dino: Dino) -> None:
        t.emit(ActionTaken(dino, ActionKind.RESUPPLY))
        d = t.dino(dino)
        food = min(food_room(d), t.state.supply.food)
        t.emit(Resupplied(dino, food, d.wood, d.rocket_part))
        if d.rocket_part and t.state.supply.rocket_parts > 0 and t.state.docket_deck:
            t.emit(RocketDocketCardRevealed(t.state.docket_deck[0]))

    def _collect(self, t: _Table, dino: Dino, card_id: str) -> None:
        card = CONTENT.docket[card_id]
        t.emit(ActionTaken(dino, ActionKind.COLLECT_ROCKET_PART))
        for resource, n in (
            (Resource.FOOD, card.food),
            (Resource.WOOD, card.wood),
            (Resource.VINE, card.vines),
        ):
            for _ in range(n):
                t.emit(ResourceReturned(dino, resource))
        t.emit(RocketPartCollected(dino, card_id))
        if t.state.supply.rocket_parts == 0 and t.state.docket_open:
            t.emit(RocketDocketClosed(t.state.docket_open))
        t.damage(dino, card.damage)

    # Ending turns and rounds.

    def _settle(self, t: _Table) -> None:
        """End a turn the rules end, then pass to the next Dino, drawing the
        Meteor card after the last, until a Dino can act or the game ends."""
        state = t.state
        cur = current_dino(state)
        if (
            not t.over
            and state.turn_open
            and state.pending is None
            and cur.health == 0
            and not state.waiting_to_heal
        ):
            t.emit(TurnEnded(cur.dino))
        while not t.over and not t.state.turn_open:
            following = t.state.current + 1
            round_ = t.state.round
            if following == len(DINOS):
                self._meteor(t)
                if t.over:
                    return
                following, round_ = 0, round_ + 1
            dino = DINOS[following]
            t.emit(turn_began(t.state, dino, round_))
            d = t.dino(dino)
            if d.health == 0 and d.vines == 0:
                t.emit(TurnEnded(dino))

    def _meteor(self, t: _Table) -> None:
        if not t.state.meteor_deck:
            t.emit(MeteorDeckRanOut())
            return
        card_id = t.state.meteor_deck[0]
        card = CONTENT.meteor[card_id]
        t.emit(MeteorCardDrawn(card_id))
        meteor = t.state.meteor
        if card.hazard is MeteorHazard.EARTHQUAKE:
            self._earthquake(t)
        destination = min(t.state.earth, max(0, meteor + card.advance))
        t.emit(MeteorMoved(meteor, destination))
        if t.over:
            return
        for d in t.state.dinos:
            if card.hazard is MeteorHazard.ASH_RAIN and d.position != OASIS:
                t.damage(d.dino, 1)
            if card.hazard is MeteorHazard.HEATWAVE and d.food > 0:
                t.emit(ResourceReturned(d.dino, Resource.FOOD))

    def _earthquake(self, t: _Table) -> None:
        """Every unoccupied tile but the Oasis is picked up, with its token
        and Lava Flow (back to the Supply), and laid again face down."""
        occupied = {d.position for d in t.state.dinos}
        positions = tuple(p for p in range(1, CONTENT.positions) if p not in occupied)
        tiles = [t.state.places[p].tile for p in positions]
        scenario = t.state.scenario
        n = t.state.earthquakes_used
        priority: Sequence[str] = ()
        if scenario is not None and n < len(scenario.earthquake_orders):
            priority = scenario.earthquake_orders[n].tiles
        layout = fixed_order(tiles, priority, t.rng)
        t.emit(EarthquakeStruck(positions, layout, picked_up(t.state, positions)))

    # -- the end (the_end above decides it) ----------------------------------

    def evolve(self, state: State, event: Event) -> State:
        return evolve(state, event)

    def is_terminal(self, state: State) -> bool:
        return bool(state.result)

    def outcome(self, state: State) -> Outcome:
        if state.result == ESCAPED:
            return Outcome(tuple(range(state.players)), ESCAPED)
        return Outcome((), state.result)

    # -- what a viewer sees ------------------------------------------------------

    def view(self, state: State, viewer: Viewer) -> View:
        see_all = viewer.sees_everything
        places = []
        for i, p in enumerate(state.places):
            q, r = CONTENT.coords[i]
            shown = p.revealed or (see_all and bool(p.tile))
            tile = CONTENT.tile(p.tile) if shown else None
            places.append(
                PlaceView(
                    position=i,
                    q=q,
                    r=r,
                    tile=p.tile if shown else "",
                    terrain=tile.terrain if tile else None,
                    revealed=p.revealed,
                    token=tile.resource if tile and p.token else None,
                    lava=p.lava,
                    cave=p.cave,
                )
            )
        return View(
            round=state.round,
            current_dino=current_dino(state).dino,
            turn_open=state.turn_open,
            actions_left=state.actions_left,
            your_dinos=tuple(
                c.dino for c in state.control if any(viewer.plays(s) for s in c.seats)
            ),
            control=state.control,
            places=tuple(places),
            dinos=state.dinos,
            supply=state.supply,
            launchpad_wood=state.launchpad_wood,
            launchpad_parts=state.launchpad_parts,
            meteor=state.meteor,
            meteor_track_length=state.earth,
            meteor_cards_left=len(state.meteor_deck),
            meteor_drawn=state.meteor_drawn,
            rocket_docket_cards_left=len(state.docket_deck),
            rocket_docket_open=state.docket_open,
            rocket_docket_done=state.docket_done,
            exploration_cards_left=len(state.exploration_deck),
            exploration_discard=state.exploration_discard,
            redraw_used=state.redraw_used,
            pending=state.pending,
            result=state.result,
            offer=state.offer,
        )

    def redact(self, event: Event, viewer: Viewer) -> Event:
        if viewer.sees_everything:
            return event
        match event:
            case WorldSetUp():
                return replace(
                    event,
                    layout=(),
                    meteor_deck=(),
                    rocket_docket_deck=(),
                    exploration_deck=(),
                )
            case EarthquakeStruck():
                return replace(event, layout=())
            case ExplorationDeckReshuffled():
                return ExplorationDeckReshuffled(())
        return event

    # -- a seat leaving --------------------------------------------------------

    def leave(self, state: State, seat: int, seats_in: tuple[int, ...]) -> list[Event]:
        """The team plays on: the leaver's Dinos are handed over. A shared
        Dino stays with its other seats; a Dino of the leaver alone goes to
        the next seat still in after it (upwards, around the table)."""
        after = sorted(seats_in, key=lambda s: (s - seat) % state.players)
        control = []
        for c in state.control:
            seats = tuple(s for s in c.seats if s != seat)
            control.append(DinoControl(c.dino, seats or (after[0],)))
        return [DinosHandedOver(tuple(control))]

    def characters(self, state: State) -> dict[int, str]:
        names: dict[int, list[str]] = {}
        for c in state.control:
            for s in c.seats:
                names.setdefault(s, []).append(CONTENT.dinos[c.dino].name)
        return {s: ", ".join(n) for s, n in names.items()}


def _unrecorded(event: Event) -> Event:
    """``event`` as rules versions 1 to 3 recorded it: without the facts
    their fold worked out (a turn for healing only, a returned token's
    resource, what an Earthquake returned to the Supply)."""
    match event:
        case TurnBegan():
            return replace(event, heal_only=None)
        case TokenReturned():
            return replace(event, resource=None)
        case EarthquakeStruck():
            return replace(event, returned=None)
    return event


def _recalled(state: State, event: Event) -> Event:
    """``event`` of rules versions 1 to 3 with the facts it did not record,
    worked out as their fold did, from ``state`` (the state before it) and
    the content (versions 1 to 3 were played with this content only)."""
    match event:
        case TurnBegan(heal_only=None):
            return replace(event, heal_only=dino_of(state, event.dino).health == 0)
        case TokenReturned(position=position, resource=None):
            place = state.places[position]
            resource = CONTENT.tile(place.tile).resource if place.tile else None
            return replace(event, resource=resource)
        case EarthquakeStruck(positions=positions, returned=None):
            return replace(event, returned=picked_up(state, positions))
    return event


class EscapingExtinctionRulesV3(EscapingExtinctionRules):
    """Rules version 3, for the games created under it: the same rules, but
    three facts were not recorded: that an Injured Dino's turn is for
    healing only (``TurnBegan.heal_only``), the resource of a token Long
    Neck's roll returned (``TokenReturned.resource``) and what an Earthquake
    returned to the Supply (``EarthquakeStruck.returned``). Deciding, it
    leaves them out (None); folding, it works them out as that version's
    fold did, by the rules and the content it was played with."""

    rules_version: ClassVar[str] = "3"

    def start(self, state: State, rng: Rng) -> list[Event]:
        return [_unrecorded(e) for e in super().start(state, rng)]

    def decide_and_evolve(
        self, state: State, seat: int, command: Command, rng: Rng
    ) -> tuple[list[Event], State]:
        events, after = super().decide_and_evolve(state, seat, command, rng)
        return [_unrecorded(e) for e in events], after

    def evolve(self, state: State, event: Event) -> State:
        return evolve(state, _recalled(state, event))


class EscapingExtinctionRulesV2(EscapingExtinctionRulesV3):
    """Rules version 2, for the games created under it: the rules of version
    3, but a trade from any Dino on the tile happened at once, whoever
    controlled it (the table agreed aloud; no offer, no consent)."""

    rules_version: ClassVar[str] = "2"
    trades_need_consent: ClassVar[bool] = False


class EscapingExtinctionRulesV1(
    ImplicitDecisions[State, Command, Event, View], EscapingExtinctionRulesV2
):
    """Rules version 1, for the games created under it: the same rules, but
    the end of the game was not recorded (no :class:`RocketLaunched`, no
    :class:`MeteorHitEarth`); the fold worked it out after every event."""

    rules_version: ClassVar[str] = "1"
    unrecorded: ClassVar[tuple[type, ...]] = (RocketLaunched, MeteorHitEarth)

    def implied(self, state: State, event: Event) -> list[Event]:
        end = the_end(state, event)
        return [] if end is None else [end]


RULES = EscapingExtinctionRules()
RULES_V3 = EscapingExtinctionRulesV3()
RULES_V2 = EscapingExtinctionRulesV2()
RULES_V1 = EscapingExtinctionRulesV1()
