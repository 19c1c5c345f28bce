/**
 * A typed TypeScript client of Strata's API, mirroring the Python client
 * (clients/client.py): the same methods, in camelCase, over the service's
 * HTTP listener (STRATA_HTTP_PORT, default 8080) with Connect (JSON or
 * binary) or gRPC-Web.
 *
 *     import { connect } from "./node.js"; // in a browser: "./web.js"
 *
 *     const client = connect("http://localhost:8080", "connect");
 *     const { gameId } = await client.createGame("dinosaurs_extinct", 2, {
 *       bots: { 1: "heuristic" },
 *     });
 *     const me = await client.joinGame(gameId, { playerName: "Ada" });
 *     const seat = client.withToken(me.seatToken);
 *     await seat.startGame(gameId);
 *     const [action] = (await seat.listLegalActions(gameId)).actions;
 *     await seat.submitCommand(gameId, action.seat, action.command!);
 *
 * This module holds no transport: {@link StrataClient} takes one, from
 * node.ts (@connectrpc/connect-node) or web.ts (@connectrpc/connect-web,
 * on fetch), so a browser bundle never pulls in Node's http modules.
 * Every method returns its RPC's response message (GetGame: the game);
 * errors throw a {@link StrataError} with the status code, the stable
 * reason (google.rpc.ErrorInfo) and the service's sentence.
 */
import { create, fromJson, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import {
  Code,
  ConnectError,
  createClient,
  type CallOptions,
  type Client,
  type Transport,
} from "@connectrpc/connect";

import {
  AdminService,
  ExportGameResponseSchema,
  GetAuditLogResponseSchema,
  type ExportGameResponse,
  type GetAuditLogResponse,
  type ImportGameResponse,
  type VerifyGameResponse,
} from "./gen/strata/v1/admin_service_pb.js";
import {
  GameService,
  type CreateGameResponse,
  type Event,
  type FindGameResponse,
  type Game,
  type GameCommandSchema,
  type GameOptionsSchema,
  GameScenarioSchema,
  type GameScenario,
  type GameStatus,
  type GameSummary,
  type JoinGameResponse,
  type LeaveGameResponse,
  type ListGamesResponse,
  type ListGameTypesResponse,
  type ListLegalActionsResponse,
  type ReplayGameResponse,
  type StartGameResponse,
  type SubmitCommandResponse,
  type TimeControlSchema,
  type WatchGameResponse,
} from "./gen/strata/v1/game_service_pb.js";
import {
  IntegrationService,
  type FollowLogResponse,
  type GetStatisticsResponse,
} from "./gen/strata/v1/integration_service_pb.js";

/**
 * The transports of the HTTP listener, named as the Python client names
 * them: `connect` (Connect, JSON), `connect-proto` (Connect, binary) and
 * `grpc-web` (binary).
 */
export const TRANSPORTS = ["connect", "connect-proto", "grpc-web"] as const;
export type TransportName = (typeof TRANSPORTS)[number];

/** The name, checked. */
export function transportName(name: string): TransportName {
  if (!(TRANSPORTS as readonly string[]).includes(name)) {
    throw new Error(`transport ${name}: use one of ${TRANSPORTS.join(", ")}`);
  }
  return name as TransportName;
}

/**
 * An RPC failed: `code` (Connect's Code, the gRPC status code's number),
 * `reason` (the stable reason of the error's google.rpc.ErrorInfo, e.g.
 * `NOT_YOUR_TURN`; empty when there is none), the service's sentence and,
 * for malformed input, the `field` that is wrong (its path in the request,
 * from the google.rpc.BadRequest: `scenario.cubosaurs.position.deck`).
 */
export class StrataError extends Error {
  constructor(
    readonly code: Code,
    readonly reason: string,
    readonly rawMessage: string,
    options?: { cause?: unknown },
    readonly field: string = "",
  ) {
    super(`${grpcCodeName(code)} ${reason}: ${rawMessage}`, options);
    this.name = "StrataError";
  }

  /** The code's name as gRPC spells it (`FAILED_PRECONDITION`, …). */
  get codeName(): string {
    return grpcCodeName(this.code);
  }

  static from(error: unknown): StrataError {
    if (error instanceof StrataError) return error;
    const connect = ConnectError.from(error);
    let reason = "";
    let field = "";
    for (const detail of connect.details) {
      if ("type" in detail && detail.type === "google.rpc.ErrorInfo") {
        reason = errorInfoReason(detail.value);
      } else if ("type" in detail && detail.type === "google.rpc.BadRequest") {
        field = badRequestField(detail.value);
      }
    }
    return new StrataError(connect.code, reason, connect.rawMessage, { cause: error }, field);
  }
}

/**
 * A scenario (a copy of `scenario`, or a new one) whose `gameType` scenario
 * starts from `position`: the game's Position message in its proto JSON form
 * (`{ dinos: [{ step: 30 }], turn: 1 }`), as `strata create --position FILE`
 * reads it. Throws for JSON that is not such a position.
 */
export function positionScenario(
  gameType: string,
  position: JsonObject,
  scenario?: MessageInitShape<typeof GameScenarioSchema>,
): GameScenario {
  const fromPosition = fromJson(GameScenarioSchema, { [gameType]: { position } });
  const out = create(GameScenarioSchema, scenario ?? {});
  if (out.game.case === undefined) return fromPosition;
  if (out.game.case !== fromPosition.game.case) {
    throw new Error(`the scenario is not ${gameType}'s`);
  }
  type WithPosition = { position?: unknown };
  (out.game.value as WithPosition).position = (
    fromPosition.game.value as WithPosition
  ).position;
  return out;
}

/** `Code.FailedPrecondition` -> `FAILED_PRECONDITION`; `CANCELLED` as gRPC spells it. */
function grpcCodeName(code: Code): string {
  const name = (Code[code] ?? `CODE_${code}`).replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
  return name === "CANCELED" ? "CANCELLED" : name;
}

/** The first field violation's `field` (1) of an encoded google.rpc.BadRequest. */
function badRequestField(bytes: Uint8Array): string {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [number, wireType] = reader.tag();
    if (number === 1 && wireType === WireType.LengthDelimited) {
      const violation = new BinaryReader(reader.bytes());
      while (violation.pos < violation.len) {
        const [inner, innerType] = violation.tag();
        if (inner === 1 && innerType === WireType.LengthDelimited) return violation.string();
        violation.skip(innerType, inner);
      }
      return "";
    }
    reader.skip(wireType, number);
  }
  return "";
}

/** Field 1 (`reason`) of an encoded google.rpc.ErrorInfo. */
function errorInfoReason(bytes: Uint8Array): string {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) return reader.string();
    reader.skip(wireType, field);
  }
  return "";
}

export interface StrataClientOptions {
  /** The bearer token sent as `Authorization: Bearer <token>` (empty: a spectator). */
  token?: string;
  /** Deadline of each unary call, in milliseconds (default 30 s). */
  timeoutMs?: number;
}

type GameCommandInit = MessageInitShape<typeof GameCommandSchema>;

/** A connection to a Strata service, optionally with a bearer token. */
export class StrataClient {
  /** The generated clients of the three services, for every other call. */
  readonly game: Client<typeof GameService>;
  readonly admin: Client<typeof AdminService>;
  readonly integration: Client<typeof IntegrationService>;
  readonly transport: Transport;
  readonly token: string;
  readonly timeoutMs: number;

  /** A client over `transport` (node.ts's or web.ts's `createTransport`). */
  constructor(transport: Transport, options: StrataClientOptions = {}) {
    this.transport = transport;
    this.token = options.token ?? "";
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.game = createClient(GameService, transport);
    this.admin = createClient(AdminService, transport);
    this.integration = createClient(IntegrationService, transport);
  }

  /**
   * The highest `strata-position` an answer gave this client (and the
   * clients `withToken` made from it), sent back as `strata-read-after`:
   * its reads show its own writes, whichever replica answers them.
   */
  private seen: { position: bigint } = { position: 0n };

  /** A client on the same transport acting with `token`. */
  withToken(token: string): StrataClient {
    const client = new StrataClient(this.transport, { token, timeoutMs: this.timeoutMs });
    client.seen = this.seen;
    return client;
  }

  /** The highest log position an answer has shown this client (0: none yet). */
  get readAfter(): bigint {
    return this.seen.position;
  }

  /**
   * The options of a call with this client's token: the Authorization
   * header, the read-your-writes position, the deadline (`timeoutMs`, 0 for
   * none) and an abort signal.
   */
  callOptions(timeoutMs: number = this.timeoutMs, signal?: AbortSignal): CallOptions {
    const headers: Record<string, string> = {};
    if (this.token) headers["authorization"] = `Bearer ${this.token}`;
    if (this.seen.position > 0n) headers["strata-read-after"] = this.seen.position.toString();
    const note = (answered: Headers) => {
      const value = answered.get("strata-position");
      if (value !== null && /^[0-9]+$/.test(value)) {
        const position = BigInt(value);
        if (position > this.seen.position) this.seen.position = position;
      }
    };
    return { headers, timeoutMs, signal, onHeader: note, onTrailer: note };
  }

  private async call<T>(send: (options: CallOptions) => Promise<T>): Promise<T> {
    try {
      return await send(this.callOptions());
    } catch (error) {
      throw StrataError.from(error);
    }
  }

  private async *stream<T>(responses: AsyncIterable<T>): AsyncGenerator<T> {
    try {
      yield* responses;
    } catch (error) {
      throw StrataError.from(error);
    }
  }

  // -- RPCs -------------------------------------------------------------------

  listGameTypes(): Promise<ListGameTypesResponse> {
    return this.call((o) => this.game.listGameTypes({}, o));
  }

  /**
   * `bots`: seat -> bot kind (`random`, `heuristic`, `strong`), the seats the
   * service plays.
   */
  createGame(
    gameType: string,
    players: number,
    options: {
      seed?: string;
      options?: MessageInitShape<typeof GameOptionsSchema>;
      scenario?: MessageInitShape<typeof GameScenarioSchema>;
      requestId?: string;
      bots?: Record<number, string>;
      /**
       * `"bot"` (or `"bot:<level>"`): a seat whose player leaves the started
       * game goes to a bot.
       */
      replaceLeavers?: string;
      /** A deadline per decision or a clock per seat (live play). */
      timeControl?: MessageInitShape<typeof TimeControlSchema>;
      /** Admin only: no reveal of the seed at the end. */
      keepSeedSecret?: boolean;
      /**
       * Admin only: the state the game starts from, the game's Position
       * message in its proto JSON form (see {@link positionScenario}).
       */
      position?: JsonObject;
      /**
       * A seat the caller takes in the same call (the answer's `hostToken`
       * acts for it); at the caller's open-seat limit the creation is
       * refused and no game is made.
       */
      creatorSeat?: { seat: number; playerName: string };
    } = {},
  ): Promise<CreateGameResponse> {
    const scenario =
      options.position !== undefined
        ? positionScenario(gameType, options.position, options.scenario)
        : options.scenario;
    const bots = Object.entries(options.bots ?? {})
      .map(([seat, bot]) => ({ seat: Number(seat), bot }))
      .sort((a, b) => a.seat - b.seat);
    return this.call((o) =>
      this.game.createGame(
        {
          gameType,
          players,
          seed: options.seed ?? "",
          options: options.options,
          scenario,
          requestId: options.requestId ?? "",
          bots,
          replaceLeavers: options.replaceLeavers ?? "",
          timeControl: options.timeControl,
          keepSeedSecret: options.keepSeedSecret ?? false,
          creatorSeat: options.creatorSeat,
        },
        o,
      ),
    );
  }

  /**
   * The rematch of the finished `gameId` (created once: asked again, the
   * same game); each player claims its seat with `joinGame` and its old token.
   */
  rematch(gameId: string, options: { seed?: string } = {}): Promise<CreateGameResponse> {
    return this.call((o) =>
      this.game.createGame({ rematchOf: gameId, seed: options.seed ?? "" }, o),
    );
  }

  /**
   * Quick join: a seat in the oldest open game of `gameType` for `players`,
   * or in a new one (this client's token gets it, else a new seat token).
   */
  findGame(
    gameType: string,
    players: number,
    options: { playerName?: string } = {},
  ): Promise<FindGameResponse> {
    return this.call((o) =>
      this.game.findGame({ gameType, players, playerName: options.playerName ?? "" }, o),
    );
  }

  /**
   * This token's record of a finished game whose seed was revealed (README,
   * "Provably fair"): parse it and check it with `strata verify --offline`.
   */
  /**
   * This token's record of a finished game whose seed was revealed (for an
   * offline verification): its pages of `pageSize` events fetched in turn
   * and joined.
   */
  async exportPlayerRecord(gameId: string, pageSize = 2000): Promise<Record<string, unknown>> {
    let record: Record<string, unknown> | undefined;
    let pageToken = "";
    do {
      const response = await this.call((o) =>
        this.game.exportPlayerRecord({ gameId, pageSize, pageToken }, o),
      );
      const page = JSON.parse(response.record) as Record<string, unknown[]>;
      if (record === undefined) {
        record = page;
      } else {
        (record.events as unknown[]).push(...page.events);
        (record.commands as unknown[]).push(...page.commands);
      }
      pageToken = response.nextPageToken;
    } while (pageToken);
    return record;
  }

  joinGame(
    gameId: string,
    options: { playerName?: string; seat?: number } = {},
  ): Promise<JoinGameResponse> {
    return this.call((o) =>
      this.game.joinGame({ gameId, playerName: options.playerName ?? "", seat: options.seat }, o),
    );
  }

  /**
   * Free `seat` before the start (its seat token, the host's or the admin's),
   * or take it out of the started game (its seat token or the admin's).
   */
  leaveGame(gameId: string, seat: number): Promise<LeaveGameResponse> {
    return this.call((o) => this.game.leaveGame({ gameId, seat }, o));
  }

  startGame(gameId: string): Promise<StartGameResponse> {
    return this.call((o) => this.game.startGame({ gameId }, o));
  }

  /**
   * Send a command; `includeLegalActions` also asks for the caller's legal
   * actions after it (one call per move). `commandId` (a new random one
   * when empty) makes a retry safe: sent again with this token it gets the
   * first answer (`duplicate` set), nothing applied twice.
   */
  submitCommand(
    gameId: string,
    seat: number,
    command: GameCommandInit,
    options: { commandId?: string; expectedVersion?: bigint; includeLegalActions?: boolean } = {},
  ): Promise<SubmitCommandResponse> {
    return this.call((o) =>
      this.game.submitCommand(
        {
          gameId,
          seat,
          command,
          commandId: options.commandId || crypto.randomUUID().replaceAll("-", ""),
          expectedVersion: options.expectedVersion,
          includeLegalActions: options.includeLegalActions ?? false,
        },
        o,
      ),
    );
  }

  /** The game as this client's token may see it (at `atVersion`: as it was then). */
  async getGame(gameId: string, options: { atVersion?: bigint } = {}): Promise<Game> {
    const response = await this.call((o) =>
      this.game.getGame({ gameId, atVersion: options.atVersion }, o),
    );
    if (response.game === undefined) throw new Error(`GetGame ${gameId}: no game in the response`);
    return response.game;
  }

  listLegalActions(
    gameId: string,
    options: { seat?: number } = {},
  ): Promise<ListLegalActionsResponse> {
    return this.call((o) => this.game.listLegalActions({ gameId, seat: options.seat }, o));
  }

  /**
   * The game's events (redacted for this client's token) from `fromVersion`
   * (default 1), live when `follow` (the default) until the game ends, when
   * the stream ends. Stop early with `break` or `signal`. To resume after a
   * broken stream, watch again from the last version received plus one.
   */
  async *watchGame(
    gameId: string,
    options: { fromVersion?: bigint; follow?: boolean; signal?: AbortSignal } = {},
  ): AsyncGenerator<Event> {
    for await (const response of this.watchGameWithClocks(gameId, options)) {
      if (response.event !== undefined) yield response.event;
    }
  }

  /**
   * As {@link watchGame}, each event with the seats' clocks (set on the
   * newest event of a game with a time control).
   */
  watchGameWithClocks(
    gameId: string,
    options: { fromVersion?: bigint; follow?: boolean; signal?: AbortSignal } = {},
  ): AsyncGenerator<WatchGameResponse> {
    const follow = options.follow ?? true;
    return this.stream(
      this.game.watchGame(
        { gameId, fromVersion: options.fromVersion ?? 1n, noFollow: !follow },
        this.callOptions(follow ? 0 : this.timeoutMs, options.signal),
      ),
    );
  }

  /** A page of games, oldest first (`newestFirst`: the newest, the next page older). */
  listGames(
    options: {
      gameType?: string;
      status?: GameStatus;
      pageSize?: number;
      pageToken?: string;
      openSeats?: boolean;
      players?: number;
      newestFirst?: boolean;
    } = {},
  ): Promise<ListGamesResponse> {
    return this.call((o) => this.game.listGames(options, o));
  }

  /** Every game, following the pages of ListGames. */
  async *allGames(gameType = ""): AsyncGenerator<GameSummary> {
    let pageToken = "";
    do {
      const page = await this.listGames({ gameType, pageSize: 500, pageToken });
      yield* page.games;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /** Each step of the game: the event and the game right after it. */
  replayGame(
    gameId: string,
    options: { fromVersion?: bigint; toVersion?: bigint } = {},
  ): AsyncGenerator<ReplayGameResponse> {
    return this.stream(
      this.game.replayGame(
        { gameId, fromVersion: options.fromVersion ?? 1n, toVersion: options.toVersion ?? 0n },
        this.callOptions(),
      ),
    );
  }

  // -- admin (admin token) ----------------------------------------------------

  /** The whole audit log (every page, fetched in turn, joined). */
  async getAuditLog(gameId: string, options: { pageSize?: number } = {}): Promise<GetAuditLogResponse> {
    const whole = create(GetAuditLogResponseSchema);
    let pageToken = "";
    do {
      const page = await this.getAuditLogPage(gameId, { pageSize: options.pageSize, pageToken });
      whole.events.push(...page.events);
      whole.commands.push(...page.commands);
      pageToken = page.nextPageToken;
    } while (pageToken);
    return whole;
  }

  /** One page of the audit log. */
  getAuditLogPage(
    gameId: string,
    options: { pageSize?: number; pageToken?: string } = {},
  ): Promise<GetAuditLogResponse> {
    return this.call((o) =>
      this.admin.getAuditLog(
        { gameId, pageSize: options.pageSize ?? 0, pageToken: options.pageToken ?? "" },
        o,
      ),
    );
  }

  /** Fold the stored game again and compare it with what was stored. */
  verifyGame(gameId: string): Promise<VerifyGameResponse> {
    return this.call((o) => this.admin.verifyGame({ gameId }, o));
  }

  /**
   * The whole export (every page, fetched in turn, joined into one document
   * that {@link importGame} takes).
   */
  async exportGame(gameId: string, options: { pageSize?: number } = {}): Promise<ExportGameResponse> {
    let first: ExportGameResponse | undefined;
    let whole: { events: unknown[]; commands: unknown[] } | undefined;
    let pageToken = "";
    for (;;) {
      const page = await this.call((o) =>
        this.admin.exportGame({ gameId, pageSize: options.pageSize ?? 0, pageToken }, o),
      );
      pageToken = page.nextPageToken;
      const part = JSON.parse(new TextDecoder().decode(page.document)) as {
        events: unknown[];
        commands: unknown[];
      };
      if (first === undefined) {
        if (!pageToken) return page; // one page: the whole export as it came
        first = page;
        whole = part;
      } else {
        whole!.events.push(...part.events);
        whole!.commands.push(...part.commands);
      }
      if (!pageToken) {
        const document = new TextEncoder().encode(JSON.stringify(whole, null, 1));
        return create(ExportGameResponseSchema, { document, fileName: first.fileName });
      }
    }
  }

  /**
   * Import an exported game. The service verifies it first and refuses one
   * that does not verify (IMPORT_NOT_VERIFIED), unless `trust`.
   */
  importGame(
    document: Uint8Array,
    options: { gameId?: string; trust?: boolean } = {},
  ): Promise<ImportGameResponse> {
    return this.call((o) =>
      this.admin.importGame(
        { document, gameId: options.gameId ?? "", trust: options.trust ?? false },
        o,
      ),
    );
  }

  // -- integration (integration or admin token) --------------------------------

  /** The global log from `afterPosition`, filtered on the server.
   * `maxBatch` above 1: up to that many events a message, in each
   * response's `events` (a long log arrives several times faster). */
  followLog(
    options: {
      afterPosition?: bigint;
      gameTypes?: string[];
      eventTypes?: string[];
      follow?: boolean;
      maxBatch?: number;
      signal?: AbortSignal;
    } = {},
  ): AsyncGenerator<FollowLogResponse> {
    const follow = options.follow ?? true;
    return this.stream(
      this.integration.followLog(
        {
          afterPosition: options.afterPosition ?? 0n,
          gameTypes: options.gameTypes ?? [],
          eventTypes: options.eventTypes ?? [],
          noFollow: !follow,
          maxBatch: options.maxBatch ?? 0,
        },
        this.callOptions(follow ? 0 : this.timeoutMs, options.signal),
      ),
    );
  }

  /** Counts per game type (of `gameType`, or of all). */
  getStatistics(options: { gameType?: string } = {}): Promise<GetStatisticsResponse> {
    return this.call((o) =>
      this.integration.getStatistics({ gameType: options.gameType ?? "" }, o),
    );
  }
}
