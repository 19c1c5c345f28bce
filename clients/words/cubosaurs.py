"""Cubosaurs in words: the web table's ``games/cubosaurs.js`` (its status,
its commands' labels and its events' sentences) for the terminal."""

from __future__ import annotations

from typing import Any

from clients.words.text import Ctx, Json, enum_words, seat_of

TITLE = "Cubosaurs"


def kind_name(ctx: Ctx, kind: Any) -> str:
    key = str(kind or "").removeprefix("KIND_")
    known = (ctx.content.get("kinds") or {}).get(key)
    return str(known["name"]) if known else enum_words(kind, "KIND_")


def cards_by_id(ctx: Ctx) -> dict[int, Json]:
    """Every card the view shows, by id (collections, packet, discards)."""
    v = ctx.view
    shown = [
        *(v.get("packet") or []),
        *(v.get("discarded") or []),
        *(c for p in v.get("players") or [] for c in p.get("collection") or []),
    ]
    return {c.get("id") or 0: c for c in shown}


def card_label(ctx: Ctx, card: Json) -> str:
    extra = []
    if card.get("dna"):
        extra.append("DNA")
    if card.get("paired") or card.get("alone"):
        extra.append(
            f"paired {card.get('paired') or 0}, alone {card.get('alone') or 0}"
        )
    more = f" ({'; '.join(extra)})" if extra else ""
    return f"{kind_name(ctx, card.get('kind'))}{more}"


def card_name(ctx: Ctx, card_id: Any) -> str:
    card = cards_by_id(ctx).get(card_id or 0) or (ctx.content.get("cards") or {}).get(
        str(card_id or 0)
    )
    if not card:
        return f"card {card_id or 0}"
    return card_label(ctx, card)


def tile_of(ctx: Ctx, tile_id: Any) -> Json | None:
    v = ctx.view
    tiles = [
        *(v.get("offer") or []),
        *(t for p in v.get("players") or [] for t in p.get("tiles") or []),
    ]
    return next((t for t in tiles if (t.get("id") or 0) == (tile_id or 0)), None)


def status(ctx: Ctx) -> str:
    v = ctx.view
    round_ = f"Round {v.get('round') or 0} of {v.get('rounds') or 0}."
    turn = ctx.who(seat_of(v.get("turn")))
    if v.get("debts"):
        return f"{round_} DNA tokens are owed."
    if v.get("phase") == "PHASE_ACTED":
        return f"{round_} {turn} may still buy a tile or end the turn."
    if v.get("phase") == "PHASE_TURN":
        return f"{round_} {turn} takes or passes the packet."
    return f"{round_} {enum_words(v.get('phase'), 'PHASE_')}."


def table(ctx: Ctx) -> list[str]:
    """The packet, each seat's collection and scores, as the page shows."""
    v = ctx.view
    packet = ", ".join(card_label(ctx, c) for c in v.get("packet") or [])
    lines = [f"The packet: {packet or 'empty'}"]
    for t in v.get("offer") or []:
        lines.append(f"DNA tile on offer: {t.get('name')} (costs {t.get('cost') or 0})")
    for p in v.get("players") or []:
        collection = ", ".join(card_label(ctx, c) for c in p.get("collection") or [])
        tiles = ", ".join(t.get("name") or "" for t in p.get("tiles") or [])
        lines.append(
            f"{ctx.who(seat_of(p.get('seat')))}: {collection or 'no cards'}; "
            f"{p.get('dnaTokens') or 0} DNA tokens"
            f"{f'; tiles {tiles}' if tiles else ''}; total {p.get('total') or 0}"
        )
    return lines


def label(key: str, c: Json, ctx: Ctx) -> str:
    match key:
        case "takePacket":
            kinds = ", ".join(
                kind_name(ctx, x.get("kind")) for x in ctx.view.get("packet") or []
            )
            return f"Take the packet ({kinds or 'empty'})"
        case "passPacket":
            return (
                f"Add your {card_name(ctx, c.get('card'))} to the packet and pass it on"
            )
        case "buyTile":
            tile = tile_of(ctx, c.get("tile"))
            name = (
                f"{tile.get('name')} (costs {tile.get('cost') or 0})"
                if tile
                else f"tile {c.get('tile') or 0}"
            )
            if "card" in c:
                return f"Buy {name}, aimed at {card_name(ctx, c['card'])}"
            return f"Buy {name}"
        case "endTurn":
            return "End your turn"
        case "claimDnaTokens":
            giver = ctx.who(seat_of(c.get("fromSeat")))
            return f"Claim the DNA tokens you are owed from {giver}"
        case _:
            return ""


def describe(key: str, e: Json, ctx: Ctx) -> str | None:
    def who(seat: Any) -> str:
        return ctx.who(seat_of(seat))

    seat = who(e.get("seat"))
    match key:
        case "roundDealt":
            return (
                f"Round {e.get('round') or 0} was dealt: "
                f"{who(e.get('firstSeat'))} plays first."
            )
        case "cardDrawn":
            card = card_name(ctx, e.get("card"))
            return f"{seat} drew {card} into the empty packet."
        case "packetTaken":
            return f"{seat} took the packet ({len(e.get('cards') or [])} cards)."
        case "packetPassed":
            return (
                f"{seat} added {card_name(ctx, e.get('card'))} and passed the "
                f"packet to {who(e.get('toSeat'))}."
            )
        case "tileBought":
            tile = tile_of(ctx, e.get("tile"))
            name = tile.get("name") if tile else e.get("tile") or 0
            return f"{seat} bought the DNA tile {name}."
        case "dnaTokensGained":
            giver = f" from {who(e['fromSeat'])}" if "fromSeat" in e else ""
            return f"{seat} gained {e.get('amount') or 0} DNA token(s){giver}."
        case "dnaTokensOwed":
            return f"{seat} is owed {e.get('amount') or 0} DNA token(s)."
        case "dnaTokensForgone":
            return f"{seat} went without {e.get('amount') or 0} DNA token(s)."
        case "turnEnded":
            return f"{seat} ended the turn; {who(e.get('nextSeat'))} is next."
        case "roundScored":
            scores = ", ".join(
                f"{who(s.get('seat'))} {s.get('total') or 0}"
                for s in e.get("scores") or []
            )
            return f"Round {e.get('round') or 0} scored: {scores}."
        case "playerWithdrew":
            return f"{seat} left the game: its collection scores for nobody."
        case "gameScored":
            totals = ", ".join(
                f"{who(i)} {t}" for i, t in enumerate(e.get("totals") or [])
            )
            return f"Final totals: {totals}."
        case _:
            return None
