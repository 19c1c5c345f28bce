// Escaping Extinction: the hex map around the Oasis, the four Dinos with
// their satchels and health, the Meteor track, the Rocket Docket and the
// Launchpad, your Dinos' kept cards; labels of the commands and the log.

import { baseId, cardBox, enumWords, h, table, words } from "../dom.js";

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function dinoName(ctx, dino) {
  const key = String(dino || "").replace(/^DINO_/, "");
  const known = ((ctx.content || {}).dinos || {})[key];
  return known ? known.name : enumWords(dino, "DINO_");
}

function lookup(ctx, group, id) {
  const all = (ctx.content || {})[group] || {};
  return all[id] || all[baseId(id)] || null;
}

function cardName(ctx, id) {
  const c =
    lookup(ctx, "exploration", id) || lookup(ctx, "rocket_docket", id) || lookup(ctx, "meteor", id);
  return c ? c.name : String(id || "a card");
}

function place(ctx, position) {
  return (ctx.view.places || []).find((p) => (p.position || 0) === (position || 0)) || {};
}

function placeName(ctx, position) {
  const p = place(ctx, position);
  if (!p.revealed && (position || 0) !== 0) return `the unexplored place ${position || 0}`;
  const tile = lookup(ctx, "tiles", p.tile);
  return tile ? tile.name : `place ${position || 0}`;
}

const RESOURCE = (r) => enumWords(r, "RESOURCE_");
const ITEM = (i) => enumWords(i, "ITEM_");

const TERRAIN_COLOURS = {
  TERRAIN_OASIS: "#8fd3a8",
  TERRAIN_TARPIT: "#5b4a3a",
  TERRAIN_VOLCANO: "#d9663b",
  TERRAIN_WOOD: "#6aa84f",
  TERRAIN_FOOD: "#f1c232",
  TERRAIN_VINE: "#38a3a5",
  TERRAIN_BARREN: "#c9b79c",
};

function hexMap(ctx) {
  const v = ctx.view;
  const size = 42;
  const points = (cx, cy) =>
    Array.from({ length: 6 }, (_, i) => {
      const a = (Math.PI / 180) * (60 * i - 30);
      return `${(cx + size * Math.cos(a)).toFixed(1)},${(cy + size * Math.sin(a)).toFixed(1)}`;
    }).join(" ");
  const explored = (v.places || []).filter((p) => p.revealed).length;
  const travels = (ctx.actions || []).some((a) => ((a.command || {}).escapingExtinction || {}).travel);
  const map = svg("svg", {
    viewBox: "-220 -190 440 380",
    class: "hexmap",
    // With places to click it is a group of controls, otherwise a picture.
    role: travels ? "group" : "img",
    // Its name for screen readers; each place's own words are its title.
    "aria-label": `The map: ${(v.places || []).length} places, ${explored} explored.`,
  });
  for (const p of v.places || []) {
    const q = p.q || 0;
    const r = p.r || 0;
    const cx = size * Math.sqrt(3) * (q + r / 2);
    const cy = size * 1.5 * r;
    const tile = lookup(ctx, "tiles", p.tile);
    const fill = p.revealed ? TERRAIN_COLOURS[p.terrain] || "#ddd" : "#9aa0a6";
    const here = (v.dinos || []).filter((d) => (d.position || 0) === (p.position || 0));
    const marks = [];
    if (p.token) marks.push(RESOURCE(p.token));
    if (p.lava) marks.push("Lava");
    if (p.cave) marks.push("Cave");
    // A place a Dino of yours may travel to now is a button: click it (or
    // Enter) to travel there (the first such action, as its label says).
    const travel = (ctx.actions || []).find((a) => {
      const c = ((a.command || {}).escapingExtinction || {}).travel;
      const plain = !["TRAVEL_MODE_PUSH", "TRAVEL_MODE_CAVE"].includes(c && c.mode);
      return c && plain && (c.destination || 0) === (p.position || 0);
    });
    const name = p.revealed ? (tile ? tile.name : p.tile) : `? ${p.position || 0}`;
    const dinosHere = here.map((d) => dinoName(ctx, d.dino).split(" ").pop()).join(", ");
    // What it shows, then the move (speech input names it by what it shows).
    const shown = [name, marks.join(" "), dinosHere].filter(Boolean).join(" ");
    const label = travel ? `${shown}: ${module.label("travel", travel.command.escapingExtinction.travel, ctx)}` : "";
    const act = () => ctx.act(travel);
    map.appendChild(
      svg(
        "g",
        travel
          ? {
              class: "hex travel",
              "data-position": p.position || 0,
              role: "button",
              tabindex: 0,
              onclick: act,
              onkeydown: (event) => {
                if (event.key === "Enter" || event.key === " ") {
                  event.preventDefault();
                  act();
                }
              },
            }
          : { class: "hex", "data-position": p.position || 0 },
        svg("polygon", { points: points(cx, cy), fill, stroke: "#333", "stroke-width": 1.5 }),
        svg("text", { x: cx, y: cy - 16, "text-anchor": "middle", "font-size": 9 }, name),
        marks.length ? svg("text", { x: cx, y: cy - 4, "text-anchor": "middle", "font-size": 8 }, marks.join(" ")) : null,
        here.length
          ? svg(
              "text",
              { x: cx, y: cy + 14, "text-anchor": "middle", "font-size": 10, "font-weight": "bold" },
              dinosHere,
            )
          : null,
        // Its name (and tooltip): the move when it is a button.
        svg("title", {}, label || `${p.position || 0}: ${p.revealed ? name : "unexplored"}`),
      ),
    );
  }
  return map;
}

function cardShown(ctx, id, note) {
  const c = lookup(ctx, "exploration", id) || lookup(ctx, "rocket_docket", id);
  return cardBox(id, c ? c.name : id, c ? c.text : "", note);
}

const module = {
  title: "Escaping Extinction",

  /** The rules in brief, behind the page's help link. */
  help(ctx) {
    const launch = (ctx.content || {}).launch || {};
    return [
      "Everyone plays together: the team wins when the rocket launches and loses when the Meteor reaches Earth.",
      `The launch needs ${launch.rocket_parts || "?"} Rocket Parts and ${launch.wood || "?"} Wood on the Launchpad.`,
      "On a Dino's turn it travels (click a place on the map, or its button), explores, resupplies at the Oasis, collects Rocket Parts, heals or trades, then ends its turn.",
      "Injured: a Dino at Health 0 is Injured. Its turn passes by itself unless it can heal itself with its own Vines; Sergeant Sara cannot heal while Injured. Injured Dinos on the Oasis still count.",
    ];
  },

  /** The game's options at creation (strata.games.escaping_extinction.v1.Options). */
  options: [
    {
      name: "sharedFourthDino",
      label: "With 3 players, every seat controls Long Neck together",
      type: "checkbox",
    },
  ],

  status(ctx) {
    const v = ctx.view;
    const parts = [`Round ${v.round || 0}.`];
    if (v.currentDino) parts.push(`${dinoName(ctx, v.currentDino)}'s turn, ${v.actionsLeft || 0} action(s) left.`);
    const pending = v.pending || {};
    if (pending.kind === "PENDING_KIND_MAKE_ROOM") parts.push(`${dinoName(ctx, pending.dino)} must make room for ${RESOURCE(pending.resource)} or leave it.`);
    if (pending.kind === "PENDING_KIND_REDRAW") parts.push(`${dinoName(ctx, pending.dino)} may keep ${cardName(ctx, pending.card)} or redraw.`);
    if (pending.kind === "PENDING_KIND_SECRET_CAVES") parts.push(`${dinoName(ctx, pending.dino)} places the Secret Caves.`);
    return parts.join(" ");
  },

  hand(ctx) {
    const v = ctx.view;
    const mine = v.yourDinos || [];
    const parts = mine.map((dino) => {
      const d = (v.dinos || []).find((x) => x.dino === dino) || {};
      return h(
        "div",
        { class: "hand" },
        h("h3", {}, `${dinoName(ctx, dino)} at ${placeName(ctx, d.position)}`),
        h("p", {}, `Health ${d.health || 0}, Food ${d.food || 0}, Wood ${d.wood || 0}, Vines ${d.vines || 0}${d.rocketPart ? ", carrying a Rocket Part" : ""}.`),
        h(
          "div",
          { class: "cards" },
          (d.heldCards || []).map((id) => cardShown(ctx, id)),
          (d.heldCards || []).length ? null : h("p", { class: "hint" }, "No cards kept."),
        ),
      );
    });
    return { title: "Your Dinos and their cards", body: h("div", {}, parts) };
  },

  board(ctx) {
    const v = ctx.view;
    const length = v.meteorTrackLength || 10;
    const launch = (ctx.content || {}).launch || { rocket_parts: "?", wood: "?" };
    const meteor = v.meteor || 0;
    return h(
      "div",
      {},
      hexMap(ctx),
      h(
        "p",
        { class: "meteor" },
        `Meteor: ${meteor} of ${length} spaces `,
        h("span", { class: "meteor-track" }, "●".repeat(meteor) + "○".repeat(Math.max(0, length - meteor))),
        ` (${v.meteorCardsLeft || 0} Meteor cards left${(v.meteorDrawn || []).length ? `; last: ${cardName(ctx, v.meteorDrawn[v.meteorDrawn.length - 1])}` : ""}).`,
      ),
      h(
        "p",
        {},
        `Launchpad: ${v.launchpadParts || 0} of ${launch.rocket_parts} Rocket Parts, `,
        `${v.launchpadWood || 0} of ${launch.wood} Wood.`,
      ),
      h("h3", {}, "Rocket Docket"),
      h(
        "div",
        { class: "cards small" },
        (v.rocketDocketOpen || []).map((id) => {
          const c = lookup(ctx, "rocket_docket", id);
          return cardBox(id, c ? c.name : id, c ? c.text : "", c ? `at ${c.tile}` : "");
        }),
      ),
      h(
        "p",
        {},
        `Collected: ${words((v.rocketDocketDone || []).map((id) => cardName(ctx, id)))}. `,
        `Docket cards left: ${v.rocketDocketCardsLeft || 0}. Exploration cards left: ${v.explorationCardsLeft || 0}.`,
      ),
      h(
        "p",
        {},
        `Supply: Food ${(v.supply || {}).food || 0}, Wood ${(v.supply || {}).wood || 0}, Vines ${(v.supply || {}).vines || 0}, Rocket Parts ${(v.supply || {}).rocketParts || 0}, Lava Flows ${(v.supply || {}).lavaFlows || 0}.`,
      ),
    );
  },

  players(ctx) {
    const v = ctx.view;
    const control = v.control || [];
    return table(
      ["Dino", "Played by", "Where", "Health", "Food", "Wood", "Vines", "Rocket Part", "Kept cards"],
      (v.dinos || []).map((d) => [
        dinoName(ctx, d.dino),
        words(((control.find((c) => c.dino === d.dino) || {}).seats || []).map((s) => ctx.who(s))),
        placeName(ctx, d.position),
        String(d.health || 0),
        String(d.food || 0),
        String(d.wood || 0),
        String(d.vines || 0),
        d.rocketPart ? "yes" : "no",
        (d.heldCards || []).length ? String(d.heldCards.length) : "0",
      ]),
      { class: "scores" },
    );
  },

  label(key, c, ctx) {
    const d = dinoName(ctx, c.dino);
    switch (key) {
      case "travel": {
        const mode = { TRAVEL_MODE_PUSH: " (push on)", TRAVEL_MODE_CAVE: " (through the Secret Caves)" }[c.mode] || "";
        return `${d}: travel to ${placeName(ctx, c.destination)}${mode}`;
      }
      case "explore":
        return `${d}: explore${c.gamble ? " and gamble (double or nothing)" : ""}`;
      case "resupply":
        return `${d}: resupply at the Oasis`;
      case "collectRocketPart":
        return `${d}: collect the Rocket Part ${cardName(ctx, c.card)}`;
      case "healTeammates":
        return `${d}: heal the Dinos here`;
      case "healWithVines":
        return `${d}: spend a Vine to heal ${dinoName(ctx, c.target)}`;
      case "giveItem":
        return `${d}: give ${ITEM(c.item)} to ${dinoName(ctx, c.recipient)}`;
      case "giveCard":
        return `${d}: give ${cardName(ctx, c.card)} to ${dinoName(ctx, c.recipient)}`;
      case "acceptTrade":
        return `${d}: accept the trade asked of it`;
      case "declineTrade":
        return `${d}: decline the trade asked of it`;
      case "playCard":
        return `${d}: play ${cardName(ctx, c.card)}${c.target ? ` on ${dinoName(ctx, c.target)}` : ""}`;
      case "makeRoom":
        return `${d}: discard ${RESOURCE(c.discard)} to make room`;
      case "leaveResource":
        return `${d}: leave the resource`;
      case "keepCard":
        return `${d}: keep the card`;
      case "redrawCard":
        return `${d}: redraw the card`;
      case "placeSecretCave":
        return `${d}: place a Secret Cave at ${placeName(ctx, c.position)}`;
      case "leaveSecretCaves":
        return `${d}: do not place the Secret Caves`;
      case "endTurn":
        return `${d}: end the turn`;
      default:
        return "";
    }
  },

  describe(key, e, ctx) {
    const d = (dino) => dinoName(ctx, dino);
    const at = (position) => placeName(ctx, position);
    switch (key) {
      case "worldSetUp":
        return "The world was laid out face down around the Oasis and the decks shuffled.";
      case "rocketDocketCardRevealed":
        return `Rocket Docket: ${cardName(ctx, e.card)} is wanted.`;
      case "turnBegan":
        return `Round ${e.round || 0}: ${d(e.dino)}'s turn.`;
      case "actionTaken":
        return "";
      case "dieRolled":
        return `${d(e.dino)} rolled ${e.number || 0} (${enumWords(e.colour, "DIE_COLOUR_").toLowerCase()}) ${enumWords(e.purpose, "ROLL_PURPOSE_").toLowerCase()}.`;
      case "dinoTravelled":
        return `${d(e.dino)} travelled from ${at(e.origin)} to ${at(e.destination)}${e.foodSpent ? `, spending ${e.foodSpent} Food` : ""}.`;
      case "tarpitHeld":
        return `${d(e.dino)} was held by the Tarpit.`;
      case "dinoReturnedToOasis":
        return `${d(e.dino)} went back to the Oasis.`;
      case "tileRevealed": {
        const tile = lookup(ctx, "tiles", e.tile);
        return `Revealed: ${tile ? tile.name : e.tile} at place ${e.position || 0}.`;
      }
      case "dinoDamaged":
        return `${d(e.dino)} took ${e.amount || 0} damage (health ${e.health || 0}).`;
      case "dinoHealed":
        return `${d(e.dino)} healed ${e.amount || 0} (health ${e.health || 0}).`;
      case "vineSpent":
        return `${d(e.dino)} spent a Vine.`;
      case "resourceTaken":
        return `${d(e.dino)} took ${RESOURCE(e.resource)} from the tile.`;
      case "resourceGained":
        return `${d(e.dino)} gained ${RESOURCE(e.resource)}.`;
      case "resourceReturned":
        return `${d(e.dino)} returned ${RESOURCE(e.resource)} to the Supply.`;
      case "tokenReturned":
        return `A token at place ${e.position || 0} went back to the Supply.`;
      case "roomNeeded":
        return `${d(e.dino)} has no room for ${RESOURCE(e.resource)}.`;
      case "roomMade":
        return `${d(e.dino)} discarded ${RESOURCE(e.discarded)} to make room.`;
      case "resourceLeft":
        return `${d(e.dino)} left ${RESOURCE(e.resource)} behind.`;
      case "explorationCardDrawn":
        return `${d(e.dino)} drew ${cardName(ctx, e.card)}.`;
      case "redrawOffered":
        return `${d(e.dino)} may redraw ${cardName(ctx, e.card)}.`;
      case "redrawDeclined":
        return `${d(e.dino)} kept ${cardName(ctx, e.card)}.`;
      case "explorationCardRedrawn":
        return `${d(e.dino)} redrew: ${cardName(ctx, e.card)}.`;
      case "explorationCardDiscarded":
        return `${cardName(ctx, e.card)} was discarded.`;
      case "explorationCardKept":
        return `${d(e.dino)} kept ${cardName(ctx, e.card)} for later.`;
      case "explorationCardPlayed":
        return `${d(e.dino)} played ${cardName(ctx, e.card)}${e.target ? ` on ${d(e.target)}` : ""}.`;
      case "explorationDeckReshuffled":
        return "The Exploration deck was reshuffled.";
      case "extraActionGained":
        return `${d(e.dino)} gained an extra action.`;
      case "lavaFlowPlaced":
        return `A Lava Flow covers place ${e.position || 0}.`;
      case "secretCavePlacementOffered":
        return `${d(e.dino)} may place the Secret Caves.`;
      case "secretCavesPlaced":
        return `Secret Caves opened at places ${e.first || 0} and ${e.second || 0}.`;
      case "secretCavesLeft":
        return `${d(e.dino)} left the Secret Caves unplaced.`;
      case "resupplied":
        return `${d(e.dino)} resupplied: ${e.food || 0} Food, ${e.wood || 0} Wood${e.rocketPart ? " and a Rocket Part" : ""} to the Launchpad.`;
      case "rocketPartCollected":
        return `${d(e.dino)} collected the Rocket Part ${cardName(ctx, e.card)}.`;
      case "rocketDocketClosed":
        return "The Rocket Docket is complete.";
      case "itemGiven":
        return `${d(e.dino)} gave ${ITEM(e.item)} to ${d(e.recipient)}.`;
      case "dinosHandedOver":
        return `A player left: ${(e.control || []).map((c) => `${d(c.dino)} is now played by seat ${(c.seats || []).map((x) => (x || 0) + 1).join(" and ")}`).join(", ")}.`;
      case "tradeOffered":
        return `${d(e.recipient)}'s turn asks ${d(e.dino)} for ${e.item ? ITEM(e.item) : cardName(ctx, e.card)}: its seat accepts or declines.`;
      case "tradeAccepted":
        return `${d(e.dino)}'s seat accepted the trade.`;
      case "tradeDeclined":
        return `${d(e.dino)}'s seat declined the trade.`;
      case "tradeOfferLapsed":
        return `The trade asked of ${d(e.dino)} lapsed unanswered.`;
      case "cardGiven":
        return `${d(e.dino)} gave ${cardName(ctx, e.card)} to ${d(e.recipient)}.`;
      case "turnEnded":
        return `${d(e.dino)} ended the turn.`;
      case "meteorCardDrawn":
        return `Meteor card: ${cardName(ctx, e.card)}.`;
      case "meteorMoved":
        return `The Meteor moved from ${e.origin || 0} to ${e.destination || 0}.`;
      case "earthquakeStruck":
        return `An earthquake shuffled places ${(e.positions || []).join(", ")}.`;
      case "meteorDeckRanOut":
        return "The Meteor deck ran out.";
      case "meteorHitEarth":
        return "The Meteor hit the Earth!";
      case "rocketLaunched":
        return "The Rocket launched: the Dinos escaped!";
      default:
        return undefined;
    }
  },
};

export default module;
