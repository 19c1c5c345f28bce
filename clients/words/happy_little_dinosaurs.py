"""Happy Little Dinosaurs in words: the web table's
``games/happy_little_dinosaurs.js`` (its status, its commands' labels and
its events' sentences) for the terminal."""

from __future__ import annotations

from typing import Any

from clients.words.text import Ctx, Json, base_id, enum_words, seat_of, words

PHASES = {
    "PHASE_COMMIT": "Everyone plays a Point card face down.",
    "PHASE_EFFECTS": "Effects of the played cards.",
    "PHASE_SCORING": "Scoring: Instants may be played.",
    "PHASE_SUDDEN_DEATH": "Sudden Death between the lowest.",
    "PHASE_DISASTER": "The lowest faces the Disaster.",
    "PHASE_AFTER_DISASTER": "After the Disaster: discard or keep the hand.",
    "PHASE_DISCARD": "Discarding.",
}

REASONS = {
    "BOTTOM_REASON_ALL_TIED": "everyone tied",
    "BOTTOM_REASON_INSURANCE": "it was insured",
    "BOTTOM_REASON_SUDDEN_DEATH_OUT_OF_CARDS": "Sudden Death ran out of cards",
}

TITLE = "Happy Little Dinosaurs"


def card_name(ctx: Ctx, card: Any) -> str:
    if not card:
        return "a card"
    known = (ctx.content.get("cards") or {}).get(base_id(card))
    if not known:
        return str(card)
    if known.get("kind") == "point":
        return f"{known['name']} ({known.get('value')})"
    return str(known["name"])


def names(ctx: Ctx, cards: list[Any] | None) -> str:
    return words(card_name(ctx, c) for c in cards or [])


def dinosaur_name(ctx: Ctx, dinosaur: Any) -> str:
    key = str(dinosaur or "").removeprefix("DINOSAUR_")
    known = (ctx.content.get("dinosaurs") or {}).get(key)
    return str(known["name"]) if known else enum_words(dinosaur, "DINOSAUR_")


def status(ctx: Ctx) -> str:
    v = ctx.view
    parts = [f"Round {v.get('round') or 0}."]
    if v.get("disaster"):
        parts.append(f"Disaster: {card_name(ctx, v['disaster'])}.")
    phase = v.get("phase") or ""
    parts.append(PHASES.get(phase) or enum_words(phase, "PHASE_") + ".")
    if v.get("effect"):
        seat = seat_of(v.get("effectSeat"))
        parts.append(f"{ctx.who(seat)} may use {card_name(ctx, v['effect'])}.")
    return " ".join(parts)


def table(ctx: Ctx) -> list[str]:
    """Each player's row of the page's players table, your hand, the goal."""
    v = ctx.view
    goal = ctx.content.get("winning_escape") or 50
    lines = [f"Escape track: {goal} to win."]
    for p in v.get("players") or []:
        seat = seat_of(p.get("seat"))
        out = " (eliminated)" if p.get("eliminated") else ""
        played = (
            f", played {card_name(ctx, p['played'])}"
            if p.get("played")
            else ", played face down"
            if p.get("committed")
            else ""
        )
        disasters = ", ".join(card_name(ctx, d) for d in p.get("disasters") or [])
        lines.append(
            f"{ctx.who(seat)} ({dinosaur_name(ctx, p.get('dinosaur'))}{out}): "
            f"escape {p.get('escape') or 0}, {p.get('handSize') or 0} cards in "
            f"hand{played}; Disaster area: {disasters or 'empty'}"
        )
        if ctx.is_you(seat):
            hand = names(ctx, p.get("hand")) if p.get("hand") else "no cards"
            lines.append(f"  your hand: {hand}")
    if v.get("lookedAt"):
        lines.append(f"The hand you are looking at: {names(ctx, v['lookedAt'])}")
    if v.get("peeked"):
        lines.append(f"The top cards you are looking at: {names(ctx, v['peeked'])}")
    return lines


def label(key: str, c: Json, ctx: Ctx) -> str:  # noqa: C901 (a table)
    def target(seat: Any) -> str:
        return ctx.who(seat_of(seat))

    card = card_name(ctx, c.get("card"))
    match key:
        case "playPointCard":
            return f"Play {card}"
        case "passEffect":
            return "Do not use the effect"
        case "addPointCardValue":
            return f"Discard {card} to add its value"
        case "lookAtHand":
            return f"Look at {target(c.get('target'))}'s hand"
        case "takeCard":
            return f"Take {card}"
        case "swapWithNeighbour":
            return f"Swap played cards with {target(c.get('target'))}"
        case "discardCards":
            return f"Discard {names(ctx, c.get('cards'))}"
        case "lookAtTopCards":
            return "Look at the top cards of the Main deck"
        case "keepCard":
            return f"Keep {card}"
        case "swapPlayedCards":
            return (
                f"Swap the played cards of {target(c.get('first'))} and "
                f"{target(c.get('second'))}"
            )
        case "playScoreBooster" | "playScoreSapper":
            return f"Play {card} on {target(c.get('target'))}"
        case "playScoreInversion" | "playDisasterInsurance":
            return f"Play {card}"
        case "passInstant":
            return "Play no Instant"
        case "playDisasterRedirect":
            return f"Play {card}: send the Disaster to {target(c.get('target'))}"
        case "takeDisaster":
            return "Take the Disaster"
        case "discardCard":
            return f"Discard {card}"
        case "keepHand":
            return "Keep your hand"
        case _:
            return ""


def _seats(mapping: Any) -> list[tuple[int, Any]]:
    """A map by seat in seat order (as a JavaScript object orders its
    integer keys)."""
    return sorted((int(seat), value) for seat, value in (mapping or {}).items())


def describe(key: str, e: Json, ctx: Ctx) -> str | None:  # noqa: C901 (a table)
    def who(seat: Any) -> str:
        return ctx.who(seat_of(seat))

    seat = who(e.get("seat"))
    card = card_name(ctx, e.get("card"))
    match key:
        case "gameSetUp":
            dinosaurs = words(dinosaur_name(ctx, d) for d in e.get("dinosaurs") or [])
            return f"The dinosaurs are {dinosaurs}; the decks were shuffled."
        case "cardsDrawn":
            if e.get("cards"):
                return f"{seat} drew {names(ctx, e['cards'])}."
            return f"{seat} drew {e.get('count') or 0} card(s)."
        case "mainDeckReshuffled":
            return "The discard pile was shuffled into a new Main deck."
        case "disasterFlipped":
            return f"Round {e.get('round') or 0}: the Disaster is {card}."
        case "cardsDiscarded":
            return f"{seat} discarded {names(ctx, e.get('cards'))}."
        case "pointCardCommitted":
            if e.get("card"):
                return f"{seat} played {card} face down."
            return f"{seat} played a card face down."
        case "pointCardsRevealed":
            shown = ", ".join(
                f"{who(s)} {card_name(ctx, c)}" for s, c in _seats(e.get("cards"))
            )
            return f"Revealed: {shown}."
        case "effectWindowOpened":
            return f"{seat} may use {card}."
        case "effectPassed":
            return f"{seat} did not use {card}."
        case "pointCardValueAdded":
            return (
                f"{seat} discarded {card_name(ctx, e.get('discarded'))} to add "
                f"{e.get('value') or 0}."
            )
        case "handLookedAt":
            return f"{seat} looked at {who(e.get('target'))}'s hand."
        case "cardTaken":
            taken = card if e.get("card") else "a card"
            return f"{seat} took {taken} from {who(e.get('target'))}."
        case "playedCardsSwapped":
            return (
                f"{seat} swapped the played cards of {who(e.get('first'))} and "
                f"{who(e.get('second'))}."
            )
        case "effectCardsDiscarded":
            return f"{seat} discarded {names(ctx, e.get('cards'))} with {card}."
        case "topCardsLookedAt":
            count = e.get("count") or len(e.get("cards") or [])
            return f"{seat} looked at the top {count} card(s) of the Main deck."
        case "topCardKept":
            kept = card_name(ctx, e["kept"]) if e.get("kept") else "a card"
            discarded = names(ctx, e.get("discarded"))
            return f"{seat} kept {kept} and discarded {discarded}."
        case "scoresTallied":
            scores = ", ".join(f"{who(s)} {v}" for s, v in _seats(e.get("scores")))
            return f"Scores: {scores}."
        case "mouthTrapSprung":
            return f"{seat}'s Mouth Trap swapped the highest and lowest scores."
        case "scoreBoosterPlayed":
            return (
                f"{seat} played {card} on {who(e.get('target'))}: "
                f"+{e.get('amount') or 0}."
            )
        case "scoreSapperPlayed":
            return (
                f"{seat} played {card} on {who(e.get('target'))}: "
                f"-{e.get('amount') or 0}."
            )
        case "scoreInversionPlayed":
            return f"{seat} played {card}: highest and lowest swap."
        case "scoresSwapped":
            scores = ", ".join(f"{who(s)} {v}" for s, v in _seats(e.get("scores")))
            return f"Scores swapped: {scores or 'all tied, nobody moved'}."
        case "instantPassed":
            return f"{seat} played no Instant."
        case "pointsCollected":
            points = ", ".join(f"{who(s)} +{v}" for s, v in _seats(e.get("points")))
            return f"Points collected: {points}."
        case "disasterSentToBottom":
            reason = REASONS.get(e.get("reason") or "") or "no one takes it"
            return f"The Disaster {card} went to the bottom of the deck ({reason})."
        case "suddenDeathStarted":
            return (
                f"Sudden Death between {words(who(s) for s in e.get('seats') or [])}."
            )
        case "suddenDeathCardsRevealed":
            shown = ", ".join(
                f"{who(s)} {card_name(ctx, c)}" for s, c in _seats(e.get("cards"))
            )
            lowest = words(who(s) for s in e.get("lowest") or [])
            return f"Sudden Death: {shown}; lowest: {lowest}."
        case "disasterFaced":
            return f"{seat} faces the Disaster."
        case "disasterInsurancePlayed":
            return f"{seat} played {card}."
        case "disasterRedirectPlayed":
            return f"{seat} played {card}: the Disaster goes to {who(e.get('target'))}."
        case "disasterTaken":
            return f"{seat} took the Disaster {card} into their Disaster area."
        case "playerEliminated":
            return f"{seat} was eliminated."
        case "discardOffered":
            return f"{seat} may discard their hand."
        case "disasterDiscardChosen":
            if e.get("card"):
                return f"{seat} discarded {card}."
            return f"{seat} kept their hand."
        case "escapeMoved":
            moves = ", ".join(f"{who(s)} +{v}" for s, v in _seats(e.get("moves")))
            return f"Escape: {moves or 'nobody moved'}."
        case "tableCleared":
            return "The table was cleared."
        case "playerWithdrew":
            return f"{seat} left the game: its dinosaur races on for nobody."
        case "gameWon":
            winners = words(who(s) for s in e.get("winners") or [])
            return f"{winners} won ({enum_words(e.get('result'))})."
        case _:
            return None
