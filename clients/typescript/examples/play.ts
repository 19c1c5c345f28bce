/**
 * Play a whole game against the service's bots through the TypeScript
 * client, while a WatchGame stream follows it live, and print the winners.
 *
 *     npm run build
 *     node dist/examples/play.js dinosaurs_extinct
 *     node dist/examples/play.js cubosaurs --players 3 --transport grpc-web \
 *         --url http://localhost:8080 --bot random
 *     node dist/examples/play.js cubosaurs --runtime web   # connect-web, on fetch
 *
 * Seat 0 is ours (we join it, start the game and send one of our legal
 * actions, chosen at random, whenever we have any); the other seats are
 * the service's bots. The last line printed is a JSON summary.
 */
import { parseArgs } from "node:util";

import {
  StrataError,
  TRANSPORTS,
  transportName,
  type StrataClient,
  type TransportName,
} from "../src/client.js";
import * as node from "../src/node.js";
import * as web from "../src/web.js";
import type { Event, LegalAction, Outcome } from "../src/gen/strata/v1/game_service_pb.js";
import { GameStatus } from "../src/gen/strata/v1/game_service_pb.js";

const USAGE = `usage: play.js GAME_TYPE [--url URL] [--transport ${TRANSPORTS.join("|")}]
       [--runtime node|web] [--players N] [--bot random|heuristic] [--name NAME]
       [--resume-after N] [--quiet]`;

/** Quiet for this long while waiting on the bots: something is wrong. */
const STALL_MS = 30_000;

/** The WatchGame stream, followed in the background. */
class Watcher {
  readonly events: Event[] = [];
  /** How many streams it took (1, or 2 when told to resume once). */
  streams = 0;
  outcome: Outcome | undefined;
  ended = false;
  error: unknown;
  private wake: (() => void)[] = [];

  constructor(
    private readonly client: StrataClient,
    private readonly gameId: string,
    private readonly log: (line: string) => void,
    /** Drop the stream after this many events and resume it (0: never). */
    private readonly resumeAfter = 0,
  ) {}

  get version(): bigint {
    return this.events.at(-1)?.version ?? 0n;
  }

  async run(signal: AbortSignal): Promise<void> {
    try {
      let resume = true;
      while (resume) {
        resume = false;
        this.streams += 1;
        // From the first event, or on from the last one received.
        const fromVersion = this.version + 1n;
        for await (const event of this.client.watchGame(this.gameId, { fromVersion, signal })) {
          if (event.version !== this.version + 1n) {
            throw new Error(`watch: version ${event.version} after ${this.version}`);
          }
          this.events.push(event);
          this.log(`  watch v${event.version} ${event.type}`);
          if (event.body.case === "gameFinished") this.outcome = event.body.value.outcome;
          this.notify();
          if (this.streams === 1 && this.events.length === this.resumeAfter) {
            this.log(`  watch: dropped after v${event.version}, resuming`);
            resume = true;
            break; // ends the call (the stream's return() aborts it)
          }
        }
      }
    } catch (error) {
      this.error = error;
    } finally {
      this.ended = true;
      this.notify();
    }
  }

  /** Resolves once the stream has seen `version` or ended. */
  async reach(version: bigint): Promise<void> {
    const deadline = Date.now() + STALL_MS;
    while (this.version < version && !this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`nothing happened in ${STALL_MS} ms after v${this.version}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private notify(): void {
    for (const wake of this.wake.splice(0)) wake();
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: "string", default: "http://127.0.0.1:8080" },
      transport: { type: "string", default: "connect" },
      runtime: { type: "string", default: "node" },
      players: { type: "string", default: "2" },
      bot: { type: "string", default: "heuristic" },
      name: { type: "string", default: "Ada" },
      quiet: { type: "boolean", default: false },
      "resume-after": { type: "string", default: "0" },
      "max-moves": { type: "string", default: "5000" },
    },
  });
  let [gameType] = positionals;
  const runtime = values.runtime === "node" ? node : values.runtime === "web" ? web : undefined;
  let transport: TransportName;
  try {
    transport = transportName(values.transport);
  } catch {
    transport = "connect";
    gameType = "";
  }
  if (!gameType || positionals.length > 1 || runtime === undefined) {
    console.error(USAGE);
    process.exit(2);
  }
  const players = Number(values.players);
  const maxMoves = Number(values["max-moves"]);
  const log = values.quiet ? () => {} : (line: string) => console.log(line);

  // The transports of @connectrpc/connect-node, or of connect-web (a browser's).
  const client: StrataClient = runtime.connect(values.url, transport);
  const bots: Record<number, string> = {};
  for (let seat = 1; seat < players; seat++) bots[seat] = values.bot;
  const { gameId } = await client.createGame(gameType, players, { bots });
  const joined = await client.joinGame(gameId, { playerName: values.name, seat: 0 });
  const me = client.withToken(joined.seatToken);
  log(`game ${gameId} (${gameType}, ${players} players, ${transport} from ${values.runtime}): seat 0`);

  // The watch runs beside our moves, from the first event, as a spectator.
  const watcher = new Watcher(client, gameId, log, Number(values["resume-after"]));
  const stop = new AbortController();
  const watching = watcher.run(stop.signal);

  await me.startGame(gameId);
  const run = crypto.randomUUID().slice(0, 8);
  let moves = 0;
  let refused = 0;
  let legal = await me.listLegalActions(gameId);
  let actions: LegalAction[] = legal.actions;
  let actionsVersion = legal.version;
  while (watcher.outcome === undefined) {
    if (actions.length === 0) {
      // The bots' turn (or the game just ended): wait for the next event.
      await watcher.reach(actionsVersion + 1n);
      if (watcher.outcome !== undefined) break;
      if (watcher.ended) throw new Error(`the watch ended before the game did: ${watcher.error}`);
      legal = await me.listLegalActions(gameId);
      [actions, actionsVersion] = [legal.actions, legal.version];
      continue;
    }
    if (moves >= maxMoves) throw new Error(`game ${gameId} did not end in ${maxMoves} moves`);
    const action = actions[Math.floor(Math.random() * actions.length)];
    try {
      const response = await me.submitCommand(gameId, action.seat, action.command!, {
        commandId: `ts-play-${run}-${moves}`,
        includeLegalActions: true,
      });
      moves += 1;
      log(`v${response.version} seat ${action.seat}: ${action.description}`);
      [actions, actionsVersion] = [response.legalActions, response.legalActionsVersion];
    } catch (error) {
      // A bot moved first and changed what is legal: look again.
      const code = error instanceof StrataError ? error.codeName : "";
      if (code !== "FAILED_PRECONDITION" && code !== "ABORTED") throw error;
      refused += 1;
      log(`refused (${(error as StrataError).reason}): looking again`);
      legal = await me.listLegalActions(gameId);
      [actions, actionsVersion] = [legal.actions, legal.version];
    }
  }

  // The stream ends by itself after the game's ending (GameFinished, then
  // SeedRevealed).
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    watching.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 10_000))),
  ]);
  clearTimeout(timer);
  stop.abort();
  if (!ended) throw new Error("the watch went on after the game ended");
  if (watcher.error !== undefined) throw watcher.error;

  const game = await me.getGame(gameId);
  if (game.status !== GameStatus.FINISHED) throw new Error(`game ${gameId} is not finished`);
  const winners = game.outcome?.winners ?? [];
  const names = winners.map((seat) => game.seats[seat]?.playerName || `seat ${seat}`);
  log(`winners: ${names.length ? names.join(", ") : "nobody"} (${game.outcome?.result})`);
  console.log(
    JSON.stringify({
      game_id: gameId,
      game_type: gameType,
      transport,
      runtime: values.runtime,
      players,
      command_id_prefix: `ts-play-${run}-`,
      moves,
      refused,
      version: Number(game.version),
      winners,
      result: game.outcome?.result ?? "",
      watched: watcher.events.length,
      watch_streams: watcher.streams,
      watched_first_version: Number(watcher.events[0]?.version ?? 0n),
      watched_last_version: Number(watcher.version),
      watched_last_type: watcher.events.at(-1)?.type ?? "",
      watched_winners: watcher.outcome?.winners ?? null,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `play: ${error.message}` : error);
  process.exit(1);
});
