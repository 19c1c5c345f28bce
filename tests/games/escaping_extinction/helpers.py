"""Stacked tables for Escaping Extinction's rules tests, and its invariants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.escaping_extinction import RULES
from domain.escaping_extinction.content import CONTENT, Dino, Resource
from domain.escaping_extinction.model import (
    DinoDamaged,
    DinoTravelled,
    Event,
    ExplorationCardKept,
    Item,
    Options,
    ResourceGained,
    Resupplied,
    RocketDocketCardRevealed,
    RocketPartCollected,
    Scenario,
    State,
    TileRevealed,
    TravelMode,
    TurnBegan,
    TurnEnded,
)
from domain.escaping_extinction.positions import world_set_up
from tests.gamekit import given

TERRY, REX, SARA, LONG_NECK = Dino.TERRY, Dino.REX, Dino.SARA, Dino.LONG_NECK

# The default stacked layout: position i + 1 holds the i-th tile of the data.
LAYOUT: tuple[str, ...] = CONTENT.tile_order
POS: dict[str, int] = {tile: i + 1 for i, tile in enumerate(LAYOUT)}
METEOR: tuple[str, ...] = CONTENT.meteor_order
DOCKET: tuple[str, ...] = CONTENT.docket_order
EXPLORATION: tuple[str, ...] = CONTENT.exploration_order


def layout_with(**placed: int) -> tuple[str, ...]:
    """The default layout with some tiles moved to chosen positions."""
    layout = list(LAYOUT)
    for tile, position in placed.items():
        old = layout.index(tile)
        layout[old], layout[position - 1] = layout[position - 1], layout[old]
    return tuple(layout)


def top(*cards: str, deck: tuple[str, ...] = EXPLORATION) -> tuple[str, ...]:
    """``deck`` with ``cards`` on top, in that order."""
    return (*cards, *(c for c in deck if c not in cards))


def setup(
    layout: tuple[str, ...] = LAYOUT,
    meteor: tuple[str, ...] = METEOR,
    docket: tuple[str, ...] = DOCKET,
    exploration: tuple[str, ...] = EXPLORATION,
) -> list[Any]:
    """The set-up events of a stacked table; Terry's turn in round 1."""
    return [
        world_set_up(layout, meteor, docket, exploration),
        RocketDocketCardRevealed(docket[0]),
        began(TERRY, 1),
    ]


def began(dino: Dino, round_: int, heal_only: bool = False) -> TurnBegan:
    """``dino``'s turn begins in round ``round_`` with the turn's actions
    (``heal_only``: it begins Injured, with a Vine to heal itself)."""
    return TurnBegan(dino, round_, CONTENT.actions_per_turn, heal_only)


def move(dino: Dino, position: int, origin: int = 0) -> list[Any]:
    """Put ``dino`` on ``position`` (revealing the tile, no cost)."""
    return [DinoTravelled(dino, origin, position, TravelMode.WALK, 0)]


def reveal(
    position: int, token: bool = True, layout: tuple[str, ...] = LAYOUT
) -> Event:
    tile = layout[position - 1]
    resource = CONTENT.tiles[tile].resource
    return TileRevealed(position, tile, token and resource is not None, resource)


def turn_of(dino: Dino, round_: int = 1) -> list[Any]:
    return [TurnEnded(TERRY), began(dino, round_)]


def injure(dino: Dino, health: int = 6) -> Event:
    return DinoDamaged(dino, health, 0)


def hand(dino: Dino, card: str) -> Event:
    return ExplorationCardKept(dino, card)


def table(
    events: Sequence[Any],
    players: int = 1,
    scenario: Scenario | None = None,
    options: Options | None = None,
) -> State:
    state: State = given(RULES, players, events, options=options, scenario=scenario)
    return state


def launch_ready(wood: int) -> list[Any]:
    """Terry on position 3; five Rocket Parts and ``wood`` Wood unloaded on the
    Launchpad by Rex (every other Dino on the Oasis)."""
    events: list[Any] = [*setup(), reveal(3), *move(TERRY, 3)]
    for n, card in enumerate(DOCKET[:5]):
        if n:
            events.append(RocketDocketCardRevealed(card))
        events += [RocketPartCollected(REX, card), Resupplied(REX, 0, 0, True)]
    events += [ResourceGained(REX, Resource.WOOD) for _ in range(min(wood, 4))]
    events += [Resupplied(REX, 0, min(wood, 4), False)]
    events += [ResourceGained(REX, Resource.WOOD) for _ in range(wood - min(wood, 4))]
    events += [Resupplied(REX, 0, wood - min(wood, 4), False)]
    return events


def give_from_supply(dino: Dino, item: Item, n: int = 1) -> list[Any]:
    """Events that put ``n`` of ``item`` into ``dino``'s card from the Supply
    (through another Dino, so conservation holds)."""
    resource = Resource[item.name]
    return [ResourceGained(dino, resource) for _ in range(n)]


def dino(state: State, d: Dino) -> Any:
    return state.dinos[list(Dino).index(d)]


# -- invariants ---

# What every deal must hold, in a comparable order (sorted once).
ALL_TILES = sorted(CONTENT.tile_order)
ALL_EXPLORATION = sorted(CONTENT.exploration_order)
ALL_METEOR = sorted(CONTENT.meteor_order)
ALL_DOCKET = sorted(CONTENT.docket_order)


def check_invariants(state: State) -> None:
    """Tokens and cards are conserved; everything stays within its limits.

    It runs after every move of every random game, so it reads the places
    and the Dinos once each."""
    if not state.meteor_deck and not state.meteor_drawn:
        return  # before set-up
    supply = state.supply
    places = state.places
    # Tokens on the tiles, by resource; Lava Flows and Secret Caves placed.
    tokens = dict.fromkeys(Resource, 0)
    lava = caves = 0
    for place in places:
        if place.token:
            assert place.revealed, place
            resource = CONTENT.tile(place.tile).resource
            assert resource is not None, place
            tokens[resource] += 1
        lava += place.lava
        caves += place.cave
    food = wood = vines = parts = 0
    held: list[str] = []
    for d in state.dinos:
        card = CONTENT.dinos[d.dino]
        assert 0 <= d.health <= card.health
        assert 0 <= d.food <= card.energy
        assert 0 <= d.wood + d.vines <= card.satchel
        assert min(d.wood, d.vines) >= 0
        assert places[d.position].revealed
        food += d.food
        wood += d.wood
        vines += d.vines
        parts += d.rocket_part
        held += d.held_cards
    total = CONTENT.supply
    assert supply.food + tokens[Resource.FOOD] + food == total["food"]
    assert (
        supply.wood + tokens[Resource.WOOD] + wood + state.launchpad_wood
        == total["wood"]
    )
    assert supply.vines + tokens[Resource.VINE] + vines == total["vines"]
    assert supply.rocket_parts + parts + state.launchpad_parts == total["rocket_parts"]
    assert supply.lava_flows + lava == total["lava_flows"]
    assert min(supply.food, supply.wood, supply.vines, supply.rocket_parts) >= 0
    assert caves in (0, 2)
    assert not places[0].cave
    assert sorted([p.tile for p in places[1:]]) == ALL_TILES
    pending = state.pending
    floating = [pending.card] if pending is not None and pending.card else []
    cards = [*state.exploration_deck, *state.exploration_discard, *held, *floating]
    assert sorted(cards) == ALL_EXPLORATION
    assert sorted((*state.meteor_deck, *state.meteor_drawn)) == ALL_METEOR
    assert (
        sorted((*state.docket_deck, *state.docket_open, *state.docket_done))
        == ALL_DOCKET
    )
    assert 0 <= state.meteor <= CONTENT.track_length
    if not state.result:
        assert state.turn_open
    assert state.result in ("", "escaped", "meteor_hit_earth", "meteor_deck_empty")
