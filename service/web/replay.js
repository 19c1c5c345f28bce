// The replay of a finished game: a version slider, and the table (board
// and players, your hand) as it was at that version, from GetGame's
// at_version, redacted for this browser's token as the live view was.

import { h } from "./dom.js";

/** The replay panel of `table` (a Table of a finished game). */
export function replayPanel(table) {
  const last = Number(table.game.version);
  const replay = table.replay || { version: last, game: null };
  const slider = h("input", {
    id: "replay-version",
    type: "range",
    min: 1,
    max: last,
    step: 1,
    value: replay.version,
    "aria-valuetext": `version ${replay.version} of ${last}`,
    onchange: (event) => table.replayAt(Number(event.target.value)),
  });
  const parts = [
    h("h2", {}, "Replay"),
    h(
      "p",
      { class: "replay-control" },
      h("label", { for: "replay-version" }, "Version: "),
      slider,
      h("output", { for: "replay-version", id: "replay-shown" }, ` ${replay.version} of ${last}`),
    ),
  ];
  if (replay.game) {
    const ctx = table.context(replay.game);
    const module = table.module();
    const hand = ctx.you.length ? module.hand(ctx) : null;
    parts.push(
      h(
        "div",
        { id: "replay-view", dataset: { version: replay.game.version } },
        h("p", { class: "status" }, `The game at version ${replay.game.version}.`),
        hand ? h("section", {}, h("h3", {}, hand.title || "Your hand"), hand.body) : null,
        h("section", {}, h("h3", {}, "The table"), module.board(ctx)),
        h("section", {}, h("h3", {}, "Players"), module.players(ctx)),
      ),
    );
  } else {
    parts.push(h("p", { class: "hint" }, "Move the slider to see the table as it was at any version."));
  }
  return h("section", { id: "replay", class: "replay" }, parts);
}
