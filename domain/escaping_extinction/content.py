"""The printed content of Escaping Extinction, loaded from the JSON files
beside this module and validated once: the World's tiles, the Dinos, the
die, the supply, the Meteor deck and track, the Rocket Docket and the
Exploration deck. A publisher can swap in other values without touching
the rules, as long as the checks below still hold.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any


class Dino(enum.Enum):
    """The four Dinos, in their fixed turn order."""

    TERRY = "terry"
    REX = "rex"
    SARA = "sara"
    LONG_NECK = "long_neck"


class Terrain(enum.Enum):
    """What a terrain tile is."""

    OASIS = "oasis"
    TARPIT = "tarpit"
    VOLCANO = "volcano"
    WOOD = "wood"
    FOOD = "food"
    VINE = "vine"
    BARREN = "barren"


class Resource(enum.Enum):
    """A resource token."""

    FOOD = "food"
    WOOD = "wood"
    VINE = "vine"


class DieColour(enum.Enum):
    """The colour of a die face (Long Neck's double or nothing reads it)."""

    GREEN = "green"
    RED = "red"


class MeteorHazard(enum.Enum):
    """What a Meteor card does besides moving the Meteor."""

    NONE = "none"
    EARTHQUAKE = "earthquake"
    ASH_RAIN = "ash_rain"
    HEATWAVE = "heatwave"


class CardEffect(enum.Enum):
    """What an Exploration card does."""

    GAIN_FOOD = "gain_food"
    GAIN_WOOD = "gain_wood"
    GAIN_VINE = "gain_vine"
    DAMAGE = "damage"
    HEAL = "heal"
    LOSE_FOOD = "lose_food"
    RETURN_TO_OASIS = "return_to_oasis"
    REVEAL_ROCKET_DOCKET = "reveal_rocket_docket"
    TRAIL_MIX = "trail_mix"
    HEALING_HERBS = "healing_herbs"
    BURST_OF_ENERGY = "burst_of_energy"
    LAVA_FLOW = "lava_flow"
    SECRET_CAVES = "secret_caves"


KEEP_EFFECTS = frozenset(
    {CardEffect.TRAIL_MIX, CardEffect.HEALING_HERBS, CardEffect.BURST_OF_ENERGY}
)
TERRAIN_RESOURCE = {
    Terrain.WOOD: Resource.WOOD,
    Terrain.FOOD: Resource.FOOD,
    Terrain.VINE: Resource.VINE,
}


@dataclass(frozen=True)
class Tile:
    id: str
    name: str
    terrain: Terrain

    @property
    def resource(self) -> Resource | None:
        return TERRAIN_RESOURCE.get(self.terrain)


@dataclass(frozen=True)
class DinoCard:
    dino: Dino
    name: str
    energy: int
    satchel: int
    health: int


@dataclass(frozen=True)
class DieFace:
    face: int
    number: int
    colour: DieColour


@dataclass(frozen=True)
class MeteorCard:
    id: str
    name: str
    advance: int
    hazard: MeteorHazard


@dataclass(frozen=True)
class DocketCard:
    id: str
    name: str
    text: str
    tile: str
    food: int
    wood: int
    vines: int
    damage: int


@dataclass(frozen=True)
class ExplorationCard:
    id: str
    name: str
    text: str
    effect: CardEffect
    amount: int

    @property
    def keep(self) -> bool:
        return self.effect in KEEP_EFFECTS


@dataclass(frozen=True)
class Content:
    """Everything printed, validated."""

    radius: int
    oasis: Tile
    tiles: dict[str, Tile]  # the 18 terrain tiles (not the Oasis), by id
    tile_order: tuple[str, ...]  # their ids in the file's order
    coords: tuple[tuple[int, int], ...]  # axial (q, r) of each position; 0 = Oasis
    neighbours: tuple[frozenset[int], ...]
    dinos: dict[Dino, DinoCard]
    die: dict[int, DieFace]
    supply: dict[str, int]
    launch_parts: int
    launch_wood: int
    actions_per_turn: int
    tarpit_walk_food: int
    tarpit_push_food: int
    tarpit_push_needs: int
    tarpit_cave_food: int
    lava_damage: int
    sara_heal: int
    track_length: int
    piles: tuple[int, ...]
    meteor: dict[str, MeteorCard]
    meteor_order: tuple[str, ...]
    docket: dict[str, DocketCard]
    docket_order: tuple[str, ...]
    exploration: dict[str, ExplorationCard]
    exploration_order: tuple[str, ...]

    @property
    def positions(self) -> int:
        return len(self.coords)

    def tile(self, tile_id: str) -> Tile:
        return self.oasis if tile_id == self.oasis.id else self.tiles[tile_id]


class ContentError(ValueError):
    """A data file breaks the game's rules."""


def _load(name: str) -> Any:
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ContentError(f"escaping_extinction content: {message}")


def _unique(ids: list[str], what: str) -> None:
    _check(len(set(ids)) == len(ids), f"{what} ids are not unique")


def hex_positions(radius: int) -> tuple[tuple[int, int], ...]:
    """Axial coordinates of every hex within ``radius`` of the centre, the
    centre first, then ring by ring."""
    cells = [
        (q, r)
        for q in range(-radius, radius + 1)
        for r in range(-radius, radius + 1)
        if max(abs(q), abs(r), abs(q + r)) <= radius
    ]
    return tuple(
        sorted(cells, key=lambda c: (max(abs(c[0]), abs(c[1]), abs(sum(c))), c))
    )


_DIRECTIONS = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


def load() -> Content:
    """Load and validate the content files."""
    world = _load("world.json")
    radius = int(world["radius"])
    coords = hex_positions(radius)
    index = {c: i for i, c in enumerate(coords)}
    neighbours = tuple(
        frozenset(
            index[(q + dq, r + dr)]
            for dq, dr in _DIRECTIONS
            if (q + dq, r + dr) in index
        )
        for q, r in coords
    )
    oasis = Tile(world["oasis"]["id"], world["oasis"]["name"], Terrain.OASIS)
    tiles = [Tile(t["id"], t["name"], Terrain[t["terrain"]]) for t in world["tiles"]]
    _unique([oasis.id] + [t.id for t in tiles], "tile")
    _check(len(tiles) == len(coords) - 1, f"{len(coords) - 1} terrain tiles needed")
    kinds = [t.terrain for t in tiles]
    _check(Terrain.OASIS not in kinds, "only one Oasis")
    _check(kinds.count(Terrain.TARPIT) == 1, "exactly one Tarpit")
    _check(kinds.count(Terrain.VOLCANO) == 1, "exactly one Volcano")

    dinos = {
        Dino[d["dino"]]: DinoCard(
            Dino[d["dino"]], d["name"], d["energy"], d["satchel"], d["health"]
        )
        for d in world["dinos"]
    }
    _check(list(dinos) == list(Dino), "one card per Dino, in turn order")
    _check(
        all(c.energy > 0 and c.satchel > 0 and c.health > 0 for c in dinos.values()),
        "Dino stats must be positive",
    )
    die = {
        f["face"]: DieFace(f["face"], f["number"], DieColour[f["colour"]])
        for f in world["die"]
    }
    _check(sorted(die) == list(range(1, len(die) + 1)), "die faces numbered from 1")
    supply = {k: int(v) for k, v in world["supply"].items()}
    _check(
        set(supply) == {"food", "wood", "vines", "rocket_parts", "lava_flows"},
        "supply lists food, wood, vines, rocket_parts, lava_flows",
    )
    _check(
        supply["food"] >= sum(c.energy for c in dinos.values()),
        "enough Food to fill every Dino",
    )
    launch = world["launch"]
    _check(launch["rocket_parts"] <= supply["rocket_parts"], "enough Rocket Parts")
    _check(launch["wood"] <= supply["wood"], "enough Wood")
    tarpit = world["tarpit"]

    meteor_data = _load("meteor.json")
    meteor_cards = [
        MeteorCard(c["id"], c["name"], c["advance"], MeteorHazard[c["hazard"]])
        for c in meteor_data["cards"]
    ]
    _unique([c.id for c in meteor_cards], "Meteor card")
    piles = tuple(meteor_data["piles"])
    quakes = [c for c in meteor_cards if c.hazard is MeteorHazard.EARTHQUAKE]
    _check(len(quakes) == len(piles), "one Earthquake per Meteor pile")
    _check(
        sum(piles) == len(meteor_cards) - len(quakes),
        "the Meteor piles hold every card but the Earthquakes",
    )
    _check(
        all(c.advance > 0 for c in meteor_cards if c not in quakes),
        "Meteor cards advance the Meteor",
    )

    docket_cards = [DocketCard(**c) for c in _load("rocket_docket.json")["cards"]]
    _unique([c.id for c in docket_cards], "Rocket Docket card")
    for card in docket_cards:
        _check(
            card.tile in {t.id for t in tiles},
            f"Rocket Docket card {card.id} names unknown tile {card.tile}",
        )
        _check(
            min(card.food, card.wood, card.vines, card.damage) >= 0,
            f"Rocket Docket card {card.id} has a negative cost",
        )
    _check(len(docket_cards) >= launch["rocket_parts"], "enough Rocket Docket cards")

    exploration: list[ExplorationCard] = []
    for c in _load("exploration.json")["cards"]:
        _check(c["copies"] >= 1, f"Exploration card {c['id']} needs copies")
        for n in range(1, c["copies"] + 1):
            exploration.append(
                ExplorationCard(
                    f"{c['id']}_{n}",
                    c["name"],
                    c["text"],
                    CardEffect[c["effect"]],
                    c["amount"],
                )
            )
    _unique([c.id for c in exploration], "Exploration card")
    _check(len(exploration) == 30, "30 Exploration cards")

    return Content(
        radius=radius,
        oasis=oasis,
        tiles={t.id: t for t in tiles},
        tile_order=tuple(t.id for t in tiles),
        coords=coords,
        neighbours=neighbours,
        dinos=dinos,
        die=die,
        supply=supply,
        launch_parts=launch["rocket_parts"],
        launch_wood=launch["wood"],
        actions_per_turn=world["actions_per_turn"],
        tarpit_walk_food=tarpit["walk_food"],
        tarpit_push_food=tarpit["push_food"],
        tarpit_push_needs=tarpit["push_needs"],
        tarpit_cave_food=tarpit["cave_food"],
        lava_damage=world["lava_damage"],
        sara_heal=world["sara_heal"],
        track_length=meteor_data["track_length"],
        piles=piles,
        meteor={c.id: c for c in meteor_cards},
        meteor_order=tuple(c.id for c in meteor_cards),
        docket={c.id: c for c in docket_cards},
        docket_order=tuple(c.id for c in docket_cards),
        exploration={c.id: c for c in exploration},
        exploration_order=tuple(c.id for c in exploration),
    )


CONTENT = load()
