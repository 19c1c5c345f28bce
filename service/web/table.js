// The table at `/game/<id>`: take a seat or watch, see your view, click a
// legal action, follow the game live, and converge on the service's truth
// by itself after a network drop.
//
// How it converges: the WatchGame stream resumes from the last version the
// page saw, with backoff (at once when the browser is back online); every
// event, and every reconnection, refetches the game (GetGame, then
// ListLegalActions when a seat of ours may act), again with backoff while
// that fails or answers a version older than the stream's. While either is
// down the page says "Reconnecting" and its actions are disabled.
//
// Why a click cannot play twice: every command carries the version of the
// actions it was chosen from (`expected_version`: refused with ABORTED if the
// game moved on), and the actions drawn after the player's own click take
// clicks only after a moment (GUARD_MS), so the second click of a slow
// double click does not land on the new button under the pointer.
//
// Why a click is not lost to the table being drawn again: a button replaced
// between the press and the release never gets the click (the browser sends
// it to what both share, the page), so while a press on the table lasts
// (PRESS_MS at most) drawing waits, and happens once the click is handled.

import { ApiError, call, stream } from "./api.js";
import { h } from "./dom.js";
import { clearError, errorText, jsonKey, main, newId, renderer, showError, store, stored, transient } from "./common.js";
import { describe, header, help, lobbyPanel, outcomeText, seatsPanel, statusText, tickClocks, yourMove } from "./panels.js";
import { replayPanel } from "./replay.js";
import { beep, soundOn } from "./sound.js";

/** After the player's click, how long new action buttons ignore clicks (ms):
 * longer than a slow double click (about 600 ms). */
const GUARD_MS = 700;

/** When the player made the click `event` (its time on the page's clock);
 * now, for a browser whose events carry no such time. */
function clickedAt(event) {
  const now = performance.now();
  return event.timeStamp > 0 && event.timeStamp <= now ? event.timeStamp : now;
}

/** How long a press may hold the page's drawing back (ms): longer than any
 * click, short enough that a button held down does not freeze the table. */
const PRESS_MS = 5000;

/** How long the service may take to answer a WatchGame call (ms). */
const OPEN_TIMEOUT_MS = 10000;

/** The wait before the n-th retry (ms): 0.5 s doubling to 8 s, jittered. */
function backoff(n) {
  return Math.min(8000, 500 * 2 ** Math.min(n, 5)) * (0.75 + Math.random() / 4);
}

export class Table {
  constructor(gameId) {
    this.gameId = gameId;
    this.mine = stored(gameId);
    this.game = null;
    this.actions = [];
    this.actionsVersion = -1;
    this.lastVersion = 0;
    this.busy = false;
    this.lastClick = -Infinity;
    this.refreshing = null;
    this.refreshAgain = false;
    this.failures = 0;
    this.streamFailures = 0;
    this.openingSince = null;
    this.link = { stream: true, fetch: true };
    this.wake = null;
    this.logItems = h("ol", { id: "log-lines", tabindex: 0, "aria-label": "What happened, oldest first" });
    this.nameInput = h("input", {
      id: "join-name",
      autocomplete: "nickname",
      value: localStorage.getItem("strata.name") || "",
      placeholder: "Your name",
      oninput: (event) => localStorage.setItem("strata.name", event.target.value),
    });
    // A press (pointer down) on the page not yet released: drawing waits.
    this.pressed = null;
    this.drawWanted = null;
    this.content = null;
    this.finished = false;
    this.watching = null;
    this.errorVersion = null;
    this.announced = "";
    // Whether it was your move when last drawn (null: not drawn yet, so the
    // page's first drawing makes no sound).
    this.wasYourMove = null;
  }

  get token() {
    return this.mine.token || "";
  }

  /** Whether the page reaches the service (the stream and the last fetch). */
  get online() {
    return this.link.stream && this.link.fetch;
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
    // The browser knows first when the network comes and goes.
    window.addEventListener("offline", () => {
      this.setLink("stream", false);
      if (this.watching) this.watching.abort();
    });
    window.addEventListener("online", () => {
      // The failures while offline say nothing of the service: back off
      // from the start again.
      this.streamFailures = 0;
      this.failures = 0;
      // An attempt made while offline may hang rather than fail: start anew.
      if (!this.link.stream) this.restartWatch();
      if (this.wake) this.wake();
      this.scheduleRefresh(0);
    });
    // Drawing again under a pressed button would replace it, and the release
    // would land on the new one, which never saw the press: the click would
    // be lost. While a press on the table lasts, drawing waits for it.
    main.addEventListener("pointerdown", () => {
      clearTimeout(this.pressed);
      this.pressed = setTimeout(() => this.released(), PRESS_MS);
    });
    for (const end of ["pointerup", "pointercancel"]) {
      // After the release's click (dispatched right after pointerup).
      window.addEventListener(end, () => setTimeout(() => this.released(), 0));
    }
    window.addEventListener("blur", () => this.released());
    tickClocks();
    this.watch();
  }

  /** Whether drawing waits for a press to end (and, if so, notes which
   * drawing is wanted then: "all", or "actions" alone). */
  held(what) {
    if (this.pressed === null) return false;
    if (this.drawWanted !== "all") this.drawWanted = what;
    return true;
  }

  /** The press ended: the drawing that waited for it. */
  released() {
    if (this.pressed === null) return;
    clearTimeout(this.pressed);
    this.pressed = null;
    const wanted = this.drawWanted;
    this.drawWanted = null;
    if (wanted === "all") this.draw();
    else if (wanted === "actions") this.drawActions();
  }

  module() {
    return renderer(this.game.gameType);
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
          if (yourMove(this)) {
            const legal = await call("ListLegalActions", { gameId: this.gameId }, this.token);
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

  /** Refreshes until the page holds the service's truth: again with backoff
   * while the service cannot be reached or answers a version older than the
   * stream has shown (a replica behind). */
  async sync() {
    try {
      await this.refresh();
      this.failures = 0;
      this.setLink("fetch", true);
      clearError("connection");
      this.kickWatch();
      if (Number(this.game.version) < this.lastVersion) this.scheduleRefresh(backoff(0));
    } catch (error) {
      if (!transient(error)) showError(error, "connection");
      this.setLink("fetch", false);
      this.scheduleRefresh(backoff(this.failures++));
    }
  }

  scheduleRefresh(delay = 40) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.sync(), delay);
  }

  /** Marks a part of the link to the service up or down, and shows it. */
  setLink(part, up) {
    if (this.link[part] === up) return;
    this.link[part] = up;
    if (this.online) clearError("connection");
    this.drawConnection();
    this.drawActions();
  }

  drawConnection() {
    const state = this.online ? "live" : "reconnecting";
    document.body.dataset.connection = state;
    const box = document.getElementById("connection");
    if (!box) return;
    box.hidden = this.online;
    box.textContent = this.online ? "" : "Reconnecting… the table catches up by itself once the service is reached.";
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

  /** What a game's renderer draws from (`game`: this one, or the game
   * at an earlier version in a replay). */
  context(game = this.game) {
    const you = this.yourSeats();
    return {
      game,
      view: (game.view || {})[jsonKey(game.gameType)] || {},
      content: this.content || {},
      you,
      isYou: (seat) => you.includes(seat),
      name: (seat) => this.seatName(seat),
      who: (seat) => (you.includes(seat) ? `${this.seatName(seat)} (you)` : this.seatName(seat)),
      // For pieces drawn as controls (a map's places): the legal actions
      // and the click (ignored while the action buttons are).
      actions: this.actions,
      act: ((version) => (action) => this.act(action, version))(this.actionsVersion),
    };
  }

  /** Follows the game live with WatchGame from the last version seen,
   * resuming after a cut with backoff, and again with the new
   * token after taking a seat (events are redacted for the token the
   * stream was opened with). */
  async watch() {
    for (;;) {
      const watching = new AbortController();
      this.watching = watching;
      const signal = watching.signal;
      // A stream the service has not answered in a while is given up.
      const opening = setTimeout(() => watching.abort(), OPEN_TIMEOUT_MS);
      this.openingSince = performance.now();
      document.body.dataset.stream = "opening";
      // Given up means given up: the loop goes on even if the browser never
      // settles the aborted request (what it delivers after is ignored).
      const givenUp = new Promise((_, reject) => {
        signal.addEventListener("abort", () => reject(new DOMException("The stream was given up.", "AbortError")));
      });
      try {
        const attempt = stream(
          "WatchGame",
          // From the last version seen, not the one after: the service
          // answers a stream with its first event, so a stream of a quiet
          // game from the next version would stay unanswered (and look
          // hung) until someone moved. The event seen again is ignored.
          { gameId: this.gameId, fromVersion: String(Math.max(1, this.lastVersion)) },
          this.token,
          ({ event }) => signal.aborted || this.onEvent(event),
          signal,
          () => {
            if (signal.aborted) return;
            clearTimeout(opening);
            this.openingSince = null;
            document.body.dataset.stream = "open";
            this.streamFailures = 0;
            if (!this.link.stream) this.scheduleRefresh(0);
            this.setLink("stream", true);
          },
        );
        attempt.catch(() => {});
        givenUp.catch(() => {});
        await Promise.race([attempt, givenUp]);
        if (this.finished) {
          this.scheduleRefresh(0);
          return;
        }
      } catch (error) {
        if (signal.aborted && this.restarting) {
          this.restarting = false;
          continue;
        }
        if (!transient(error)) showError(error, "connection");
        console.debug("strata: the game's stream ended:", String((error && error.message) || error));
      } finally {
        clearTimeout(opening);
        this.openingSince = null;
      }
      if (this.finished && this.link.stream) return;
      this.setLink("stream", false);
      document.body.dataset.stream = "waiting";
      await new Promise((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, backoff(this.streamFailures++));
      });
      this.wake = null;
    }
  }

  /** The service answered a fetch while the stream is down: try the stream
   * now rather than at the end of its backoff, and give up an attempt that
   * has been opening too long (its own timer may not have fired: a
   * background tab's timers are throttled). */
  kickWatch() {
    if (this.link.stream) return;
    if (this.wake) this.wake();
    else if (this.openingSince !== null && performance.now() - this.openingSince > OPEN_TIMEOUT_MS) {
      this.restartWatch();
    }
  }

  /** Opens the stream again at once (with this browser's new token). */
  restartWatch() {
    if (!this.watching) return;
    if (this.wake) {
      this.wake(); // between attempts: the next one starts now
      return;
    }
    this.restarting = true;
    this.watching.abort();
  }

  onEvent(event) {
    if (!event) return;
    const version = Number(event.version || 0);
    if (version <= this.lastVersion) return;
    // A version skipped (events the stream did not carry): the refetch
    // below brings the view to the latest version all the same.
    this.lastVersion = version;
    let text = "";
    let raw = false;
    try {
      text = describe(this, event);
    } catch (error) {
      text = undefined;
    }
    if (text === undefined) {
      // An event this page has no words for: its type, marked for the tests.
      text = `${event.type || "Something happened"}.`;
      raw = true;
    }
    if (text) {
      this.logItems.appendChild(h("li", { class: raw ? "raw" : null, dataset: { version }, value: version }, text));
      this.logItems.scrollTop = this.logItems.scrollHeight;
    }
    if (event.gameFinished) this.finished = true;
    this.scheduleRefresh();
  }

  /** Submits a legal action, pinned to the version it was listed at
   * (`version`: the version of the actions it was drawn from). `at`: when
   * the player clicked (the click event's time): on a busy page a click is
   * handled later than it was made, and the guard is about the player's
   * two clicks, not about when the page got round to each. */
  async act(action, version = this.actionsVersion, at = performance.now()) {
    if (this.busy || !this.online || at - this.lastClick < GUARD_MS) return;
    this.busy = true;
    this.lastClick = at;
    document.body.dataset.busy = "true";
    clearError("action");
    this.drawActions();
    let refused = false;
    try {
      const response = await call(
        "SubmitCommand",
        {
          gameId: this.gameId,
          seat: action.seat || 0,
          commandId: newId(),
          expectedVersion: String(version),
          command: action.command,
          includeLegalActions: true,
        },
        this.token,
      );
      this.setActions(response.legalActions || [], Number(response.legalActionsVersion || response.version));
    } catch (error) {
      if (!(error instanceof ApiError)) {
        // The service was not reached, or its answer was lost: whether the
        // move was made, the table shows once it is reached again.
        this.setLink("fetch", false);
        this.scheduleRefresh(0);
      } else {
        refused = true;
        showError(
          error.code === "aborted"
            ? "The game moved on before your click reached it, so nothing was played: here is the table as it is now."
            : error,
        );
      }
    } finally {
      this.busy = false;
      delete document.body.dataset.busy;
    }
    if (refused) {
      // The refusal stays until the game moves on from the table it is
      // shown with (or until the next click).
      await this.sync();
      this.errorVersion = this.game ? Number(this.game.version) : null;
    }
    // The command's events come back on the watch stream, which redraws the
    // view; until then the legal actions of the response may be clicked.
    this.drawActions();
    this.scheduleRefresh();
  }

  /** Whether the action buttons still ignore clicks after the player's. */
  guarded() {
    return performance.now() - this.lastClick < GUARD_MS;
  }

  async join(seat) {
    clearError("action");
    const playerName = this.nameInput.value.trim() || "Player";
    localStorage.setItem("strata.name", playerName);
    try {
      const joined = await call("JoinGame", { gameId: this.gameId, seat, playerName }, this.token);
      this.mine = { ...this.mine, token: joined.seatToken };
      store(this.gameId, this.mine);
      this.restartWatch();
    } catch (error) {
      showError(error);
    }
    await this.sync();
  }

  /** The finished game as it was at `version` (GetGame at_version), shown
   * in the replay panel. */
  async replayAt(version) {
    this.replay = { version, game: null };
    try {
      const { game } = await call("GetGame", { gameId: this.gameId, atVersion: String(version) }, this.token);
      if (!this.replay || this.replay.version !== version) return; // moved on
      this.replay.game = game;
      clearError("action");
    } catch (error) {
      showError(error);
    }
    this.draw();
  }

  /** The rematch (created by the first player to ask: the same game for
   * every later one), each of this browser's seats claimed with its token
   * (the service kept them for it); then its table. */
  async rematch() {
    clearError("action");
    try {
      const { gameId } = await call("CreateGame", { rematchOf: this.gameId, requestId: newId() }, this.token);
      for (const seat of this.yourSeats()) {
        await call("JoinGame", { gameId, seat }, this.token);
      }
      store(gameId, { token: this.token });
      location.assign(`/game/${gameId}`);
    } catch (error) {
      showError(error);
    }
  }

  async startGame() {
    clearError("action");
    try {
      await call("StartGame", { gameId: this.gameId }, this.token);
    } catch (error) {
      showError(error);
    }
    await this.sync();
  }

  async leave(seat) {
    clearError("action");
    try {
      await call("LeaveGame", { gameId: this.gameId, seat }, this.token);
    } catch (error) {
      showError(error);
    }
    await this.sync();
  }

  /** The turn, told to screen readers (a live region outside the redrawn
   * page), in the tab's title and, when the player turned it on, by a
   * sound as it becomes their move. */
  announce(ctx) {
    const title = this.module().title;
    const mine = yourMove(this);
    document.title = mine ? `Your move: ${title} (Strata)` : `Strata: ${title}`;
    if (mine && this.wasYourMove === false && soundOn()) beep();
    this.wasYourMove = mine;
    const text = statusText(this, ctx);
    const box = document.getElementById("announce");
    if (box && text !== this.announced) box.textContent = text;
    this.announced = text;
  }

  draw() {
    if (!this.game || this.held("all")) return;
    // Where the focus and the caret are, before drawing moves the elements
    // kept across drawings (the name input) out of the page.
    const scroll = window.scrollY;
    const focused = document.activeElement;
    const inMain = focused && focused !== document.body && main.contains(focused);
    const keep = inMain && focused.id ? focused.id : null;
    const selection = inMain && "selectionStart" in focused ? [focused.selectionStart, focused.selectionEnd] : null;
    const game = this.game;
    const ctx = this.context();
    const module = this.module();
    if (this.errorVersion !== null && Number(game.version) > this.errorVersion) {
      this.errorVersion = null;
      clearError("action");
    }
    document.body.dataset.status = game.status;
    document.body.dataset.version = game.version;
    const you = ctx.you;
    const sections = [
      header(this, ctx),
      h("p", { id: "connection", class: "connection", role: "status", hidden: true }),
      h("p", { id: "error", class: "error", role: "alert", hidden: !errorText() }, errorText()),
    ];
    if (module.help) sections.push(help(this, ctx));
    if (game.status === "GAME_STATUS_FINISHED") {
      sections.push(
        h(
          "section",
          { id: "outcome", class: "outcome" },
          h("h2", {}, "Game over"),
          h("p", {}, outcomeText(this, game.outcome || {})),
          you.length
            ? h(
                "button",
                { id: "rematch", type: "button", onclick: () => this.rematch() },
                game.rematch ? "Go to the rematch" : "Rematch: play again with the same seats",
              )
            : null,
        ),
      );
    }
    if (game.status === "GAME_STATUS_FINISHED") sections.push(replayPanel(this));
    if (game.status === "GAME_STATUS_OPEN") sections.push(this.lobbyPanel());
    if (game.status !== "GAME_STATUS_OPEN") {
      // The actions first: on a phone they are on the first screen.
      sections.push(
        h(
          "section",
          { id: "actions-panel", "aria-labelledby": "actions-heading" },
          h("h2", { id: "actions-heading" }, "Your actions"),
          h("div", { id: "actions" }),
        ),
      );
      const hand = you.length ? module.hand(ctx) : null;
      if (hand) sections.push(h("section", { id: "hand" }, h("h2", {}, hand.title || "Your hand"), hand.body));
      sections.push(h("section", { id: "board" }, h("h2", {}, "The table"), module.board(ctx)));
      sections.push(h("section", { id: "players" }, h("h2", {}, "Players"), module.players(ctx)));
    }
    sections.push(seatsPanel(this, ctx));
    sections.push(h("section", { id: "log" }, h("h2", {}, "What happened"), this.logItems));
    main.replaceChildren(...sections);
    window.scrollTo(0, scroll);
    this.logItems.scrollTop = this.logItems.scrollHeight;
    this.drawConnection();
    this.announce(ctx);
    // The focus stays where it was (the name being typed, the log) when that
    // is drawn again, caret and all.
    const again = keep && document.getElementById(keep);
    if (again) {
      again.focus({ preventScroll: true });
      if (selection && again.setSelectionRange) {
        try {
          again.setSelectionRange(...selection);
        } catch (_) {
          // an input without a caret (a number)
        }
      }
    }
    this.drawActions(Boolean(inMain && focused.classList.contains("action")));
  }

  /** The action buttons; `focus`: the focus was on one of them before the
   * page was drawn again. */
  drawActions(focus = false) {
    const box = document.getElementById("actions");
    if (!box || !this.game || this.held("actions")) return;
    const wasInside = box.contains(document.activeElement);
    const ctx = this.context();
    const module = this.module();
    const several = ctx.you.length > 1;
    const guard = this.guarded();
    const disabled = this.busy || !this.online || guard;
    if (guard && !this.guardTimer) {
      this.guardTimer = setTimeout(() => {
        this.guardTimer = null;
        this.drawActions(document.activeElement === document.body);
      }, GUARD_MS - (performance.now() - this.lastClick) + 5);
    }
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
          disabled,
          dataset: { index, seat, command: key || "", version: this.actionsVersion },
          onclick: (event) => this.act(action, this.actionsVersion, clickedAt(event)),
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
    // The focus never falls to the page's body: it goes to the first action
    // (or, after the player's own click left none, to the status line, from
    // which it goes to the first action when there is one again).
    const now = document.activeElement;
    const parked = !now || now === document.body || now.id === "status";
    if (!parked && !wasInside) return;
    const first = box.querySelector("button:not([disabled])");
    if (first) first.focus({ preventScroll: true });
    else if ((focus || wasInside) && !disabled) {
      const status = document.getElementById("status");
      if (status) status.focus({ preventScroll: true });
    }
  }

  lobbyPanel() {
    return lobbyPanel(this);
  }
}
