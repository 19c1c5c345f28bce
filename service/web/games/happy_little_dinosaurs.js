// Happy Little Dinosaurs: the Disaster of the round, the played cards, every
// dinosaur's Escape track and Disaster area, your hand with what each card
// does; labels of the commands and the log in words.

import { baseId, cardBox, enumWords, h, table, words } from "../dom.js";

function card(ctx, id) {
  return ((ctx.content || {}).cards || {})[baseId(id)] || null;
}

function cardName(ctx, id) {
  if (!id) return "a card";
  const c = card(ctx, id);
  if (!c) return String(id);
  return c.kind === "point" ? `${c.name} (${c.value})` : c.name;
}

function names(ctx, ids) {
  return words((ids || []).map((id) => cardName(ctx, id)));
}

function cardShown(ctx, id, note) {
  const c = card(ctx, id);
  return cardBox(id, cardName(ctx, id), c ? c.text : "", note);
}

function player(ctx, seat) {
  return (ctx.view.players || []).find((p) => (p.seat || 0) === seat) || {};
}

function dinosaurName(ctx, dinosaur) {
  const key = String(dinosaur || "").replace(/^DINOSAUR_/, "");
  const known = ((ctx.content || {}).dinosaurs || {})[key];
  return known ? known.name : enumWords(dinosaur, "DINOSAUR_");
}

const PHASES = {
  PHASE_COMMIT: "Everyone plays a Point card face down.",
  PHASE_EFFECTS: "Effects of the played cards.",
  PHASE_SCORING: "Scoring: Instants may be played.",
  PHASE_SUDDEN_DEATH: "Sudden Death between the lowest.",
  PHASE_DISASTER: "The lowest faces the Disaster.",
  PHASE_AFTER_DISASTER: "After the Disaster: discard or keep the hand.",
  PHASE_DISCARD: "Discarding.",
};

const REASONS = {
  BOTTOM_REASON_ALL_TIED: "everyone tied",
  BOTTOM_REASON_INSURANCE: "it was insured",
  BOTTOM_REASON_SUDDEN_DEATH_OUT_OF_CARDS: "Sudden Death ran out of cards",
};

export default {
  title: "Happy Little Dinosaurs",

  /** The rules in brief, behind the page's help link. */
  help(ctx) {
    const dinos = Object.values((ctx.content || {}).dinosaurs || {});
    return [
      "Each round a Disaster is flipped and everyone plays a Point card face down; then they are revealed and scored (card value, plus or minus your dinosaur's trait when the Disaster is of that type, plus bonuses).",
      "The highest score moves up the Escape track; a single lowest score faces the Disaster (a tie for lowest plays Sudden Death). Instants may be played in their windows.",
      "Elimination: a player whose Disasters come to three of one type, or three of different types (Meteors are wild), is out; their hand is discarded.",
      `Reaching ${(ctx.content || {}).winning_escape || 50} on the Escape track wins at once (equal totals share); the last dinosaur not eliminated wins too.`,
      dinos.length ? `Traits: ${dinos.map((d) => `${d.name} ${d.traits}`).join("; ")}.` : "",
    ].filter(Boolean);
  },

  status(ctx) {
    const v = ctx.view;
    const parts = [`Round ${v.round || 0}.`];
    if (v.disaster) parts.push(`Disaster: ${cardName(ctx, v.disaster)}.`);
    parts.push(PHASES[v.phase] || enumWords(v.phase, "PHASE_") + ".");
    if (v.effect) parts.push(`${ctx.who(v.effectSeat || 0)} may use ${cardName(ctx, v.effect)}.`);
    return parts.join(" ");
  },

  hand(ctx) {
    const v = ctx.view;
    const parts = ctx.you.map((seat) => {
      const p = player(ctx, seat);
      return h(
        "div",
        { class: "hand", dataset: { seat } },
        ctx.you.length > 1 ? h("h3", {}, ctx.who(seat)) : null,
        h("div", { class: "cards" }, (p.hand || []).map((id) => cardShown(ctx, id))),
        (p.hand || []).length ? null : h("p", { class: "hint" }, "No cards in hand."),
        p.commitment ? h("p", {}, `You played face down: ${cardName(ctx, p.commitment)}.`) : null,
      );
    });
    if ((v.lookedAt || []).length) {
      parts.push(h("h3", {}, `The hand you are looking at (${ctx.who(v.effectTarget || 0)})`));
      parts.push(h("div", { class: "cards" }, v.lookedAt.map((id) => cardShown(ctx, id))));
    }
    if ((v.peeked || []).length) {
      parts.push(h("h3", {}, "The top cards you are looking at"));
      parts.push(h("div", { class: "cards" }, v.peeked.map((id) => cardShown(ctx, id))));
    }
    return { title: "Your hand", body: h("div", {}, parts) };
  },

  board(ctx) {
    const v = ctx.view;
    const goal = (ctx.content || {}).winning_escape || 50;
    const track = (v.players || []).map((p) => {
      const escape = p.escape || 0;
      return h(
        "div",
        { class: "escape-row", dataset: { seat: p.seat || 0 } },
        h("span", { class: "escape-name" }, `${ctx.who(p.seat || 0)} (${dinosaurName(ctx, p.dinosaur)})`),
        h(
          "span",
          { class: "escape-bar" },
          h("span", { class: "escape-fill", style: `width: ${Math.min(100, (100 * escape) / goal)}%` }),
        ),
        h("span", {}, `${escape} / ${goal}${p.eliminated ? " (out)" : ""}`),
      );
    });
    return h(
      "div",
      {},
      h("h3", {}, `Escape track (${goal} to win)`),
      h("div", { class: "escape" }, track),
      h(
        "p",
        {},
        v.disaster ? `This round's Disaster: ${cardName(ctx, v.disaster)}. ` : "",
        `Main deck: ${v.mainDeckSize || 0} cards. Disaster deck: ${v.disasterDeckSize || 0}. Discard pile: ${(v.discard || []).length}.`,
      ),
      (v.table || []).length ? [h("h3", {}, "On the table"), h("p", {}, names(ctx, v.table))] : null,
    );
  },

  players(ctx) {
    const v = ctx.view;
    return table(
      ["Seat", "Dinosaur", "Cards in hand", "Played", "Score", "Escape", "Disaster area"],
      (v.players || []).map((p) => ({
        attrs: { dataset: { seat: p.seat || 0 } },
        cells: [
          ctx.who(p.seat || 0),
          `${dinosaurName(ctx, p.dinosaur)}${p.eliminated ? " (eliminated)" : ""}`,
          String(p.handSize || 0),
          p.played ? cardName(ctx, p.played) : p.committed ? "face down" : "–",
          p.score !== undefined ? `${p.score}${p.bonus ? ` (bonus ${p.bonus})` : ""}` : "–",
          String(p.escape || 0),
          (p.disasters || []).map((d) => cardName(ctx, d)).join(", ") || "empty",
        ],
      })),
      { class: "scores" },
    );
  },

  label(key, c, ctx) {
    const target = (seat) => ctx.who(seat || 0);
    switch (key) {
      case "playPointCard":
        return `Play ${cardName(ctx, c.card)}`;
      case "passEffect":
        return "Do not use the effect";
      case "addPointCardValue":
        return `Discard ${cardName(ctx, c.card)} to add its value`;
      case "lookAtHand":
        return `Look at ${target(c.target)}'s hand`;
      case "takeCard":
        return `Take ${cardName(ctx, c.card)}`;
      case "swapWithNeighbour":
        return `Swap played cards with ${target(c.target)}`;
      case "discardCards":
        return `Discard ${names(ctx, c.cards)}`;
      case "lookAtTopCards":
        return "Look at the top cards of the Main deck";
      case "keepCard":
        return `Keep ${cardName(ctx, c.card)}`;
      case "swapPlayedCards":
        return `Swap the played cards of ${target(c.first)} and ${target(c.second)}`;
      case "playScoreBooster":
        return `Play ${cardName(ctx, c.card)} on ${target(c.target)}`;
      case "playScoreSapper":
        return `Play ${cardName(ctx, c.card)} on ${target(c.target)}`;
      case "playScoreInversion":
        return `Play ${cardName(ctx, c.card)}`;
      case "passInstant":
        return "Play no Instant";
      case "playDisasterInsurance":
        return `Play ${cardName(ctx, c.card)}`;
      case "playDisasterRedirect":
        return `Play ${cardName(ctx, c.card)}: send the Disaster to ${target(c.target)}`;
      case "takeDisaster":
        return "Take the Disaster";
      case "discardCard":
        return `Discard ${cardName(ctx, c.card)}`;
      case "keepHand":
        return "Keep your hand";
      default:
        return "";
    }
  },

  describe(key, e, ctx) {
    const who = (seat) => ctx.who(seat || 0);
    const seatsOf = (map) =>
      Object.entries(map || {}).map(([seat, value]) => [Number(seat), value]);
    switch (key) {
      case "gameSetUp":
        return `The dinosaurs are ${words((e.dinosaurs || []).map((d) => dinosaurName(ctx, d)))}; the decks were shuffled.`;
      case "cardsDrawn":
        return (e.cards || []).length
          ? `${who(e.seat)} drew ${names(ctx, e.cards)}.`
          : `${who(e.seat)} drew ${e.count || 0} card(s).`;
      case "mainDeckReshuffled":
        return "The discard pile was shuffled into a new Main deck.";
      case "disasterFlipped":
        return `Round ${e.round || 0}: the Disaster is ${cardName(ctx, e.card)}.`;
      case "cardsDiscarded":
        return `${who(e.seat)} discarded ${names(ctx, e.cards)}.`;
      case "pointCardCommitted":
        return e.card
          ? `${who(e.seat)} played ${cardName(ctx, e.card)} face down.`
          : `${who(e.seat)} played a card face down.`;
      case "pointCardsRevealed":
        return `Revealed: ${seatsOf(e.cards).map(([s, c]) => `${who(s)} ${cardName(ctx, c)}`).join(", ")}.`;
      case "effectWindowOpened":
        return `${who(e.seat)} may use ${cardName(ctx, e.card)}.`;
      case "effectPassed":
        return `${who(e.seat)} did not use ${cardName(ctx, e.card)}.`;
      case "pointCardValueAdded":
        return `${who(e.seat)} discarded ${cardName(ctx, e.discarded)} to add ${e.value || 0}.`;
      case "handLookedAt":
        return `${who(e.seat)} looked at ${who(e.target)}'s hand.`;
      case "cardTaken":
        return `${who(e.seat)} took ${e.card ? cardName(ctx, e.card) : "a card"} from ${who(e.target)}.`;
      case "playedCardsSwapped":
        return `${who(e.seat)} swapped the played cards of ${who(e.first)} and ${who(e.second)}.`;
      case "effectCardsDiscarded":
        return `${who(e.seat)} discarded ${names(ctx, e.cards)} with ${cardName(ctx, e.card)}.`;
      case "topCardsLookedAt":
        return `${who(e.seat)} looked at the top ${e.count || (e.cards || []).length} card(s) of the Main deck.`;
      case "topCardKept":
        return `${who(e.seat)} kept ${e.kept ? cardName(ctx, e.kept) : "a card"} and discarded ${names(ctx, e.discarded)}.`;
      case "scoresTallied":
        return `Scores: ${seatsOf(e.scores).map(([s, v]) => `${who(s)} ${v}`).join(", ")}.`;
      case "mouthTrapSprung":
        return `${who(e.seat)}'s Mouth Trap swapped the highest and lowest scores.`;
      case "scoreBoosterPlayed":
        return `${who(e.seat)} played ${cardName(ctx, e.card)} on ${who(e.target)}: +${e.amount || 0}.`;
      case "scoreSapperPlayed":
        return `${who(e.seat)} played ${cardName(ctx, e.card)} on ${who(e.target)}: -${e.amount || 0}.`;
      case "scoreInversionPlayed":
        return `${who(e.seat)} played ${cardName(ctx, e.card)}: highest and lowest swap.`;
      case "scoresSwapped":
        return `Scores swapped: ${seatsOf(e.scores).map(([s, v]) => `${who(s)} ${v}`).join(", ") || "all tied, nobody moved"}.`;
      case "instantPassed":
        return `${who(e.seat)} played no Instant.`;
      case "pointsCollected":
        return `Points collected: ${seatsOf(e.points).map(([s, v]) => `${who(s)} +${v}`).join(", ")}.`;
      case "disasterSentToBottom":
        return `The Disaster ${cardName(ctx, e.card)} went to the bottom of the deck (${REASONS[e.reason] || "no one takes it"}).`;
      case "suddenDeathStarted":
        return `Sudden Death between ${words((e.seats || []).map(who))}.`;
      case "suddenDeathCardsRevealed":
        return `Sudden Death: ${seatsOf(e.cards).map(([s, c]) => `${who(s)} ${cardName(ctx, c)}`).join(", ")}; lowest: ${words((e.lowest || []).map(who))}.`;
      case "disasterFaced":
        return `${who(e.seat)} faces the Disaster.`;
      case "disasterInsurancePlayed":
        return `${who(e.seat)} played ${cardName(ctx, e.card)}.`;
      case "disasterRedirectPlayed":
        return `${who(e.seat)} played ${cardName(ctx, e.card)}: the Disaster goes to ${who(e.target)}.`;
      case "disasterTaken":
        return `${who(e.seat)} took the Disaster ${cardName(ctx, e.card)} into their Disaster area.`;
      case "playerEliminated":
        return `${who(e.seat)} was eliminated.`;
      case "discardOffered":
        return `${who(e.seat)} may discard their hand.`;
      case "disasterDiscardChosen":
        return e.card ? `${who(e.seat)} discarded ${cardName(ctx, e.card)}.` : `${who(e.seat)} kept their hand.`;
      case "escapeMoved":
        return `Escape: ${seatsOf(e.moves).map(([s, v]) => `${who(s)} +${v}`).join(", ") || "nobody moved"}.`;
      case "tableCleared":
        return "The table was cleared.";
      case "playerWithdrew":
        return `${who(e.seat)} left the game: its dinosaur races on for nobody.`;
      case "gameWon":
        return `${words((e.winners || []).map(who))} won (${enumWords(e.result)}).`;
      default:
        return undefined;
    }
  },
};
