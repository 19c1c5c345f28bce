// The web table's own words (service/web: panels.js and games/<game>.js)
// for the cases a Python test hands over, in Node: what the page would say
// of each game's status, each legal action and each event. Run as
//   node table_words.mjs WEB_DIR CASES.json
// with WEB_DIR a copy of service/web that Node loads as ES modules.

import { readFileSync } from "node:fs";

// The page's modules touch the browser only when drawing; these stand in
// for what they read when imported.
globalThis.document = { getElementById: () => null, body: { dataset: {} }, addEventListener() {} };
globalThis.localStorage = { getItem: () => null, setItem() {} };
globalThis.location = { origin: "http://127.0.0.1" };

const [web, casesFile] = process.argv.slice(2);
const { Table } = await import(`${web}/table.js`);
const { describe, statusText } = await import(`${web}/panels.js`);
const { jsonKey } = await import(`${web}/common.js`);

function table(gameCase) {
  // The page's own Table methods (seatName, context, module) on a table
  // that holds just this game, its content and its legal actions.
  const t = Object.create(Table.prototype);
  t.game = gameCase.game;
  t.content = gameCase.content;
  t.actions = gameCase.actions || [];
  t.actionsVersion = 0;
  return t;
}

const out = JSON.parse(readFileSync(casesFile, "utf8")).map((gameCase) => {
  const t = table(gameCase);
  const ctx = t.context();
  const module = t.module();
  const several = ctx.you.length > 1;
  const labels = t.actions.map((action) => {
    const inner = (action.command || {})[jsonKey(t.game.gameType)] || {};
    const [key] = Object.keys(inner);
    const label = module.label(key, inner[key] || {}, ctx, action.seat || 0) || action.description;
    return several ? `${t.seatName(action.seat || 0)}: ${label}` : label;
  });
  const events = (gameCase.events || []).map((event) => {
    const text = describe(t, event);
    return text === undefined ? null : text;
  });
  return { status: statusText(t, ctx), labels, events };
});
process.stdout.write(JSON.stringify(out));
