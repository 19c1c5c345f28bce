/**
 * Starting from a position through the wrapper, for
 * tests/clients/test_typescript.py: the admin creates a game from a
 * position (proto JSON, as in the game's README) and from a broken one; the
 * game's id and the refusal (code, reason, field) as one JSON line.
 *
 *     node dist/test/positions.js --url http://127.0.0.1:8080 --transport connect \
 *         --admin-token T --game dinosaurs_extinct --players 2 \
 *         --position '{"dinos": …}' --broken '{"dinos": …}'
 */
import { parseArgs } from "node:util";

import { StrataError, transportName } from "../src/client.js";
import * as node from "../src/node.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8080" },
      transport: { type: "string", default: "connect" },
      "admin-token": { type: "string", default: "" },
      game: { type: "string", default: "dinosaurs_extinct" },
      players: { type: "string", default: "2" },
      position: { type: "string", default: "{}" },
      broken: { type: "string", default: "{}" },
    },
  });
  const admin = node
    .connect(values.url, transportName(values.transport))
    .withToken(values["admin-token"]);
  const players = Number(values.players);
  const { gameId } = await admin.createGame(values.game, players, {
    position: JSON.parse(values.position),
  });
  let refusal: Record<string, string> = {};
  try {
    await admin.createGame(values.game, players, { position: JSON.parse(values.broken) });
  } catch (error) {
    if (!(error instanceof StrataError)) throw error;
    refusal = { code: error.codeName, reason: error.reason, field: error.field };
  }
  // Every answer told the client how far the log it knew went.
  console.log(
    JSON.stringify({ game_id: gameId, refusal, read_after: admin.readAfter.toString() }),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `positions: ${error.message}` : error);
  process.exit(1);
});
