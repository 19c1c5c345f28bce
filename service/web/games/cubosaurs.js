// Cubosaurs: the packet going round, every seat's collection, DNA tokens and
// tiles, scores by round; labels of the commands and the log in words.

import { cardBox, enumWords, h, table } from "../dom.js";

function kindName(ctx, kind) {
  const key = String(kind || "").replace(/^KIND_/, "");
  const known = ((ctx.content || {}).kinds || {})[key];
  return known ? known.name : enumWords(kind, "KIND_");
}

function kindText(ctx, kind) {
  const key = String(kind || "").replace(/^KIND_/, "");
  const known = ((ctx.content || {}).kinds || {})[key];
  return known ? known.text : "";
}

/** Every card the view shows, by id (collections, packet, discards). */
function cardsById(ctx) {
  const v = ctx.view;
  const all = new Map();
  for (const c of [
    ...(v.packet || []),
    ...(v.discarded || []),
    ...(v.players || []).flatMap((p) => p.collection || []),
  ]) {
    all.set(c.id || 0, c);
  }
  return all;
}

function cardName(ctx, id) {
  const card =
    cardsById(ctx).get(id || 0) || ((ctx.content || {}).cards || {})[String(id || 0)];
  if (!card) return `card ${id || 0}`;
  return cardLabel(ctx, card);
}

function cardLabel(ctx, card) {
  const extra = [];
  if (card.dna) extra.push("DNA");
  if (card.paired || card.alone) extra.push(`paired ${card.paired || 0}, alone ${card.alone || 0}`);
  return `${kindName(ctx, card.kind)}${extra.length ? ` (${extra.join("; ")})` : ""}`;
}

function tileOf(ctx, id) {
  const v = ctx.view;
  const tiles = [...(v.offer || []), ...(v.players || []).flatMap((p) => p.tiles || [])];
  return tiles.find((t) => (t.id || 0) === (id || 0));
}

function player(ctx, seat) {
  return (ctx.view.players || []).find((p) => (p.seat || 0) === seat) || {};
}

function cardList(ctx, cards) {
  return h(
    "div",
    { class: "cards small" },
    (cards || []).map((c) => cardBox(`card-${c.id || 0}`, cardLabel(ctx, c), kindText(ctx, c.kind))),
  );
}

export default {
  title: "Cubosaurs",

  /** The rules in brief, behind the page's help link. */
  help(ctx) {
    const kinds = Object.values((ctx.content || {}).kinds || {});
    return [
      "The packet goes round the table: on your turn take it into your collection or pass it on. At the end each kind scores as its card says.",
      ...kinds.map((k) => `${k.name}: ${k.text}`),
    ];
  },

  /** The game's options at creation (strata.games.cubosaurs.v1.Options). */
  options: [
    { name: "advanced", label: "Advanced mode (DNA tokens and DNA tiles)", type: "checkbox" },
    { name: "rounds", label: "Rounds (0: the rulebook's)", type: "number", min: 0, max: 9, value: 0 },
  ],

  status(ctx) {
    const v = ctx.view;
    const round = `Round ${v.round || 0} of ${v.rounds || 0}.`;
    if ((v.debts || []).length) return `${round} DNA tokens are owed.`;
    if (v.phase === "PHASE_ACTED") return `${round} ${ctx.who(v.turn || 0)} may still buy a tile or end the turn.`;
    if (v.phase === "PHASE_TURN") return `${round} ${ctx.who(v.turn || 0)} takes or passes the packet.`;
    return `${round} ${enumWords(v.phase, "PHASE_")}.`;
  },

  hand(ctx) {
    const parts = ctx.you.map((seat) => {
      const p = player(ctx, seat);
      return h(
        "div",
        {},
        h("p", {}, `${ctx.who(seat)}: ${p.dnaTokens || 0} DNA tokens, this round's score so far ${(p.roundScore || {}).total || 0}.`),
        cardList(ctx, p.collection),
        (p.tiles || []).length
          ? h("div", { class: "cards small" }, (p.tiles || []).map((t) => cardBox(`tile-${t.id || 0}`, t.name, t.text)))
          : null,
      );
    });
    return { title: "Your collection", body: h("div", {}, parts) };
  },

  board(ctx) {
    const v = ctx.view;
    return h(
      "div",
      {},
      h("h3", {}, `The packet (passed to ${ctx.who(v.turn || 0)})`),
      cardList(ctx, v.packet),
      h(
        "p",
        {},
        `Round ${v.round || 0} of ${v.rounds || 0}. Passing ${(v.direction || 1) > 0 ? "to the next seat up" : "to the next seat down"}. `,
        `Deck: ${v.deckSize || 0} cards. Out of play: ${v.outOfPlaySize || 0}.`,
        v.advanced ? ` DNA supply: ${v.dnaSupply || 0}. Tiles in the box: ${v.tilesInBox || 0}.` : "",
      ),
      (v.offer || []).length
        ? [
            h("h3", {}, "DNA tiles on offer"),
            h(
              "div",
              { class: "cards small" },
              (v.offer || []).map((t) => cardBox(`tile-${t.id || 0}`, `${t.name} (costs ${t.cost || 0})`, t.text)),
            ),
          ]
        : null,
      (v.discarded || []).length ? [h("h3", {}, "Removed this round"), cardList(ctx, v.discarded)] : null,
    );
  },

  players(ctx) {
    const v = ctx.view;
    const collections = (v.players || []).map((p) =>
      h(
        "div",
        { class: "collection", dataset: { seat: p.seat || 0 } },
        h("h3", {}, `${ctx.who(p.seat || 0)}'s collection`),
        cardList(ctx, p.collection),
      ),
    );
    return h(
      "div",
      {},
      table(
        ["Seat", "Cards", "DNA tokens", "Tiles", "This round", "Rounds", "Total"],
        (v.players || []).map((p) => [
          ctx.who(p.seat || 0),
          String((p.collection || []).length),
          String(p.dnaTokens || 0),
          (p.tiles || []).map((t) => t.name).join(", ") || "none",
          String((p.roundScore || {}).total || 0),
          (p.scores || []).join(" + ") || "–",
          String(p.total || 0),
        ]),
        { class: "scores" },
      ),
      collections,
    );
  },

  label(key, c, ctx) {
    switch (key) {
      case "takePacket":
        return `Take the packet (${(ctx.view.packet || []).map((x) => kindName(ctx, x.kind)).join(", ") || "empty"})`;
      case "passPacket":
        return `Add your ${cardName(ctx, c.card)} to the packet and pass it on`;
      case "buyTile": {
        const tile = tileOf(ctx, c.tile);
        const name = tile ? `${tile.name} (costs ${tile.cost || 0})` : `tile ${c.tile || 0}`;
        return c.card !== undefined ? `Buy ${name}, aimed at ${cardName(ctx, c.card)}` : `Buy ${name}`;
      }
      case "endTurn":
        return "End your turn";
      case "claimDnaTokens":
        return `Claim the DNA tokens you are owed from ${ctx.who(c.fromSeat || 0)}`;
      default:
        return "";
    }
  },

  describe(key, e, ctx) {
    const who = (seat) => ctx.who(seat || 0);
    switch (key) {
      case "roundDealt":
        return `Round ${e.round || 0} was dealt: ${who(e.firstSeat)} plays first.`;
      case "cardDrawn":
        return `${who(e.seat)} drew ${cardName(ctx, e.card)} into the empty packet.`;
      case "packetTaken":
        return `${who(e.seat)} took the packet (${(e.cards || []).length} cards).`;
      case "packetPassed":
        return `${who(e.seat)} added ${cardName(ctx, e.card)} and passed the packet to ${who(e.toSeat)}.`;
      case "tileBought": {
        const tile = tileOf(ctx, e.tile);
        return `${who(e.seat)} bought the DNA tile ${tile ? tile.name : e.tile || 0}.`;
      }
      case "dnaTokensGained":
        return `${who(e.seat)} gained ${e.amount || 0} DNA token(s)${e.fromSeat !== undefined ? ` from ${who(e.fromSeat)}` : ""}.`;
      case "dnaTokensOwed":
        return `${who(e.seat)} is owed ${e.amount || 0} DNA token(s).`;
      case "dnaTokensForgone":
        return `${who(e.seat)} went without ${e.amount || 0} DNA token(s).`;
      case "turnEnded":
        return `${who(e.seat)} ended the turn; ${who(e.nextSeat)} is next.`;
      case "roundScored":
        return `Round ${e.round || 0} scored: ${(e.scores || []).map((s) => `${who(s.seat)} ${s.total || 0}`).join(", ")}.`;
      case "playerWithdrew":
        return `${who(e.seat)} left the game: its collection scores for nobody.`;
      case "gameScored":
        return `Final totals: ${(e.totals || []).map((t, i) => `${who(i)} ${t}`).join(", ")}.`;
      default:
        return undefined;
    }
  },
};
