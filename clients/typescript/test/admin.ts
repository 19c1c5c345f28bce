/**
 * The admin and integration methods of the wrapper, for
 * tests/clients/test_typescript.py: a game the service's bots play to its
 * end, watched with clocks; its audit log in pages, verified, exported in
 * pages and imported again; the feed and the statistics; its rematch with a
 * seed. What each said, printed as one JSON line.
 *
 *     node dist/test/admin.js --url http://127.0.0.1:8080 --token ADMIN
 */
import { parseArgs } from "node:util";

import { Verdict } from "../src/gen/strata/v1/admin_service_pb.js";
import { transportName } from "../src/client.js";
import * as node from "../src/node.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8080" },
      transport: { type: "string", default: "connect" },
      token: { type: "string", default: "" },
    },
  });
  const admin = node.connect(values.url, transportName(values.transport), {
    token: values.token,
  });
  const { gameId } = await admin.createGame("dinosaurs_extinct", 2, {
    seed: "typescript-admin",
    bots: { 0: "heuristic", 1: "heuristic" },
  });
  const watched: bigint[] = [];
  for await (const response of admin.watchGameWithClocks(gameId)) {
    watched.push(response.event!.version);
  }
  const audit = await admin.getAuditLog(gameId, { pageSize: 7 });
  const firstPage = await admin.getAuditLogPage(gameId, { pageSize: 7 });
  const verified = await admin.verifyGame(gameId);
  const exported = await admin.exportGame(gameId, { pageSize: 5 });
  const imported = await admin.importGame(exported.document, { gameId: `${gameId}-copy` });
  const finished: string[] = [];
  for await (const response of admin.followLog({
    follow: false,
    gameTypes: ["dinosaurs_extinct"],
    eventTypes: ["GameFinished"],
  })) {
    if (response.event !== undefined) finished.push(response.event.gameId);
  }
  // The game's whole log again, three events a message at most.
  const batched: number[][] = [];
  for await (const response of admin.followLog({ follow: false, maxBatch: 3 })) {
    const mine = response.events.filter((e) => e.gameId === gameId);
    if (mine.length) batched.push(mine.map((e) => Number(e.version)));
  }
  const statistics = await admin.getStatistics({ gameType: "dinosaurs_extinct" });
  const rematch = await admin.rematch(gameId, { seed: "typescript-rematch" });
  console.log(
    JSON.stringify({
      game_id: gameId,
      watched: watched.map(Number),
      audit_events: audit.events.length,
      audit_commands: audit.commands.length,
      first_page_events: firstPage.events.length,
      first_page_next: firstPage.nextPageToken !== "",
      verdict: Verdict[verified.verdict],
      exported_file: exported.fileName,
      imported_id: imported.gameId,
      imported_version: Number(imported.version),
      finished,
      statistics_finished: Number(statistics.statistics[0]?.finished ?? 0n),
      rematch_id: rematch.gameId,
      batched,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `admin: ${error.message}` : error);
  process.exit(1);
});
