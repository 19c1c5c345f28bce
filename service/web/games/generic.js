// Any game this page has no renderer of its own for (a new game, before its
// games/<game>.js is written): its view as a readable tree, its legal
// actions as buttons with the API's descriptions, its events by name and
// fields. A game is never hidden from the table for want of a renderer.

import { enumWords, h } from "../dom.js";

/** `lifeCardOverlays` -> `Life card overlays`. */
export function fieldWords(key) {
  const spaced = String(key || "").replace(/([a-z0-9])([A-Z])/g, "$1 $2");
  return enumWords(spaced.replace(/ /g, "_"));
}

/** An enum value (`PHASE_ROLL`) in words, anything else as it is. */
function scalar(value) {
  if (typeof value === "string" && /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(value)) {
    return enumWords(value);
  }
  if (value === true) return "yes";
  if (value === false) return "no";
  return String(value);
}

/** A view (JSON, as the API gives it) as nested lists a reader can follow. */
export function tree(value) {
  if (Array.isArray(value)) {
    if (!value.length) return "none";
    return h(
      "ol",
      { class: "tree", start: 0 },
      value.map((item) => h("li", {}, tree(item))),
    );
  }
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (!keys.length) return "nothing";
    return h(
      "dl",
      { class: "tree" },
      keys.flatMap((key) => [h("dt", {}, fieldWords(key)), h("dd", {}, tree(value[key]))]),
    );
  }
  return scalar(value);
}

/** One line for an event's fields: `seat 1, rolled 4`. */
function details(fields) {
  return Object.entries(fields || {})
    .filter(([, value]) => value === null || typeof value !== "object")
    .map(([key, value]) => `${fieldWords(key).toLowerCase()} ${scalar(value)}`)
    .join(", ");
}

/** The renderer of a game type that has none of its own. */
export default function generic(gameType, title) {
  return {
    title: title || enumWords(gameType),
    generic: true,
    status() {
      return "";
    },
    hand() {
      return null;
    },
    board(ctx) {
      return h("div", { class: "generic-view" }, tree(ctx.view));
    },
    players(ctx) {
      const seats = (ctx.game.seats || []).map((_, seat) => ctx.who(seat));
      return h("p", {}, seats.join(", "));
    },
    label() {
      // The button shows the API's own description of the action.
      return "";
    },
    describe(key, fields) {
      const more = details(fields);
      return `${fieldWords(key)}${more ? `: ${more}` : ""}.`;
    },
  };
}
