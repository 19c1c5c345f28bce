/**
 * Strata's TypeScript client for Node: the wrapper with Node's transports,
 * and the generated messages (a browser imports web.ts instead).
 */
export * from "./node.js";
export * from "./gen/strata/v1/game_service_pb.js";
export * as admin from "./gen/strata/v1/admin_service_pb.js";
export * as integration from "./gen/strata/v1/integration_service_pb.js";
export * as cubosaurs from "./gen/strata/games/cubosaurs/v1/cubosaurs_pb.js";
export * as dinosaursExtinct from "./gen/strata/games/dinosaurs_extinct/v1/dinosaurs_extinct_pb.js";
export * as escapingExtinction from "./gen/strata/games/escaping_extinction/v1/escaping_extinction_pb.js";
export * as happyLittleDinosaurs from "./gen/strata/games/happy_little_dinosaurs/v1/happy_little_dinosaurs_pb.js";
