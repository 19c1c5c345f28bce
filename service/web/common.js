// What the lobby and the table share: the game renderers, the seat tokens
// this browser keeps, new ids, and the errors shown on the page.

import { ApiError } from "./api.js";
import cubosaurs from "./games/cubosaurs.js";
import dinosaursExtinct from "./games/dinosaurs_extinct.js";
import escapingExtinction from "./games/escaping_extinction.js";
import generic from "./games/generic.js";
import happyLittleDinosaurs from "./games/happy_little_dinosaurs.js";

/** Each game type's renderer (games/<game>.js), by game type id. */
export const GAMES = {
  cubosaurs,
  dinosaurs_extinct: dinosaursExtinct,
  escaping_extinction: escapingExtinction,
  happy_little_dinosaurs: happyLittleDinosaurs,
};

const generics = {};

/** The renderer of a game type: its own (games/<game>.js), or the generic
 * one (its view as a tree, its actions as the API describes them) for a game
 * that has none yet, so that no game is hidden from the table. With
 * `localStorage["strata.renderer"] = "generic"` every game is shown through
 * the generic one: a preview of a new game before its renderer is written. */
export function renderer(gameType, title) {
  const own = GAMES[gameType];
  if (own && localStorage.getItem("strata.renderer") !== "generic") return own;
  generics[gameType] = generics[gameType] || generic(gameType, title);
  return generics[gameType];
}

/** The JSON name of a game type's field in the `oneof game` messages. */
export function jsonKey(gameType) {
  return gameType.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
}

export const main = document.getElementById("main");

// ---- Seat tokens, kept per game in this browser -------------------------

export function stored(gameId) {
  try {
    return JSON.parse(localStorage.getItem(`strata.game.${gameId}`)) || {};
  } catch (_) {
    return {};
  }
}

export function store(gameId, value) {
  localStorage.setItem(`strata.game.${gameId}`, JSON.stringify(value));
}

export function newId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// ---- Errors, each kept by its cause ------------------------------------
//
// An error is shown while its cause lasts and no longer: "connection" until
// the page reaches the service again, "action" (a refused click, a failed
// join) until the next action or until the game moves on. The table is drawn
// again with every event, so the errors are kept here, not only in the page.

const errors = new Map();

/** The errors shown now, oldest first. */
export function errorText() {
  return [...errors.values()].join(" ");
}

/** Shows `error` for `cause` (null or "" clears that cause). A fetch that
 * failed (no answer from the service: TypeError, "Failed to fetch") is said
 * in words a player can act on. */
export function showError(error, cause = "action") {
  let text = error ? String(error.message || error) : "";
  if (error instanceof TypeError || (error && error.name === "TimeoutError")) {
    text = "The service could not be reached (is the network down?): try again.";
  }
  if (text) errors.set(cause, text);
  else errors.delete(cause);
  const box = document.getElementById("error");
  if (!box) return;
  box.textContent = errorText();
  box.hidden = !errors.size;
}

/** Clears the error of `cause`: its cause is gone. */
export function clearError(cause) {
  if (errors.has(cause)) showError(null, cause);
}

/** Codes of an answer that may well differ on a later try. */
const TRANSIENT = new Set(["unavailable", "deadline_exceeded", "resource_exhausted", "aborted", "unknown", "http_502", "http_503", "http_504"]);

/** Whether a failed call may succeed if tried again (no answer at all, or
 * an answer of a passing kind). */
export function transient(error) {
  return !(error instanceof ApiError) || TRANSIENT.has(error.code);
}
