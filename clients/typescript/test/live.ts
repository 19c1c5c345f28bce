/**
 * Live play and provable fairness through the wrapper, for
 * tests/clients/test_typescript.py: two quick joins meet in one game, which
 * the two seats play to its end; then the first seat's record of it (for an
 * offline verification) and its rematch, printed as one JSON line.
 *
 *     node dist/test/live.js --url http://127.0.0.1:8080 --transport connect
 */
import { parseArgs } from "node:util";

import { transportName } from "../src/client.js";
import * as node from "../src/node.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8080" },
      transport: { type: "string", default: "connect" },
    },
  });
  const client = node.connect(values.url, transportName(values.transport));
  const gameType = `dinosaurs_extinct`;
  const first = await client.findGame(gameType, 2, { playerName: "Ada" });
  const second = await client.findGame(gameType, 2, { playerName: "Bob" });
  const seats = [client.withToken(first.seatToken), client.withToken(second.seatToken)];
  const gameId = first.gameId;
  await seats[0].startGame(gameId);
  for (let moves = 0; moves < 2000; moves++) {
    const game = await client.getGame(gameId);
    if (game.outcome !== undefined && game.outcome.result !== "") break;
    let moved = false;
    for (const seat of seats) {
      const { actions } = await seat.listLegalActions(gameId);
      if (actions.length === 0) continue;
      await seat.submitCommand(gameId, actions[0].seat, actions[0].command!);
      moved = true;
      break;
    }
    if (!moved) throw new Error("nobody may act in a game not over");
  }
  // In pages of five events, joined by the client (a long game needs pages).
  const record = await seats[0].exportPlayerRecord(gameId, 5);
  const rematch = await seats[0].rematch(gameId);
  console.log(
    JSON.stringify({
      game_id: gameId,
      second_game_id: second.gameId,
      rematch_id: rematch.gameId,
      record,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `live: ${error.message}` : error);
  process.exit(1);
});
