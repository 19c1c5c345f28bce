"""Escaping Extinction's typed shapes: options, scenario, state, commands,
events and views. All frozen dataclasses, mirrored one to one by
``protos/strata/games/escaping_extinction/v1/escaping_extinction.proto``.

A World position is an integer: 0 is the Oasis, 1-6 the inner ring, 7-18
the outer ring (axial coordinates in :class:`PlaceView`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

from domain.escaping_extinction.content import CONTENT

# The enums of the printed content appear in messages too: re-exported.
from domain.escaping_extinction.content import DieColour as DieColour
from domain.escaping_extinction.content import Dino as Dino
from domain.escaping_extinction.content import Resource as Resource
from domain.escaping_extinction.content import Terrain as Terrain


class Item(enum.Enum):
    """Something one Dino can hand to another."""

    FOOD = "food"
    WOOD = "wood"
    VINE = "vine"
    ROCKET_PART = "rocket_part"


class TravelMode(enum.Enum):
    """How a Dino travels."""

    WALK = "walk"  # to an adjacent tile for 1 Food (2 from the Tarpit)
    PUSH = "push"  # out of the Tarpit for 1 Food, if the die shows a 3
    CAVE = "cave"  # through the Secret Cave, no Food (1 from the Tarpit)


class ActionKind(enum.Enum):
    """The actions a turn's two actions can be spent on."""

    TRAVEL = "travel"
    EXPLORE = "explore"
    RESUPPLY = "resupply"
    COLLECT_ROCKET_PART = "collect_rocket_part"
    HEAL_TEAMMATES = "heal_teammates"


class RollPurpose(enum.Enum):
    """Why the die was rolled."""

    TARPIT = "tarpit"
    VOLCANO = "volcano"
    DOUBLE_OR_NOTHING = "double_or_nothing"


class PendingKind(enum.Enum):
    """A decision the game waits for before play goes on."""

    MAKE_ROOM = "make_room"  # a resource does not fit the Satchel
    REDRAW = "redraw"  # Terry may discard the drawn card and draw another
    SECRET_CAVES = "secret_caves"  # choose the tile of the second Secret Cave


class Source(enum.Enum):
    """Where a gained resource comes from."""

    TILE = "tile"
    SUPPLY = "supply"


# -- options and scenario -----------------------------------------------------


@dataclass(frozen=True)
class Options:
    """Choices at creation."""

    # With 3 players: the fourth Dino (Long Neck) is controlled by every
    # seat together when true, by seat 0 alone when false.
    shared_fourth_dino: bool = False
    # A difficulty option (a content variant): the Meteor track's length,
    # Earth's space. 0: the rulebook's track (10 spaces); 11 to 20: a longer
    # track, an easier game.
    meteor_track_length: int = 0


@dataclass(frozen=True)
class TileOrder:
    """An order of terrain tile ids."""

    tiles: tuple[str, ...] = ()


@dataclass(frozen=True)
class CardOrder:
    """An order of card ids."""

    cards: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """Fixed outcomes of chance (admin only). Empty fields are drawn.
    ``position``: a game in progress the game starts from (then the World
    and the decks are the position's, and ``layout``, ``meteor_deck``,
    ``rocket_docket_deck`` and ``exploration_deck`` stay empty)."""

    layout: tuple[str, ...] = ()  # tile ids of positions 1-18
    meteor_deck: tuple[str, ...] = ()  # top first, used as is
    rocket_docket_deck: tuple[str, ...] = ()  # top first
    exploration_deck: tuple[str, ...] = ()  # top first
    die_faces: tuple[int, ...] = ()  # die faces (1-6), in order of rolling
    # For the n-th Earthquake: the picked-up tiles go to the freed positions
    # (lowest first) in the order they appear here.
    earthquake_orders: tuple[TileOrder, ...] = ()
    # For the n-th reshuffle of the Exploration discards: the new deck is
    # the discards in the order they appear here.
    exploration_reshuffles: tuple[CardOrder, ...] = ()
    position: Position | None = None


# -- state --------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """One position of the World."""

    tile: str  # tile id ("" before the World is laid out)
    revealed: bool
    token: bool  # a resource token of the tile's resource lies here
    lava: bool
    cave: bool


@dataclass(frozen=True)
class DinoState:
    """One Dino's card and token."""

    dino: Dino
    position: int
    food: int
    wood: int
    vines: int
    rocket_part: bool
    health: int
    held_cards: tuple[str, ...]  # Exploration cards kept for later


@dataclass(frozen=True)
class Supply:
    """Tokens in the Supply."""

    food: int
    wood: int
    vines: int
    rocket_parts: int
    lava_flows: int


@dataclass(frozen=True)
class Position:
    """A game in progress at the start of a Dino's turn (admin only, in the
    scenario): the game starts from it. Every list of cards names each card
    at most once across the lists; a card named nowhere goes under the
    listed ones of its deck, shuffled at the start (a deck naming no card
    at all is shuffled as at set-up; the Rocket Docket's top card is then
    revealed). See the README's "Starting from a position".

    ``places``: the 19 World positions, the Oasis first (empty: a World
    just laid out, every tile face down); a face-down place may leave its
    tile blank (a tile named nowhere, drawn at the start). ``dinos``: the
    four Dinos in turn order (empty: all on the Oasis, full of Food and
    Health). ``supply``: unset, whatever the rest leaves (set, it must be
    exactly that). ``round``: unset, 1. ``current_dino``: the Dino whose
    turn it is (unset, Terry). ``actions_left``: unset, a whole turn's."""

    places: tuple[Place, ...] = ()
    dinos: tuple[DinoState, ...] = ()
    supply: Supply | None = None
    launchpad_wood: int = 0
    launchpad_parts: int = 0
    meteor: int = 0
    meteor_deck: tuple[str, ...] = ()  # top first (secret)
    meteor_drawn: tuple[str, ...] = ()  # in the order drawn
    rocket_docket_deck: tuple[str, ...] = ()  # top first (secret)
    rocket_docket_open: tuple[str, ...] = ()  # face up
    rocket_docket_done: tuple[str, ...] = ()  # flipped face down
    exploration_deck: tuple[str, ...] = ()  # top first (secret)
    exploration_discard: tuple[str, ...] = ()  # oldest first
    round: int | None = None
    current_dino: Dino | None = None
    actions_left: int | None = None


@dataclass(frozen=True)
class Pending:
    """A decision the current Dino must take before play goes on."""

    kind: PendingKind
    dino: Dino
    resource: Resource | None = None  # MAKE_ROOM: what does not fit
    from_tile: int = 0  # MAKE_ROOM: units still to take from the tile
    from_supply: int = 0  # MAKE_ROOM: units still to take from the Supply
    draw_after: bool = False  # MAKE_ROOM: an Explore card is still to draw
    card: str = ""  # REDRAW: the card drawn


@dataclass(frozen=True)
class DinoControl:
    """Which seats control a Dino."""

    dino: Dino
    seats: tuple[int, ...]


@dataclass(frozen=True)
class TradeOffer:
    """A trade waiting for the consent of the giving Dino's seat (rules
    version 3 on): ``dino`` would hand ``item`` (or, when ``item`` is None,
    its held ``card``) to ``recipient``. Everything in it is public."""

    dino: Dino
    recipient: Dino
    item: Item | None = None
    card: str = ""


#: A tile or a card a viewer does not know, in a state folded from the
#: events it is sent: a face-down tile's id, a deck's card (a deck keeps as
#: many as it has cards, so its size is right).
UNSEEN = ""


@dataclass(frozen=True)
class State:
    """The whole table, secrets included (folded from a player's events,
    what it does not know is :data:`UNSEEN`)."""

    players: int
    control: tuple[DinoControl, ...]
    scenario: Scenario | None
    places: tuple[Place, ...]
    dinos: tuple[DinoState, ...]  # in turn order
    supply: Supply
    launchpad_wood: int
    launchpad_parts: int
    meteor: int
    meteor_deck: tuple[str, ...]
    meteor_drawn: tuple[str, ...]
    docket_deck: tuple[str, ...]
    docket_open: tuple[str, ...]
    docket_done: tuple[str, ...]
    exploration_deck: tuple[str, ...]
    exploration_discard: tuple[str, ...]
    round: int = 0
    current: int = 0  # index of the Dino whose turn it is
    turn_open: bool = False
    actions_left: int = 0
    redraw_used: bool = False
    waiting_to_heal: bool = False  # the turn began Injured: only healing for now
    pending: Pending | None = None
    result: str = ""  # "" while playing, then escaped / meteor_hit_earth / ...
    dice_used: int = 0
    earthquakes_used: int = 0
    reshuffles_used: int = 0
    # A trade from another seat's Dino, waiting for that seat (version 3 on).
    offer: TradeOffer | None = None
    # The Meteor track's length (Options.meteor_track_length; 0: the content's).
    track_length: int = 0

    @property
    def earth(self) -> int:
        """The Meteor track's space of Earth: the game is lost there."""
        return self.track_length or CONTENT.track_length


# -- commands -----------------------------------------------------------------


@dataclass(frozen=True)
class Travel:
    """Spend an action (and Food) to move ``dino`` to ``destination``."""

    dino: Dino
    destination: int
    mode: TravelMode


@dataclass(frozen=True)
class Explore:
    """Take the tile's resource, then draw an Exploration card. Long Neck
    may ``gamble`` on the resource (double or nothing)."""

    dino: Dino
    gamble: bool = False


@dataclass(frozen=True)
class Resupply:
    """On the Oasis: refill Food, unload Wood and a Rocket Part."""

    dino: Dino


@dataclass(frozen=True)
class CollectRocketPart:
    """Do what a face-up Rocket Docket card asks, and take a Rocket Part."""

    dino: Dino
    card: str


@dataclass(frozen=True)
class HealTeammates:
    """Sara's action: heal every Dino on her tile by up to 3."""

    dino: Dino


@dataclass(frozen=True)
class HealWithVines:
    """Spend one Vine of ``dino`` to heal ``target`` (on its tile) by 1."""

    dino: Dino
    target: Dino


@dataclass(frozen=True)
class GiveItem:
    """Trade: ``dino`` hands one item to ``recipient`` on its tile."""

    dino: Dino
    recipient: Dino
    item: Item


@dataclass(frozen=True)
class GiveCard:
    """Trade: ``dino`` hands a held Exploration card to ``recipient``."""

    dino: Dino
    recipient: Dino
    card: str


@dataclass(frozen=True)
class PlayCard:
    """Play a held Exploration card (``target``: whom Healing Herbs heals;
    the Dino itself for the other cards)."""

    dino: Dino
    card: str
    target: Dino


@dataclass(frozen=True)
class MakeRoom:
    """Discard one ``discard`` from the Satchel to take the pending resource."""

    dino: Dino
    discard: Resource


@dataclass(frozen=True)
class LeaveResource:
    """Leave the pending resource (on its tile, or in the Supply)."""

    dino: Dino


@dataclass(frozen=True)
class KeepCard:
    """Terry keeps the drawn Exploration card and follows it."""

    dino: Dino


@dataclass(frozen=True)
class RedrawCard:
    """Terry discards the drawn Exploration card and draws another."""

    dino: Dino


@dataclass(frozen=True)
class PlaceSecretCave:
    """Place the second Secret Cave on ``position``."""

    dino: Dino
    position: int


@dataclass(frozen=True)
class LeaveSecretCaves:
    """Leave the Secret Caves where they already are."""

    dino: Dino


@dataclass(frozen=True)
class EndTurn:
    """End ``dino``'s turn."""

    dino: Dino


@dataclass(frozen=True)
class AcceptTrade:
    """The seat of ``dino`` agrees to the trade offered from ``dino``: it
    happens now (rules version 3 on)."""

    dino: Dino


@dataclass(frozen=True)
class DeclineTrade:
    """The seat of ``dino`` refuses the trade offered from ``dino``: it
    lapses (rules version 3 on)."""

    dino: Dino


Command = (
    Travel
    | Explore
    | Resupply
    | CollectRocketPart
    | HealTeammates
    | HealWithVines
    | GiveItem
    | GiveCard
    | PlayCard
    | MakeRoom
    | LeaveResource
    | KeepCard
    | RedrawCard
    | PlaceSecretCave
    | LeaveSecretCaves
    | EndTurn
    | AcceptTrade
    | DeclineTrade
)
COMMAND_TYPES: tuple[type, ...] = (
    Travel,
    Explore,
    Resupply,
    CollectRocketPart,
    HealTeammates,
    HealWithVines,
    GiveItem,
    GiveCard,
    PlayCard,
    MakeRoom,
    LeaveResource,
    KeepCard,
    RedrawCard,
    PlaceSecretCave,
    LeaveSecretCaves,
    EndTurn,
    AcceptTrade,
    DeclineTrade,
)


# -- events -------------------------------------------------------------------


@dataclass(frozen=True)
class WorldSetUp:
    """The table was set: tiles face down around the Oasis, decks shuffled.
    The tiles and the orders are secret (blank for everyone but an admin);
    the decks' sizes are not.

    Schema 2 added the three sizes (a player's event has no orders to count;
    a schema 1 event is upcast with its orders' lengths)."""

    schema_version: ClassVar[int] = 2

    layout: tuple[str, ...]  # tile ids of positions 1-18
    meteor_deck: tuple[str, ...]
    rocket_docket_deck: tuple[str, ...]
    exploration_deck: tuple[str, ...]
    meteor_cards: int
    rocket_docket_cards: int
    exploration_cards: int


def world_set_up_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 had no sizes: those of its (unredacted) orders."""
    return {
        **data,
        "meteor_cards": len(data["meteor_deck"]),
        "rocket_docket_cards": len(data["rocket_docket_deck"]),
        "exploration_cards": len(data["exploration_deck"]),
    }


@dataclass(frozen=True)
class RocketDocketCardRevealed:
    """The top Rocket Docket card was turned face up."""

    card: str


@dataclass(frozen=True)
class TurnBegan:
    """``dino``'s turn began, with ``actions`` actions; ``heal_only``: the
    Dino is Injured, so the turn is for healing itself (with its Vines) until
    it is healed, and it does not end by itself.

    Schema 2 added ``actions`` and ``heal_only`` (the fold used to work them
    out). A schema 1 event is upcast with the two actions every turn had
    then and ``heal_only`` None: not recorded (rules versions 1 to 3, whose
    fold still works it out)."""

    schema_version: ClassVar[int] = 2

    dino: Dino
    round: int
    actions: int
    heal_only: bool | None


#: The actions of every turn of the games stored at schema 1 of
#: :class:`TurnBegan` (pinned: a later content does not change them).
SCHEMA_1_ACTIONS = 2


def turn_began_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "actions": SCHEMA_1_ACTIONS, "heal_only": None}


@dataclass(frozen=True)
class ActionTaken:
    """``dino`` spent one action."""

    dino: Dino
    action: ActionKind


@dataclass(frozen=True)
class DieRolled:
    """The die was rolled."""

    dino: Dino
    purpose: RollPurpose
    face: int
    number: int
    colour: DieColour


@dataclass(frozen=True)
class DinoTravelled:
    """``dino`` moved from ``origin`` to ``destination``."""

    dino: Dino
    origin: int
    destination: int
    mode: TravelMode
    food_spent: int


@dataclass(frozen=True)
class TarpitHeld:
    """A push out of the Tarpit failed: the Food and action are lost."""

    dino: Dino
    food_spent: int


@dataclass(frozen=True)
class DinoReturnedToOasis:
    """A card sent ``dino`` straight to the Oasis."""

    dino: Dino
    origin: int


@dataclass(frozen=True)
class TileRevealed:
    """The tile at ``position`` was turned face up; ``token_placed``: a token
    of its ``resource`` (None: a tile without one) came from the Supply.

    Schema 2 added ``resource`` (the fold used to read it from the tile's
    card); a schema 1 event is upcast with the tile's printed resource."""

    schema_version: ClassVar[int] = 2

    position: int
    tile: str
    token_placed: bool
    resource: Resource | None


def tile_revealed_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    resource = CONTENT.tile(data["tile"]).resource
    return {**data, "resource": None if resource is None else resource.name}


@dataclass(frozen=True)
class DinoDamaged:
    """``dino`` lost Health (``health`` is what is left; 0 is Injured)."""

    dino: Dino
    amount: int
    health: int


@dataclass(frozen=True)
class DinoHealed:
    """``dino`` regained Health."""

    dino: Dino
    amount: int
    health: int


@dataclass(frozen=True)
class VineSpent:
    """``dino`` spent a Vine from its Satchel (to heal)."""

    dino: Dino


@dataclass(frozen=True)
class ResourceTaken:
    """``dino`` took the resource token of its tile."""

    dino: Dino
    resource: Resource


@dataclass(frozen=True)
class ResourceGained:
    """``dino`` took one ``resource`` from the Supply."""

    dino: Dino
    resource: Resource


@dataclass(frozen=True)
class ResourceReturned:
    """One ``resource`` went from ``dino`` back to the Supply (spent,
    discarded or lost)."""

    dino: Dino
    resource: Resource


@dataclass(frozen=True)
class TokenReturned:
    """The resource token on ``position``, of ``resource``, went back to the
    Supply.

    Schema 2 added ``resource``; a schema 1 event is upcast with None: not
    recorded (rules versions 1 to 3, whose fold reads it from the tile)."""

    schema_version: ClassVar[int] = 2

    position: int
    resource: Resource | None


def token_returned_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "resource": None}


@dataclass(frozen=True)
class RoomNeeded:
    """A resource does not fit ``dino``'s Satchel: make room or leave it."""

    dino: Dino
    resource: Resource
    from_tile: int
    from_supply: int
    draw_after: bool


@dataclass(frozen=True)
class RoomMade:
    """``dino`` discarded ``discarded`` to make room (decision taken)."""

    dino: Dino
    discarded: Resource


@dataclass(frozen=True)
class ResourceLeft:
    """``dino`` left one ``resource`` (on the tile, or in the Supply)."""

    dino: Dino
    resource: Resource
    source: Source


@dataclass(frozen=True)
class ExplorationCardDrawn:
    """``dino`` drew and read ``card``."""

    dino: Dino
    card: str


@dataclass(frozen=True)
class RedrawOffered:
    """Terry may discard ``card`` and draw another (once per turn)."""

    dino: Dino
    card: str


@dataclass(frozen=True)
class RedrawDeclined:
    """Terry follows ``card``."""

    dino: Dino
    card: str


@dataclass(frozen=True)
class ExplorationCardRedrawn:
    """Terry discarded ``card`` to draw another."""

    dino: Dino
    card: str


@dataclass(frozen=True)
class ExplorationCardDiscarded:
    """``card`` went to the Exploration discard pile."""

    card: str


@dataclass(frozen=True)
class ExplorationCardKept:
    """``dino`` keeps ``card`` for later."""

    dino: Dino
    card: str


@dataclass(frozen=True)
class ExplorationCardPlayed:
    """``dino`` played its held ``card`` (it goes to the discards)."""

    dino: Dino
    card: str
    target: Dino


@dataclass(frozen=True)
class ExplorationDeckReshuffled:
    """The discards became the new Exploration deck (order secret)."""

    order: tuple[str, ...]


@dataclass(frozen=True)
class ExtraActionGained:
    """``dino`` gained an extra action this turn."""

    dino: Dino


@dataclass(frozen=True)
class LavaFlowPlaced:
    """A Lava Flow now lies on ``position``."""

    position: int


@dataclass(frozen=True)
class SecretCavePlacementOffered:
    """``dino`` chooses where the second Secret Cave goes."""

    dino: Dino


@dataclass(frozen=True)
class SecretCavesPlaced:
    """The Secret Caves now lie on ``first`` and ``second``."""

    first: int
    second: int


@dataclass(frozen=True)
class SecretCavesLeft:
    """The Secret Caves stay where they were."""

    dino: Dino


@dataclass(frozen=True)
class Resupplied:
    """``dino`` refilled Food and unloaded on the Launchpad."""

    dino: Dino
    food: int
    wood: int
    rocket_part: bool


@dataclass(frozen=True)
class RocketPartCollected:
    """``dino`` did what ``card`` asked and took a Rocket Part."""

    dino: Dino
    card: str


@dataclass(frozen=True)
class RocketDocketClosed:
    """The fifth Rocket Part was collected: every face-up card flips."""

    cards: tuple[str, ...]


@dataclass(frozen=True)
class ItemGiven:
    """Trade: ``dino`` handed ``item`` to ``recipient``."""

    dino: Dino
    recipient: Dino
    item: Item


@dataclass(frozen=True)
class CardGiven:
    """Trade: ``dino`` handed its held ``card`` to ``recipient``."""

    dino: Dino
    recipient: Dino
    card: str


@dataclass(frozen=True)
class TradeOffered:
    """The seat of the Dino whose turn it is asked ``dino``'s seat to hand
    ``item`` (or, when ``item`` is None, the held ``card``) to
    ``recipient`` (rules version 3 on)."""

    dino: Dino
    recipient: Dino
    item: Item | None = None
    card: str = ""


@dataclass(frozen=True)
class TradeAccepted:
    """``dino``'s seat agreed to the trade offered: the ``ItemGiven`` or
    ``CardGiven`` that follows is it."""

    dino: Dino


@dataclass(frozen=True)
class TradeDeclined:
    """``dino``'s seat refused the trade offered."""

    dino: Dino


@dataclass(frozen=True)
class TradeOfferLapsed:
    """The turn ended with the trade from ``dino`` still unanswered."""

    dino: Dino


@dataclass(frozen=True)
class DinosHandedOver:
    """A seat left the game: its Dinos now go with the seats in ``control``
    (the whole new table of who controls which Dino)."""

    control: tuple[DinoControl, ...]


@dataclass(frozen=True)
class TurnEnded:
    """``dino``'s turn is over."""

    dino: Dino


@dataclass(frozen=True)
class MeteorCardDrawn:
    """The round ended with ``card``."""

    card: str


@dataclass(frozen=True)
class MeteorMoved:
    """The Meteor moved on its track (to ``destination``)."""

    origin: int
    destination: int


@dataclass(frozen=True)
class EarthquakeStruck:
    """Every unoccupied tile but the Oasis was picked up, shuffled and laid
    face down again at ``positions``; ``layout`` (secret) is the new tile of
    each. ``returned``: their tokens and Lava Flows, back to the Supply.

    Schema 2 added ``returned``; a schema 1 event is upcast with None: not
    recorded (rules versions 1 to 3, whose fold works it out from the
    tiles)."""

    schema_version: ClassVar[int] = 2

    positions: tuple[int, ...]
    layout: tuple[str, ...]
    returned: Supply | None


def earthquake_struck_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "returned": None}


@dataclass(frozen=True)
class MeteorDeckRanOut:
    """A Meteor card was needed and none was left: the game is lost."""


@dataclass(frozen=True)
class MeteorHitEarth:
    """The Meteor reached Earth: the game is lost."""


@dataclass(frozen=True)
class RocketLaunched:
    """Five Rocket Parts and eight Wood on the Launchpad, every Dino on the
    Oasis: the Rocket lifts off and everyone wins."""


Event = (
    WorldSetUp
    | RocketDocketCardRevealed
    | TurnBegan
    | ActionTaken
    | DieRolled
    | DinoTravelled
    | TarpitHeld
    | DinoReturnedToOasis
    | TileRevealed
    | DinoDamaged
    | DinoHealed
    | VineSpent
    | ResourceTaken
    | ResourceGained
    | ResourceReturned
    | TokenReturned
    | RoomNeeded
    | RoomMade
    | ResourceLeft
    | ExplorationCardDrawn
    | RedrawOffered
    | RedrawDeclined
    | ExplorationCardRedrawn
    | ExplorationCardDiscarded
    | ExplorationCardKept
    | ExplorationCardPlayed
    | ExplorationDeckReshuffled
    | ExtraActionGained
    | LavaFlowPlaced
    | SecretCavePlacementOffered
    | SecretCavesPlaced
    | SecretCavesLeft
    | Resupplied
    | RocketPartCollected
    | RocketDocketClosed
    | ItemGiven
    | CardGiven
    | TurnEnded
    | MeteorCardDrawn
    | MeteorMoved
    | EarthquakeStruck
    | MeteorDeckRanOut
    | MeteorHitEarth
    | RocketLaunched
    | TradeOffered
    | TradeAccepted
    | TradeDeclined
    | TradeOfferLapsed
    | DinosHandedOver
)
EVENT_TYPES: tuple[type, ...] = (
    WorldSetUp,
    RocketDocketCardRevealed,
    TurnBegan,
    ActionTaken,
    DieRolled,
    DinoTravelled,
    TarpitHeld,
    DinoReturnedToOasis,
    TileRevealed,
    DinoDamaged,
    DinoHealed,
    VineSpent,
    ResourceTaken,
    ResourceGained,
    ResourceReturned,
    TokenReturned,
    RoomNeeded,
    RoomMade,
    ResourceLeft,
    ExplorationCardDrawn,
    RedrawOffered,
    RedrawDeclined,
    ExplorationCardRedrawn,
    ExplorationCardDiscarded,
    ExplorationCardKept,
    ExplorationCardPlayed,
    ExplorationDeckReshuffled,
    ExtraActionGained,
    LavaFlowPlaced,
    SecretCavePlacementOffered,
    SecretCavesPlaced,
    SecretCavesLeft,
    Resupplied,
    RocketPartCollected,
    RocketDocketClosed,
    ItemGiven,
    CardGiven,
    TurnEnded,
    MeteorCardDrawn,
    MeteorMoved,
    EarthquakeStruck,
    MeteorDeckRanOut,
    MeteorHitEarth,
    RocketLaunched,
    TradeOffered,
    TradeAccepted,
    TradeDeclined,
    TradeOfferLapsed,
    DinosHandedOver,
)


# -- views --------------------------------------------------------------------


@dataclass(frozen=True)
class PlaceView:
    """One position as everyone sees it: a face-down tile shows no name."""

    position: int
    q: int
    r: int
    tile: str  # "" while face down
    terrain: Terrain | None  # None while face down
    revealed: bool
    token: Resource | None
    lava: bool
    cave: bool


@dataclass(frozen=True)
class View:
    """The table as a viewer sees it (everything but face-down tiles and
    deck orders is open in this cooperative game)."""

    round: int
    current_dino: Dino
    turn_open: bool
    actions_left: int
    your_dinos: tuple[Dino, ...]
    control: tuple[DinoControl, ...]
    places: tuple[PlaceView, ...]
    dinos: tuple[DinoState, ...]
    supply: Supply
    launchpad_wood: int
    launchpad_parts: int
    meteor: int
    meteor_track_length: int
    meteor_cards_left: int
    meteor_drawn: tuple[str, ...]
    rocket_docket_cards_left: int
    rocket_docket_open: tuple[str, ...]
    rocket_docket_done: tuple[str, ...]
    exploration_cards_left: int
    exploration_discard: tuple[str, ...]
    redraw_used: bool
    pending: Pending | None
    result: str
    # The trade waiting for a seat's consent, if any (public).
    offer: TradeOffer | None = None
