/**
 * The errors the wrapper raises, for tests/clients/test_typescript.py to
 * compare with the Python client's: a few calls the service refuses, each
 * printed as its StrataError (code, reason, message) in one JSON line.
 *
 *     node dist/test/errors.js --url http://127.0.0.1:8080 --transport grpc-web \
 *         [--runtime node|web]
 */
import { parseArgs } from "node:util";

import { StrataError, transportName } from "../src/client.js";
import * as node from "../src/node.js";
import * as web from "../src/web.js";

async function refusal(call: () => Promise<unknown>): Promise<Record<string, string>> {
  try {
    await call();
  } catch (error) {
    if (!(error instanceof StrataError)) throw error;
    return { code: error.codeName, reason: error.reason, message: error.rawMessage };
  }
  throw new Error("the call succeeded");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8080" },
      transport: { type: "string", default: "connect" },
      runtime: { type: "string", default: "node" },
    },
  });
  const runtime = values.runtime === "web" ? web : node;
  const client = runtime.connect(values.url, transportName(values.transport));
  const { gameId } = await client.createGame("dinosaurs_extinct", 2, { bots: { 1: "random" } });
  const { seatToken } = await client.joinGame(gameId, { playerName: "Ada" });
  const me = client.withToken(seatToken);
  await me.startGame(gameId);
  const [action] = (await me.listLegalActions(gameId)).actions;
  const errors = {
    unknown_game: await refusal(() => client.getGame("no-such-game")),
    unknown_game_type: await refusal(() => client.createGame("chess", 2)),
    started_twice: await refusal(() => me.startGame(gameId)),
    not_my_seat: await refusal(() => me.submitCommand(gameId, 1, action.command!)),
    bad_token: await refusal(() => client.withToken("not-a-token").startGame(gameId)),
  };
  console.log(JSON.stringify({ game_id: gameId, seat_token: seatToken, errors }));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `errors: ${error.message}` : error);
  process.exit(1);
});
