// The web table: a lobby at `/` (create a game, seat bots) and a table at
// `/game/<id>` (take a seat or watch, see your view, click a legal action,
// follow the game live). Everything shown comes from the API, redacted for
// this browser's seat token; the page holds no rules: what may be done comes
// from ListLegalActions and SubmitCommand(include_legal_actions).

import { ApiError, call, stream } from "./api.js";
import { enumWords, h, words } from "./dom.js";
import cubosaurs from "./games/cubosaurs.js";
import dinosaursExtinct from "./games/dinosaurs_extinct.js";
import escapingExtinction from "./games/escaping_extinction.js";
import happyLittleDinosaurs from "./games/happy_little_dinosaurs.js";

/** Each game type's renderer (games/<game>.js), by game type id. */
const GAMES = {
  cubosaurs,
  dinosaurs_extinct: dinosaursExtinct,
  escaping_extinction: escapingExtinction,
  happy_little_dinosaurs: happyLittleDinosaurs,
};

/** The JSON name of a game type's field in the `oneof game` messages. */
function jsonKey(gameType) {
  return gameType.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
}

const main = document.getElementById("main");

// ---- Seat tokens, kept per game in this browser -------------------------

function stored(gameId) {
  try {
    return JSON.parse(localStorage.getItem(`strata.game.${gameId}`)) || {};
  } catch (_) {
    return {};
  }
}

function store(gameId, value) {
  localStorage.setItem(`strata.game.${gameId}`, JSON.stringify(value));
}

function newId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The last error, shown until the next action (the table is drawn again
 * with every event, so it is kept here, not only in the page). */
let lastError = "";

function showError(error) {
  lastError = error ? String(error.message || error) : "";
  const box = document.getElementById("error");
  if (!box) return;
  box.textContent = lastError;
  box.hidden = !lastError;
}

// ---- The lobby ----------------------------------------------------------

async function lobby() {
  document.title = "Strata: new game";
  const { gameTypes } = await call("ListGameTypes", {});
  const types = (gameTypes || []).filter((t) => GAMES[t.gameType]);
  const typeSelect = h(
    "select",
    { id: "game-type", name: "game-type" },
    types.map((t) => h("option", { value: t.gameType }, t.title)),
  );
  const players = h("input", { id: "players", type: "number", value: 2 });
  const seats = h("div", { id: "seat-choices" });
  const options = h("div", { id: "options" });
  const name = h("input", {
    id: "player-name",
    value: localStorage.getItem("strata.name") || "",
    placeholder: "Your name",
  });

  function current() {
    return types.find((t) => t.gameType === typeSelect.value) || types[0];
  }
  function drawSeats() {
    const type = current();
    players.min = type.minPlayers;
    players.max = type.maxPlayers;
    let n = Number(players.value) || type.minPlayers;
    n = Math.max(type.minPlayers, Math.min(type.maxPlayers, n));
    players.value = n;
    const old = [...seats.querySelectorAll("select")].map((s) => s.value);
    seats.replaceChildren(
      ...Array.from({ length: n }, (_, i) =>
        h(
          "label",
          { class: "seat-choice" },
          `Seat ${i + 1}: `,
          h(
            "select",
            { dataset: { seat: i } },
            h("option", { value: "person" }, i === 0 ? "me" : "a person (join link)"),
            h("option", { value: "heuristic" }, "heuristic bot"),
            h("option", { value: "random" }, "random bot"),
          ),
        ),
      ),
    );
    seats.querySelectorAll("select").forEach((s, i) => {
      s.value = old[i] || (i === 0 ? "person" : "heuristic");
    });
  }
  function drawOptions() {
    const wanted = GAMES[current().gameType].options || [];
    options.replaceChildren(
      ...wanted.map((o) =>
        h(
          "label",
          { class: "option" },
          o.type === "checkbox"
            ? [h("input", { type: "checkbox", dataset: { option: o.name } }), ` ${o.label}`]
            : [
                `${o.label}: `,
                h("input", {
                  type: "number",
                  min: o.min,
                  max: o.max,
                  value: o.value,
                  dataset: { option: o.name },
                }),
              ],
        ),
      ),
    );
  }
  function chosenOptions() {
    const chosen = {};
    for (const input of options.querySelectorAll("input")) {
      const value = input.type === "checkbox" ? input.checked : Number(input.value) || 0;
      if (value) chosen[input.dataset.option] = value;
    }
    return chosen;
  }
  typeSelect.addEventListener("change", drawOptions);
  typeSelect.addEventListener("change", drawSeats);
  players.addEventListener("change", drawSeats);

  async function create(event) {
    event.preventDefault();
    showError(null);
    const type = current();
    const choices = [...seats.querySelectorAll("select")].map((s) => s.value);
    const bots = [];
    choices.forEach((bot, seat) => {
      if (bot !== "person") bots.push({ seat, bot });
    });
    try {
      const created = await call("CreateGame", {
        gameType: type.gameType,
        players: choices.length,
        bots,
        options: { [jsonKey(type.gameType)]: chosenOptions() },
        requestId: newId(),
      });
      const gameId = created.gameId;
      const mine = { host: created.hostToken || "" };
      const seat = choices.indexOf("person");
      if (seat >= 0) {
        const playerName = name.value.trim() || "Player";
        localStorage.setItem("strata.name", playerName);
        const joined = await call("JoinGame", { gameId, seat, playerName });
        mine.token = joined.seatToken;
      }
      store(gameId, mine);
      location.assign(`/game/${gameId}`);
    } catch (error) {
      showError(error);
    }
  }

  drawSeats();
  drawOptions();
  main.replaceChildren(
    h("h1", {}, "Strata: a dinosaur game table"),
    h(
      "form",
      { id: "new-game", onsubmit: create },
      h("h2", {}, "New game"),
      h("label", {}, "Game: ", typeSelect),
      h("label", {}, "Players: ", players),
      h("label", {}, "Your name: ", name),
      options,
      seats,
      h("button", { id: "create", type: "submit" }, "Create the game"),
    ),
    h("p", { id: "error", class: "error", hidden: true }),
    h(
      "p",
      { class: "hint" },
      "Seats left to a person get a join link to share; anyone with the link ",
      "may also watch as a spectator.",
    ),
    h("section", { id: "games" }),
  );
  listGames(types).catch(() => {});
}

/** The lobby's lists: games waiting to start, games being played. */
async function listGames(types) {
  const title = Object.fromEntries(types.map((t) => [t.gameType, t.title]));
  const lists = [
    ["GAME_STATUS_OPEN", "open-games", "Games waiting to start", "join or watch"],
    ["GAME_STATUS_ACTIVE", "active-games", "Games being played", "watch"],
  ];
  const parts = [];
  for (const [status, id, heading, verb] of lists) {
    const { games } = await call("ListGames", { status, pageSize: 10, newestFirst: true });
    const newest = (games || []).filter((g) => title[g.gameType]);
    if (!newest.length) continue;
    parts.push(
      h("h2", {}, heading),
      h(
        "ul",
        { id },
        newest.map((g) =>
          h(
            "li",
            {},
            h("a", { href: `/game/${g.gameId}` }, `${title[g.gameType]}`),
            ` — ${g.seatsTaken || 0} of ${g.players || 0} seats taken (${verb})`,
          ),
        ),
      ),
    );
  }
  const box = document.getElementById("games");
  if (box) box.replaceChildren(...parts);
}

// ---- The table ----------------------------------------------------------

class Table {
  constructor(gameId) {
    this.gameId = gameId;
    this.mine = stored(gameId);
    this.game = null;
    this.actions = [];
    this.actionsVersion = -1;
    this.lastVersion = 0;
    this.busy = false;
    this.refreshing = null;
    this.refreshAgain = false;
    this.logItems = h("ol", { id: "log-lines" });
    this.content = null;
    this.finished = false;
    this.watching = null;
  }

  get token() {
    return this.mine.token || "";
  }

  async start() {
    try {
      await this.refresh();
    } catch (error) {
      if (error instanceof ApiError && error.code === "unauthenticated") {
        this.mine = {};
        store(this.gameId, this.mine);
        await this.refresh();
      } else {
        main.replaceChildren(
          h("h1", {}, "Strata"),
          h("p", { id: "error", class: "error" }, String(error.message || error)),
          h("p", {}, h("a", { href: "/" }, "Back to the lobby")),
        );
        return;
      }
    }
    this.watch();
  }

  module() {
    return GAMES[this.game.gameType];
  }

  async loadContent() {
    if (this.content) return;
    const response = await fetch(`/static/content/${this.game.gameType}.json`);
    this.content = response.ok ? await response.json() : {};
  }

  /** GetGame and, when a seat of ours may act, ListLegalActions; then draw. */
  refresh() {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.refreshAgain = false;
          const { game } = await call("GetGame", { gameId: this.gameId }, this.token);
          if (this.game && Number(game.version) < Number(this.game.version)) continue;
          this.game = game;
          await this.loadContent();
          const ours = this.yourSeats();
          const canAct =
            game.status === "GAME_STATUS_ACTIVE" &&
            (game.activeSeats || []).some((s) => ours.includes(s));
          if (canAct) {
            const legal = await call(
              "ListLegalActions",
              { gameId: this.gameId },
              this.token,
            );
            this.setActions(legal.actions || [], Number(legal.version));
          } else {
            this.setActions([], Number(game.version));
          }
          this.draw();
        } while (this.refreshAgain);
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  setActions(actions, version) {
    if (version < this.actionsVersion) return;
    this.actions = actions;
    this.actionsVersion = version;
  }

  yourSeats() {
    return (this.game && this.game.yourSeats) || [];
  }

  seatName(seat) {
    const s = ((this.game && this.game.seats) || []).find((x) => (x.seat || 0) === seat);
    if (s && s.bot) return `${s.playerName || "bot"} (seat ${seat + 1})`;
    if (s && s.playerName) return s.playerName;
    return `Seat ${seat + 1}`;
  }

  context() {
    const game = this.game;
    const you = this.yourSeats();
    return {
      game,
      view: (game.view || {})[jsonKey(game.gameType)] || {},
      content: this.content || {},
      you,
      isYou: (seat) => you.includes(seat),
      name: (seat) => this.seatName(seat),
      who: (seat) => (you.includes(seat) ? `${this.seatName(seat)} (you)` : this.seatName(seat)),
    };
  }

  /** Follows the game live with WatchGame, resuming after a cut, and again
   * with the new token after taking a seat (events are redacted for the
   * token the stream was opened with). */
  async watch() {
    for (;;) {
      this.watching = new AbortController();
      try {
        await stream(
          "WatchGame",
          { gameId: this.gameId, fromVersion: this.lastVersion + 1 },
          this.token,
          ({ event }) => this.onEvent(event),
          this.watching.signal,
        );
        if (this.finished) {
          await this.refresh();
          return;
        }
      } catch (error) {
        if (error && error.name === "AbortError") continue;
        if (error instanceof ApiError && error.code !== "unavailable") {
          showError(error);
        }
      }
      if (this.finished) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  onEvent(event) {
    if (!event) return;
    const version = Number(event.version || 0);
    if (version <= this.lastVersion) return;
    this.lastVersion = version;
    let text = "";
    let raw = false;
    try {
      text = this.describe(event);
    } catch (error) {
      text = undefined;
    }
    if (text === undefined) {
      // An event this page has no words for: its type, marked for the tests.
      text = `${event.type || "Something happened"}.`;
      raw = true;
    }
    if (text) {
      this.logItems.appendChild(
        h("li", { class: raw ? "raw" : null, dataset: { version }, value: version }, text),
      );
      this.logItems.scrollTop = this.logItems.scrollHeight;
    }
    if (event.gameFinished) this.finished = true;
    this.scheduleRefresh();
  }

  scheduleRefresh() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh().catch(showError), 40);
  }

  describe(event) {
    const game = this.game;
    // The log names players plainly ("Ada rolled a 4"), without "(you)".
    const ctx = { ...this.context(), who: (seat) => this.seatName(seat) };
    if (event.gameCreated) {
      return `The game was created for ${event.gameCreated.players || 0} players.`;
    }
    if (event.playerJoined) {
      const j = event.playerJoined;
      const seat = j.seat || 0;
      return j.bot
        ? `A ${j.bot} bot took seat ${seat + 1}.`
        : `${j.playerName || "A player"} took seat ${seat + 1}.`;
    }
    if (event.playerLeft) return `Seat ${(event.playerLeft.seat || 0) + 1} is free again.`;
    if (event.gameStarted) return "The game began.";
    if (event.gameFinished) return `The game is over. ${this.outcomeText(event.gameFinished.outcome || {})}`;
    if (event.seedRevealed) {
      return `The seed was revealed (${event.seedRevealed.seed || ""}): anyone can now check the game against the commitment made at its start.`;
    }
    if (event.gameEvent) {
      const body = event.gameEvent[jsonKey(game.gameType)] || {};
      const [key] = Object.keys(body);
      if (!key) return "";
      return this.module().describe(key, body[key] || {}, ctx);
    }
    return undefined;
  }

  outcomeText(outcome) {
    const winners = (outcome.winners || []).map((s) => this.seatName(s));
    const result = outcome.result ? ` (${enumWords(outcome.result)})` : "";
    return winners.length
      ? `${words(winners)} won${result}.`
      : `Nobody won${result}.`;
  }

  async act(action) {
    if (this.busy) return;
    this.busy = true;
    document.body.dataset.busy = "true";
    showError(null);
    this.drawActions();
    try {
      const response = await call(
        "SubmitCommand",
        {
          gameId: this.gameId,
          seat: action.seat || 0,
          commandId: newId(),
          command: action.command,
          includeLegalActions: true,
        },
        this.token,
      );
      this.setActions(
        response.legalActions || [],
        Number(response.legalActionsVersion || response.version),
      );
    } catch (error) {
      showError(error);
    } finally {
      this.busy = false;
      delete document.body.dataset.busy;
    }
    // The command's events come back on the watch stream, which redraws the
    // view; until then the legal actions of the response may be clicked.
    this.drawActions();
    this.scheduleRefresh();
  }

  async join(seat) {
    showError(null);
    const input = document.getElementById("join-name");
    const playerName = (input && input.value.trim()) || "Player";
    localStorage.setItem("strata.name", playerName);
    try {
      const joined = await call(
        "JoinGame",
        { gameId: this.gameId, seat, playerName },
        this.token,
      );
      this.mine = { ...this.mine, token: joined.seatToken };
      store(this.gameId, this.mine);
      if (this.watching) this.watching.abort();
      await this.refresh();
    } catch (error) {
      showError(error);
    }
  }

  async startGame() {
    showError(null);
    try {
      await call("StartGame", { gameId: this.gameId }, this.token);
      await this.refresh();
    } catch (error) {
      showError(error);
    }
  }

  statusText(ctx) {
    const game = this.game;
    if (game.status === "GAME_STATUS_OPEN") {
      const taken = (game.seats || []).filter((s) => s.taken).length;
      return `Waiting for players: ${taken} of ${game.players} seats taken.`;
    }
    if (game.status === "GAME_STATUS_FINISHED") {
      return `Game over. ${this.outcomeText(game.outcome || {})}`;
    }
    const active = game.activeSeats || [];
    const own = this.module().status(ctx);
    const yours = active.some((s) => ctx.isYou(s));
    const others = active.filter((s) => !ctx.isYou(s)).map((s) => ctx.who(s));
    return [
      yours ? "Your move." : "",
      own || "",
      others.length ? `Waiting for ${words(others)}.` : "",
    ]
      .filter(Boolean)
      .join(" ");
  }

  draw() {
    const game = this.game;
    const ctx = this.context();
    const module = this.module();
    const title = module.title;
    document.title = `Strata: ${title}`;
    document.body.dataset.status = game.status;
    document.body.dataset.version = game.version;
    const link = `${location.origin}/game/${this.gameId}`;
    const you = ctx.you;
    const sections = [
      h(
        "header",
        {},
        h("h1", {}, title),
        h(
          "p",
          { class: "share" },
          "Join link: ",
          h("input", { id: "share", readonly: true, value: link, size: link.length }),
          " ",
          h("a", { href: "/" }, "New game"),
        ),
        h("p", { id: "status", class: "status" }, this.statusText(ctx)),
        h(
          "p",
          { id: "you", class: "you" },
          you.length
            ? `You play ${words(you.map((s) => `seat ${s + 1} (${this.seatName(s)})`))}.`
            : "You are watching as a spectator.",
        ),
      ),
      h("p", { id: "error", class: "error", hidden: !lastError }, lastError),
    ];
    if (game.status === "GAME_STATUS_FINISHED") {
      sections.push(
        h(
          "section",
          { id: "outcome", class: "outcome" },
          h("h2", {}, "Game over"),
          h("p", {}, this.outcomeText(game.outcome || {})),
        ),
      );
    }
    if (game.status === "GAME_STATUS_OPEN") sections.push(this.lobbyPanel());
    sections.push(this.seatsPanel(ctx));
    if (game.status !== "GAME_STATUS_OPEN") {
      const hand = you.length ? module.hand(ctx) : null;
      if (hand) sections.push(h("section", { id: "hand" }, h("h2", {}, hand.title || "Your hand"), hand.body));
      sections.push(h("section", { id: "actions-panel" }, h("h2", {}, "Your actions"), h("div", { id: "actions" })));
      sections.push(h("section", { id: "board" }, h("h2", {}, "The table"), module.board(ctx)));
      sections.push(h("section", { id: "players" }, h("h2", {}, "Players"), module.players(ctx)));
    }
    sections.push(h("section", { id: "log" }, h("h2", {}, "What happened"), this.logItems));
    const scroll = window.scrollY;
    main.replaceChildren(...sections);
    window.scrollTo(0, scroll);
    this.logItems.scrollTop = this.logItems.scrollHeight;
    this.drawActions();
  }

  drawActions() {
    const box = document.getElementById("actions");
    if (!box || !this.game) return;
    const ctx = this.context();
    const module = this.module();
    const several = ctx.you.length > 1;
    const buttons = this.actions.map((action, index) => {
      const seat = action.seat || 0;
      const inner = (action.command || {})[jsonKey(this.game.gameType)] || {};
      const [key] = Object.keys(inner);
      let label = "";
      try {
        label = module.label(key, inner[key] || {}, ctx, seat);
      } catch (_) {
        label = "";
      }
      const fallback = !label;
      label = label || action.description;
      return h(
        "button",
        {
          // A command this page has no words for shows the API's description.
          class: fallback ? "action raw" : "action",
          type: "button",
          disabled: this.busy,
          dataset: { index, seat, command: key || "" },
          onclick: () => this.act(action),
        },
        several ? `${this.seatName(seat)}: ${label}` : label,
      );
    });
    box.dataset.version = String(this.actionsVersion);
    if (buttons.length) box.replaceChildren(...buttons);
    else
      box.replaceChildren(
        h(
          "p",
          { class: "hint" },
          this.game.status === "GAME_STATUS_ACTIVE" && ctx.you.length
            ? "Nothing to do now: waiting for the others."
            : "No actions for you.",
        ),
      );
  }

  async leave(seat) {
    showError(null);
    try {
      await call("LeaveGame", { gameId: this.gameId, seat }, this.token);
      await this.refresh();
    } catch (error) {
      showError(error);
    }
  }

  lobbyPanel() {
    const game = this.game;
    const you = this.yourSeats();
    const free = (game.seats || []).filter((s) => !s.taken);
    const parts = [h("h2", {}, "Seats")];
    if (you.length) {
      parts.push(
        h(
          "p",
          {},
          you.map((seat) =>
            h(
              "button",
              {
                class: "leave",
                type: "button",
                dataset: { seat },
                onclick: () => this.leave(seat),
              },
              `Leave seat ${seat + 1}`,
            ),
          ),
        ),
      );
    }
    if (free.length) {
      parts.push(
        h(
          "p",
          {},
          "Your name: ",
          h("input", {
            id: "join-name",
            value: localStorage.getItem("strata.name") || "",
            placeholder: "Your name",
            // The panel is drawn again with every event: keep what is typed.
            oninput: (event) => localStorage.setItem("strata.name", event.target.value),
          }),
        ),
        h(
          "p",
          {},
          free.map((s) =>
            h(
              "button",
              {
                class: "join",
                type: "button",
                dataset: { seat: s.seat || 0 },
                onclick: () => this.join(s.seat || 0),
              },
              `Take seat ${(s.seat || 0) + 1}`,
            ),
          ),
        ),
        h("p", { class: "hint" }, "Or just watch: spectators see what everyone may see."),
      );
    } else if (you.length) {
      parts.push(
        h(
          "button",
          { id: "start", type: "button", onclick: () => this.startGame() },
          "Start the game",
        ),
      );
    } else {
      parts.push(h("p", {}, "Every seat is taken; waiting for a player to start."));
    }
    return h("section", { id: "join" }, parts);
  }

  seatsPanel(ctx) {
    const game = this.game;
    const active = game.activeSeats || [];
    return h(
      "section",
      { id: "seats" },
      h(
        "ul",
        { class: "seats" },
        (game.seats || []).map((s) => {
          const seat = s.seat || 0;
          return h(
            "li",
            {
              class: [
                "seat",
                ctx.isYou(seat) ? "mine" : "",
                active.includes(seat) ? "active" : "",
              ].join(" "),
              dataset: { seat },
            },
            `Seat ${seat + 1}: `,
            s.taken ? (s.bot ? `${s.bot} bot` : s.playerName || "a player") : "free",
            ctx.isYou(seat) ? " (you)" : "",
            active.includes(seat) ? " ◀ to act" : "",
          );
        }),
      ),
    );
  }
}

// ---- Routing ------------------------------------------------------------

const match = location.pathname.match(/^\/game\/([^/]+)\/?$/);
if (match) {
  new Table(decodeURIComponent(match[1])).start();
} else {
  lobby().catch((error) => {
    main.replaceChildren(h("p", { id: "error", class: "error" }, String(error.message || error)));
  });
}
