"""Escaping Extinction, the shape and the readings every part shares: who
controls which Dino, small readings of the state, the end, and the special
shuffles (read :mod:`domain.escaping_extinction.rules` first)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.chance import Rng
from domain.escaping_extinction.content import (
    CONTENT,
    CardEffect,
    Dino,
    MeteorHazard,
    Resource,
    Terrain,
)
from domain.escaping_extinction.model import (
    AcceptTrade,
    CollectRocketPart,
    DeclineTrade,
    DinoControl,
    DinoState,
    Event,
    Explore,
    GiveCard,
    GiveItem,
    HealTeammates,
    Item,
    KeepCard,
    LeaveResource,
    LeaveSecretCaves,
    MakeRoom,
    MeteorHitEarth,
    MeteorMoved,
    PendingKind,
    PlaceSecretCave,
    PlayCard,
    RedrawCard,
    Resupply,
    RocketLaunched,
    State,
    Supply,
    Travel,
    TravelMode,
)

DINOS: tuple[Dino, ...] = tuple(Dino)
TURN_INDEX = {d: i for i, d in enumerate(DINOS)}
RESOURCE_FIELD = {Resource.FOOD: "food", Resource.WOOD: "wood", Resource.VINE: "vines"}
OASIS = 0
ESCAPED = "escaped"
METEOR_HIT_EARTH = "meteor_hit_earth"
METEOR_DECK_EMPTY = "meteor_deck_empty"

ACTIONS = (Travel, Explore, Resupply, CollectRocketPart, HealTeammates)
TRADES = (GiveItem, GiveCard)
ANSWERS = (AcceptTrade, DeclineTrade)
NOT_WHILE_INJURED = (*ACTIONS, PlayCard)
NAMING_CARDS = (CollectRocketPart, PlayCard, GiveCard)
SORTED_NEIGHBOURS = tuple(tuple(sorted(n)) for n in CONTENT.neighbours)
DECISIONS: dict[PendingKind, tuple[type, ...]] = {
    PendingKind.MAKE_ROOM: (MakeRoom, LeaveResource),
    PendingKind.REDRAW: (KeepCard, RedrawCard),
    PendingKind.SECRET_CAVES: (PlaceSecretCave, LeaveSecretCaves),
}
ALL_DECISIONS = tuple(t for ts in DECISIONS.values() for t in ts)
GAIN_RESOURCE = {
    CardEffect.GAIN_FOOD: Resource.FOOD,
    CardEffect.GAIN_WOOD: Resource.WOOD,
    CardEffect.GAIN_VINE: Resource.VINE,
}


# -- who controls which Dino ---------------------------------------------------


def dino_control(players: int, shared_fourth_dino: bool) -> tuple[DinoControl, ...]:
    """The rulebook's table: which seats control each Dino."""
    if players == 4:
        seats: list[tuple[int, ...]] = [(0,), (1,), (2,), (3,)]
    elif players == 3:
        seats = [(0,), (1,), (2,), (0, 1, 2) if shared_fourth_dino else (0,)]
    elif players == 2:
        seats = [(0,), (0,), (1,), (1,)]
    else:
        seats = [(0,)] * 4
    return tuple(DinoControl(d, s) for d, s in zip(DINOS, seats, strict=True))


def controls(state: State, seat: int, dino: Dino) -> bool:
    return seat in state.control[TURN_INDEX[dino]].seats


# -- small readings of the state ----------------------------------------------


def seats_of(state: State, dino: Dino) -> tuple[int, ...]:
    """The seats controlling ``dino``."""
    return state.control[TURN_INDEX[dino]].seats


def dino_of(state: State, dino: Dino) -> DinoState:
    return state.dinos[TURN_INDEX[dino]]


def current_dino(state: State) -> DinoState:
    return state.dinos[state.current]


def terrain_at(state: State, position: int) -> Terrain | None:
    place = state.places[position]
    if not place.tile:
        return None
    return CONTENT.tile(place.tile).terrain


def satchel_room(d: DinoState) -> int:
    return CONTENT.dinos[d.dino].satchel - d.wood - d.vines


def food_room(d: DinoState) -> int:
    return CONTENT.dinos[d.dino].energy - d.food


def max_health(dino: Dino) -> int:
    return CONTENT.dinos[dino].health


def holds(d: DinoState, resource: Resource) -> int:
    return int(getattr(d, RESOURCE_FIELD[resource]))


def in_supply(supply: Supply, resource: Resource) -> int:
    return int(getattr(supply, RESOURCE_FIELD[resource]))


def has_item(d: DinoState, item: Item) -> bool:
    if item is Item.ROCKET_PART:
        return d.rocket_part
    return holds(d, Resource[item.name]) > 0


def parts_collected(state: State) -> int:
    return CONTENT.supply["rocket_parts"] - state.supply.rocket_parts


def travel_cost(mode: TravelMode, in_tarpit: bool) -> int:
    """The Food a journey costs (a push is only made from the Tarpit)."""
    if mode is TravelMode.CAVE:
        return CONTENT.tarpit_cave_food if in_tarpit else 0
    if mode is TravelMode.PUSH:
        return CONTENT.tarpit_push_food
    return CONTENT.tarpit_walk_food if in_tarpit else 1


def caves(state: State) -> tuple[int, ...]:
    return tuple(i for i, p in enumerate(state.places) if p.cave)


def dino_name(dino: Dino) -> str:
    return CONTENT.dinos[dino].name


# -- the end ---------------------------------------------------------------------


def escaped(state: State) -> bool:
    """The win: the Rocket complete on the Launchpad, every Dino on the Oasis."""
    return (
        state.launchpad_parts >= CONTENT.launch_parts
        and state.launchpad_wood >= CONTENT.launch_wood
        and all(d.position == OASIS for d in state.dinos)
    )


def the_end(state: State, event: Event) -> Event | None:
    """The end of the game that ``event`` brought about (``state`` is the
    state right after it), or None: the Meteor moving onto Earth loses, the
    Rocket complete with every Dino home wins. It is checked after every
    event, and once the game is over nothing more ends it."""
    if state.result:
        return None
    if isinstance(event, MeteorMoved) and state.meteor >= state.earth:
        return MeteorHitEarth()
    if escaped(state):
        return RocketLaunched()
    return None


def fixed_order(
    items: Sequence[str], priority: Sequence[str], rng: Rng
) -> tuple[str, ...]:
    """``items`` in the order ``priority`` lists them, the rest shuffled after."""
    rank = {x: i for i, x in enumerate(priority)}
    listed = sorted((x for x in items if x in rank), key=rank.__getitem__)
    rest = rng.shuffled([x for x in items if x not in rank])
    return (*listed, *rest)


def meteor_shuffle(rng: Rng) -> tuple[str, ...]:
    """The special shuffle: Earthquakes aside, shuffle the rest, split into
    piles (the 5-card pile on top), shuffle one Earthquake into each pile,
    stack the piles."""
    quakes = [
        c
        for c in CONTENT.meteor_order
        if CONTENT.meteor[c].hazard is MeteorHazard.EARTHQUAKE
    ]
    rest = list(rng.shuffled([c for c in CONTENT.meteor_order if c not in quakes]))
    quakes = list(rng.shuffled(quakes))
    deck: list[str] = []
    for size, quake in zip(CONTENT.piles, quakes, strict=True):
        pile, rest = rest[:size], rest[size:]
        deck.extend(rng.shuffled([*pile, quake]))
    return tuple(deck)


def picked_up(state: State, positions: Sequence[int]) -> Supply:
    """The tokens and Lava Flows lying on ``positions`` (an Earthquake picks
    them up with their tiles, back to the Supply)."""
    counts = dict.fromkeys(COUNTED, 0)
    for position in positions:
        place = state.places[position]
        resource = CONTENT.tile(place.tile).resource if place.tile else None
        if place.token and resource is not None:
            counts[RESOURCE_FIELD[resource]] += 1
        counts["lava_flows"] += place.lava
    return Supply(**counts)


KEEP_CARDS = frozenset(c for c, card in CONTENT.exploration.items() if card.keep)
COUNTED = ("food", "wood", "vines", "rocket_parts", "lava_flows")
