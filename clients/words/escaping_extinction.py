"""Escaping Extinction in words: the web table's
``games/escaping_extinction.js`` (its status, its commands' labels and its
events' sentences) for the terminal."""

from __future__ import annotations

from typing import Any

from clients.words.text import Ctx, Json, base_id, enum_words, words

TRAVEL_MODES = {
    "TRAVEL_MODE_PUSH": " (push on)",
    "TRAVEL_MODE_CAVE": " (through the Secret Caves)",
}

TITLE = "Escaping Extinction"


def dino_name(ctx: Ctx, dino: Any) -> str:
    key = str(dino or "").removeprefix("DINO_")
    known = (ctx.content.get("dinos") or {}).get(key)
    return str(known["name"]) if known else enum_words(dino, "DINO_")


def lookup(ctx: Ctx, group: str, card: Any) -> Json | None:
    every = ctx.content.get(group) or {}
    found: Json | None = every.get(card) or every.get(base_id(card))
    return found


def card_name(ctx: Ctx, card: Any) -> str:
    known = (
        lookup(ctx, "exploration", card)
        or lookup(ctx, "rocket_docket", card)
        or lookup(ctx, "meteor", card)
    )
    return str(known["name"]) if known else str(card or "a card")


def place_name(ctx: Ctx, position: Any) -> str:
    at = position or 0
    place: Json = next(
        (p for p in ctx.view.get("places") or [] if (p.get("position") or 0) == at),
        {},
    )
    if not place.get("revealed") and at != 0:
        return f"the unexplored place {at}"
    tile = lookup(ctx, "tiles", place.get("tile"))
    return str(tile["name"]) if tile else f"place {at}"


def resource(value: Any) -> str:
    return enum_words(value, "RESOURCE_")


def item(value: Any) -> str:
    return enum_words(value, "ITEM_")


def status(ctx: Ctx) -> str:
    v = ctx.view
    parts = [f"Round {v.get('round') or 0}."]
    if v.get("currentDino"):
        parts.append(
            f"{dino_name(ctx, v['currentDino'])}'s turn, "
            f"{v.get('actionsLeft') or 0} action(s) left."
        )
    pending = v.get("pending") or {}
    dino = dino_name(ctx, pending.get("dino"))
    kind = pending.get("kind")
    if kind == "PENDING_KIND_MAKE_ROOM":
        wanted = resource(pending.get("resource"))
        parts.append(f"{dino} must make room for {wanted} or leave it.")
    if kind == "PENDING_KIND_REDRAW":
        card = card_name(ctx, pending.get("card"))
        parts.append(f"{dino} may keep {card} or redraw.")
    if kind == "PENDING_KIND_SECRET_CAVES":
        parts.append(f"{dino} places the Secret Caves.")
    return " ".join(parts)


def table(ctx: Ctx) -> list[str]:
    """The Meteor, the Launchpad and each Dino, as the page shows them."""
    v = ctx.view
    launch = ctx.content.get("launch") or {}
    length = v.get("meteorTrackLength") or 10
    lines = [
        f"Meteor: {v.get('meteor') or 0} of {length} spaces. Launchpad: "
        f"{v.get('launchpadParts') or 0} of {launch.get('rocket_parts', '?')} "
        f"Rocket Parts, {v.get('launchpadWood') or 0} of {launch.get('wood', '?')} "
        "Wood.",
    ]
    docket = [card_name(ctx, c) for c in v.get("rocketDocketOpen") or []]
    if docket:
        lines.append(f"Rocket Docket: {words(docket)}.")
    control = v.get("control") or []
    for d in v.get("dinos") or []:
        seats = next(
            (c.get("seats") or [] for c in control if c.get("dino") == d.get("dino")),
            [],
        )
        held = [card_name(ctx, c) for c in d.get("heldCards") or []]
        players = words(ctx.who(s or 0) for s in seats)
        lines.append(
            f"{dino_name(ctx, d.get('dino'))} ({players}) "
            f"at {place_name(ctx, d.get('position'))}: Health {d.get('health') or 0}, "
            f"Food {d.get('food') or 0}, Wood {d.get('wood') or 0}, "
            f"Vines {d.get('vines') or 0}"
            f"{', carrying a Rocket Part' if d.get('rocketPart') else ''}"
            f"{f'; kept: {words(held)}' if held else ''}"
        )
    return lines


def label(key: str, c: Json, ctx: Ctx) -> str:  # noqa: C901 (a table)
    d = dino_name(ctx, c.get("dino"))
    match key:
        case "travel":
            mode = TRAVEL_MODES.get(c.get("mode") or "", "")
            return f"{d}: travel to {place_name(ctx, c.get('destination'))}{mode}"
        case "explore":
            gamble = " and gamble (double or nothing)" if c.get("gamble") else ""
            return f"{d}: explore{gamble}"
        case "resupply":
            return f"{d}: resupply at the Oasis"
        case "collectRocketPart":
            return f"{d}: collect the Rocket Part {card_name(ctx, c.get('card'))}"
        case "healTeammates":
            return f"{d}: heal the Dinos here"
        case "healWithVines":
            return f"{d}: spend a Vine to heal {dino_name(ctx, c.get('target'))}"
        case "giveItem":
            to = dino_name(ctx, c.get("recipient"))
            return f"{d}: give {item(c.get('item'))} to {to}"
        case "giveCard":
            to = dino_name(ctx, c.get("recipient"))
            return f"{d}: give {card_name(ctx, c.get('card'))} to {to}"
        case "acceptTrade":
            return f"{d}: accept the trade asked of it"
        case "declineTrade":
            return f"{d}: decline the trade asked of it"
        case "playCard":
            on = f" on {dino_name(ctx, c['target'])}" if c.get("target") else ""
            return f"{d}: play {card_name(ctx, c.get('card'))}{on}"
        case "makeRoom":
            return f"{d}: discard {resource(c.get('discard'))} to make room"
        case "leaveResource":
            return f"{d}: leave the resource"
        case "keepCard":
            return f"{d}: keep the card"
        case "redrawCard":
            return f"{d}: redraw the card"
        case "placeSecretCave":
            return f"{d}: place a Secret Cave at {place_name(ctx, c.get('position'))}"
        case "leaveSecretCaves":
            return f"{d}: do not place the Secret Caves"
        case "endTurn":
            return f"{d}: end the turn"
        case _:
            return ""


def describe(key: str, e: Json, ctx: Ctx) -> str | None:  # noqa: C901 (a table)
    def at(position: Any) -> str:
        return place_name(ctx, position)

    d = dino_name(ctx, e.get("dino"))
    card = card_name(ctx, e.get("card"))
    match key:
        case "worldSetUp":
            return (
                "The world was laid out face down around the Oasis and the decks "
                "shuffled."
            )
        case "rocketDocketCardRevealed":
            return f"Rocket Docket: {card} is wanted."
        case "turnBegan":
            return f"Round {e.get('round') or 0}: {d}'s turn."
        case "actionTaken":
            return ""
        case "dieRolled":
            colour = enum_words(e.get("colour"), "DIE_COLOUR_").lower()
            purpose = enum_words(e.get("purpose"), "ROLL_PURPOSE_").lower()
            return f"{d} rolled {e.get('number') or 0} ({colour}) {purpose}."
        case "dinoTravelled":
            food = f", spending {e['foodSpent']} Food" if e.get("foodSpent") else ""
            return (
                f"{d} travelled from {at(e.get('origin'))} to "
                f"{at(e.get('destination'))}{food}."
            )
        case "tarpitHeld":
            return f"{d} was held by the Tarpit."
        case "dinoReturnedToOasis":
            return f"{d} went back to the Oasis."
        case "tileRevealed":
            tile = lookup(ctx, "tiles", e.get("tile"))
            name = tile["name"] if tile else e.get("tile")
            return f"Revealed: {name} at place {e.get('position') or 0}."
        case "dinoDamaged":
            return (
                f"{d} took {e.get('amount') or 0} damage "
                f"(health {e.get('health') or 0})."
            )
        case "dinoHealed":
            return f"{d} healed {e.get('amount') or 0} (health {e.get('health') or 0})."
        case "vineSpent":
            return f"{d} spent a Vine."
        case "resourceTaken":
            return f"{d} took {resource(e.get('resource'))} from the tile."
        case "resourceGained":
            return f"{d} gained {resource(e.get('resource'))}."
        case "resourceReturned":
            return f"{d} returned {resource(e.get('resource'))} to the Supply."
        case "tokenReturned":
            at_place = e.get("position") or 0
            return f"A token at place {at_place} went back to the Supply."
        case "roomNeeded":
            return f"{d} has no room for {resource(e.get('resource'))}."
        case "roomMade":
            return f"{d} discarded {resource(e.get('discarded'))} to make room."
        case "resourceLeft":
            return f"{d} left {resource(e.get('resource'))} behind."
        case "explorationCardDrawn":
            return f"{d} drew {card}."
        case "redrawOffered":
            return f"{d} may redraw {card}."
        case "redrawDeclined":
            return f"{d} kept {card}."
        case "explorationCardRedrawn":
            return f"{d} redrew: {card}."
        case "explorationCardDiscarded":
            return f"{card} was discarded."
        case "explorationCardKept":
            return f"{d} kept {card} for later."
        case "explorationCardPlayed":
            on = f" on {dino_name(ctx, e['target'])}" if e.get("target") else ""
            return f"{d} played {card}{on}."
        case "explorationDeckReshuffled":
            return "The Exploration deck was reshuffled."
        case "extraActionGained":
            return f"{d} gained an extra action."
        case "lavaFlowPlaced":
            return f"A Lava Flow covers place {e.get('position') or 0}."
        case "secretCavePlacementOffered":
            return f"{d} may place the Secret Caves."
        case "secretCavesPlaced":
            return (
                f"Secret Caves opened at places {e.get('first') or 0} and "
                f"{e.get('second') or 0}."
            )
        case "secretCavesLeft":
            return f"{d} left the Secret Caves unplaced."
        case "resupplied":
            part = " and a Rocket Part" if e.get("rocketPart") else ""
            return (
                f"{d} resupplied: {e.get('food') or 0} Food, {e.get('wood') or 0} "
                f"Wood{part} to the Launchpad."
            )
        case "rocketPartCollected":
            return f"{d} collected the Rocket Part {card}."
        case "rocketDocketClosed":
            return "The Rocket Docket is complete."
        case "itemGiven":
            to = dino_name(ctx, e.get("recipient"))
            return f"{d} gave {item(e.get('item'))} to {to}."
        case "dinosHandedOver":
            handed = ", ".join(
                f"{dino_name(ctx, c.get('dino'))} is now played by seat "
                + " and ".join(str((s or 0) + 1) for s in c.get("seats") or [])
                for c in e.get("control") or []
            )
            return f"A player left: {handed}."
        case "tradeOffered":
            asked = item(e["item"]) if e.get("item") else card
            return (
                f"{dino_name(ctx, e.get('recipient'))}'s turn asks {d} for "
                f"{asked}: its seat accepts or declines."
            )
        case "tradeAccepted":
            return f"{d}'s seat accepted the trade."
        case "tradeDeclined":
            return f"{d}'s seat declined the trade."
        case "tradeOfferLapsed":
            return f"The trade asked of {d} lapsed unanswered."
        case "cardGiven":
            return f"{d} gave {card} to {dino_name(ctx, e.get('recipient'))}."
        case "turnEnded":
            return f"{d} ended the turn."
        case "meteorCardDrawn":
            return f"Meteor card: {card}."
        case "meteorMoved":
            return (
                f"The Meteor moved from {e.get('origin') or 0} to "
                f"{e.get('destination') or 0}."
            )
        case "earthquakeStruck":
            places = ", ".join(str(p) for p in e.get("positions") or [])
            return f"An earthquake shuffled places {places}."
        case "meteorDeckRanOut":
            return "The Meteor deck ran out."
        case "meteorHitEarth":
            return "The Meteor hit the Earth!"
        case "rocketLaunched":
            return "The Rocket launched: the Dinos escaped!"
        case _:
            return None
