"""The names and texts of each game's cards, places and pieces, from the
games' own data files under ``domain/`` (names, values, costs) and the short
texts below (one sentence per effect code of the data, in words a player
reads).

The web table reads them as ``service/web/content/<game>.json``
(``scripts/web_content.py`` writes those files from :data:`GAMES`; a test
fails when they are stale) and ``strata play`` reads them from here: both
name a card the same way. No rules: what is legal comes from the API only.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

#: What each Point card effect of Happy Little Dinosaurs does, by effect code.
HLD_POINT_EFFECTS = {
    "NONE": "No effect.",
    "ADD_POINT_CARD_VALUE": (
        "Discard a card from your hand to add its value to your score this round."
    ),
    "ADD_EFFECT_CARD_VALUE": (
        "Discard a card that has an effect to add its value to your score this round."
    ),
    "GRAB_CARD": "Look at another player's hand and take one card from it.",
    "SWAP_WITH_NEIGHBOUR": (
        "Swap your played card with a neighbour's played card that has no effect."
    ),
    "DISCARD_UP_TO_THREE": "Discard up to three cards from your hand.",
    "SWAP_HIGHEST_AND_LOWEST": "During scoring, the highest and lowest scores swap.",
    "DOUBLE_BOOSTERS_AND_SAPPERS": (
        "During scoring, Score Boosters and Score Sappers count double."
    ),
    "LOOK_AT_TOP_TWO": (
        "Look at the top two cards of the Main deck: keep one, discard the other."
    ),
    "SWAP_TWO_OTHERS": "Swap the played cards of two other players.",
    "SILENCE_OTHERS": "This round, every other played card loses its effect.",
}
#: What each Instant of Happy Little Dinosaurs does, by effect code.
HLD_INSTANT_EFFECTS = {
    "BOOST": "Instant, during scoring: add {amount} to a player's score.",
    "SAP": "Instant, during scoring: take {amount} from a player's score.",
    "INVERT": "Instant, during scoring: the highest and lowest scores swap.",
    "INSURE": ("Instant, when you face a Disaster: it goes to the bottom of the deck."),
    "REDIRECT": (
        "Instant, when you face a Disaster: send it to another player instead."
    ),
}
HLD_DISASTER_TEXT = (
    "A {type} Disaster. Three of one type, or three different types (Meteors "
    "count as any), and your dinosaur is out."
)

#: Cubosaurs' scoring kinds, in words.
CUBOSAURS_SCORING = {
    "ROWS": "Scores by how many you collect: {rows} for 1, 2, 3 or 4 and more.",
    "RAPTOR": (
        "A raptor: paired with one of the other colour it scores its paired "
        "value, alone its alone value."
    ),
    "EGG": (
        "An Egg: {majority:+d} if you hold the most {of}, {minority:+d} otherwise."
    ),
}


def _data(game: str, name: str) -> Any:
    return json.loads(
        (resources.files(f"domain.{game}") / name).read_text(encoding="utf-8")
    )


def happy_little_dinosaurs() -> dict[str, Any]:
    cards = _data("happy_little_dinosaurs", "cards.json")
    out: dict[str, Any] = {}
    for card in cards["point"]:
        out[card["id"]] = {
            "name": card["name"],
            "kind": "point",
            "value": card["value"],
            "text": HLD_POINT_EFFECTS[card["effect"]],
        }
    for card in cards["instant"]:
        out[card["id"]] = {
            "name": card["name"],
            "kind": "instant",
            "text": HLD_INSTANT_EFFECTS[card["effect"]].format(amount=card["amount"]),
        }
    for card in cards["disaster"]:
        out[card["id"]] = {
            "name": card["name"],
            "kind": "disaster",
            "type": card["type"],
            "text": HLD_DISASTER_TEXT.format(type=card["type"].title()),
        }
    dinosaurs = {
        d["dinosaur"]: {
            "name": d["name"],
            "traits": ", ".join(
                f"{kind.title()} {value:+d}" for kind, value in d["traits"].items()
            ),
        }
        for d in _data("happy_little_dinosaurs", "dinosaurs.json")["dinosaurs"]
    }
    from domain.happy_little_dinosaurs.rules import WINNING_ESCAPE

    return {"cards": out, "dinosaurs": dinosaurs, "winning_escape": WINNING_ESCAPE}


def cubosaurs() -> dict[str, Any]:
    data = _data("cubosaurs", "cards.json")
    kinds = data["kinds"]
    # Every card by id, as the views show it (kind, DNA, a raptor's values):
    # an event names a card by id only.
    cards = {
        str(card["id"]): {
            "kind": f"KIND_{card['kind']}",
            "dna": card["dna"],
            **{k: card[k] for k in ("paired", "alone") if k in card},
        }
        for card in data["cards"]
    }
    out: dict[str, Any] = {}
    for kind, data in kinds.items():
        scoring = data["scoring"]
        if scoring == "ROWS":
            text = CUBOSAURS_SCORING["ROWS"].format(
                rows=", ".join(f"{r:+d}" for r in data["rows"])
            )
        elif scoring == "EGG":
            text = CUBOSAURS_SCORING["EGG"].format(
                majority=data["majority"],
                minority=data["minority"],
                of=" and ".join(kinds[k]["name"] for k in data["majority_of"]),
            )
        else:
            text = CUBOSAURS_SCORING[scoring]
        out[kind] = {"name": data["name"], "text": text}
    return {"kinds": out, "cards": cards}


def escaping_extinction() -> dict[str, Any]:
    world = _data("escaping_extinction", "world.json")
    tiles = {
        t["id"]: {"name": t["name"], "terrain": t["terrain"]}
        for t in [world["oasis"], *world["tiles"]]
    }
    dinos = {d["dino"]: {"name": d["name"]} for d in world["dinos"]}
    exploration = {
        c["id"]: {"name": c["name"], "text": c["text"]}
        for c in _data("escaping_extinction", "exploration.json")["cards"]
    }
    docket = {
        c["id"]: {
            "name": c["name"],
            "text": c["text"],
            "tile": tiles[c["tile"]]["name"],
        }
        for c in _data("escaping_extinction", "rocket_docket.json")["cards"]
    }
    meteor: dict[str, Any] = {}
    for c in _data("escaping_extinction", "meteor.json")["cards"]:
        step = c["advance"]
        moves = (
            f"The Meteor moves {step} space{'s' if abs(step) != 1 else ''} closer."
            if step > 0
            else "The Meteor moves back one space; the map shakes."
        )
        hazard = "" if c["hazard"] in ("NONE", "EARTHQUAKE") else f" ({c['hazard']})"
        meteor[c["id"]] = {"name": c["name"], "text": moves + hazard.title()}
    return {
        "launch": world["launch"],
        "tiles": tiles,
        "dinos": dinos,
        "exploration": exploration,
        "rocket_docket": docket,
        "meteor": meteor,
    }


def dinosaurs_extinct() -> dict[str, Any]:
    events = _data("dinosaurs_extinct", "earth_events.json")
    return {"earth_events": events}


GAMES = {
    "cubosaurs": cubosaurs,
    "dinosaurs_extinct": dinosaurs_extinct,
    "escaping_extinction": escaping_extinction,
    "happy_little_dinosaurs": happy_little_dinosaurs,
}


@functools.cache
def content(game_type: str) -> dict[str, Any]:
    """The content of one game type (empty for a game with none, such as a
    game added without words of its own)."""
    make = GAMES.get(game_type)
    return make() if make else {}
