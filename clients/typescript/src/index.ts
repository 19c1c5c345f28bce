/**
 * Strata's TypeScript client for Node: the wrapper with Node's transports,
 * and the generated messages (a browser imports web.ts instead).
 */
export * from "./node.js";
export * from "./gen/strata/v1/game_service_pb.js";
export * as admin from "./gen/strata/v1/admin_service_pb.js";
export * as integration from "./gen/strata/v1/integration_service_pb.js";
// Each game's messages, as a namespace named like its game type in camelCase
// (cubosaurs, dinosaursExtinct, …), from src/gen/games.ts (generated).
export * from "./gen/games.js";
