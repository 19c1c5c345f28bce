"""The web table's card and board names, written from the games' own data.

The views and events of the API carry card ids (``pet_rock_3``,
``trail_mix_1``) and enum names (``KIND_T_REX``, ``DINO_REX``); the web table
shows names and what each card does. This script writes
``service/web/content/<game>.json`` from the data files under ``domain/``
(names, values, costs) and the short texts below (one sentence per effect
code of the data, in words a player reads). It holds no rules: what is legal
comes from the API only.

    .venv/bin/python scripts/web_content.py          # write the files
    .venv/bin/python scripts/web_content.py --check  # exit 1 when stale

``tests/web/test_content.py`` runs the check.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "service" / "web" / "content"

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


def rendered() -> dict[Path, str]:
    """Each file's path and text."""
    return {
        OUT / f"{game}.json": json.dumps(make(), indent=1, sort_keys=True) + "\n"
        for game, make in GAMES.items()
    }


def main(argv: list[str]) -> int:
    stale = [p for p, text in rendered().items() if not _same(p, text)]
    if "--check" in argv:
        for path in stale:
            print(f"stale: {path} (run .venv/bin/python scripts/web_content.py)")
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for path, text in rendered().items():
        path.write_text(text, encoding="utf-8")
    return 0


def _same(path: Path, text: str) -> bool:
    return path.exists() and path.read_text(encoding="utf-8") == text


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
