// Parts of the table page drawn from the game as it is: the header (join
// link, status), the seats before the start, the seats' list, the outcome
// and the log's sentences for the service's own events. Each takes the
// Table (table.js) it draws for.

import { h, enumWords, words } from "./dom.js";
import { jsonKey } from "./common.js";
import { soundToggle } from "./sound.js";

/** "Ada and Bob won (Escaped)." or "Nobody won …". */
export function outcomeText(table, outcome) {
  const winners = (outcome.winners || []).map((s) => table.seatName(s));
  const result = outcome.result ? ` (${enumWords(outcome.result)})` : "";
  return winners.length ? `${words(winners)} won${result}.` : `Nobody won${result}.`;
}

/** Whose move it is, in words ("Your move. … Waiting for Bob."). */
export function statusText(table, ctx) {
  const game = table.game;
  if (game.status === "GAME_STATUS_OPEN") {
    const taken = (game.seats || []).filter((s) => s.taken).length;
    return `Waiting for players: ${taken} of ${game.players} seats taken.`;
  }
  if (game.status === "GAME_STATUS_FINISHED") {
    return `Game over. ${outcomeText(table, game.outcome || {})}`;
  }
  const active = game.activeSeats || [];
  const own = table.module().status(ctx);
  const others = active.filter((s) => !ctx.isYou(s)).map((s) => ctx.who(s));
  return [
    yourMove(table) ? "Your move." : "",
    own || "",
    others.length ? `Waiting for ${words(others)}.` : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** Whether a seat of this browser is to act now. */
export function yourMove(table) {
  const game = table.game;
  if (!game || game.status !== "GAME_STATUS_ACTIVE") return false;
  const you = table.yourSeats();
  return (game.activeSeats || []).some((s) => you.includes(s));
}

/** The words of the service's own events (a game's own: its module's). */
export function describe(table, event) {
  const game = table.game;
  // The log names players plainly ("Ada rolled a 4"), without "(you)".
  const ctx = { ...table.context(), who: (seat) => table.seatName(seat) };
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
  if (event.gameFinished) {
    return `The game is over. ${outcomeText(table, event.gameFinished.outcome || {})}`;
  }
  if (event.seedRevealed) {
    return `The seed was revealed (${event.seedRevealed.seed || ""}): anyone can now check the game against the commitment made at its start.`;
  }
  if (event.gameEvent) {
    const body = event.gameEvent[jsonKey(game.gameType)] || {};
    const [key] = Object.keys(body);
    if (!key) return "";
    return table.module().describe(key, body[key] || {}, ctx);
  }
  return undefined;
}

/** The page's header: title, join link, status, who you are. */
export function header(table, ctx) {
  const link = `${location.origin}/game/${table.gameId}`;
  const you = ctx.you;
  return h(
    "header",
    {},
    h("h1", {}, table.module().title),
    h(
      "p",
      { class: "share" },
      h("label", { for: "share" }, "Join link: "),
      h("input", { id: "share", readonly: true, value: link }),
      " ",
      h("a", { href: "/" }, "New game"),
    ),
    h("p", { id: "status", class: "status", tabindex: -1 }, statusText(table, ctx)),
    h(
      "p",
      { id: "you", class: "you" },
      you.length
        ? `You play ${words(you.map((s) => `seat ${s + 1} (${table.seatName(s)})`))}.`
        : "You are watching as a spectator.",
    ),
    you.length ? h("p", { class: "sound-choice" }, soundToggle()) : null,
  );
}

/** Before the start: take a free seat (with a name), leave one, start. */
export function lobbyPanel(table) {
  const game = table.game;
  const you = table.yourSeats();
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
            { class: "leave", type: "button", dataset: { seat }, onclick: () => table.leave(seat) },
            `Leave seat ${seat + 1}`,
          ),
        ),
      ),
    );
  }
  if (free.length) {
    parts.push(
      // The same input in every drawing: what is being typed, the caret and
      // the focus stay while others join.
      h("p", {}, h("label", { for: "join-name" }, "Your name: "), table.nameInput),
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
              onclick: () => table.join(s.seat || 0),
            },
            `Take seat ${(s.seat || 0) + 1}`,
          ),
        ),
      ),
      h("p", { class: "hint" }, "Or just watch: spectators see what everyone may see."),
    );
  } else if (you.length) {
    parts.push(
      h("button", { id: "start", type: "button", onclick: () => table.startGame() }, "Start the game"),
    );
  } else {
    parts.push(h("p", {}, "Every seat is taken; waiting for a player to start."));
  }
  return h("section", { id: "join" }, parts);
}

/** Every seat: who sits there, yours, whose move. */
export function seatsPanel(table, ctx) {
  const game = table.game;
  const active = game.activeSeats || [];
  return h(
    "section",
    { id: "seats", "aria-label": "Seats" },
    h(
      "ul",
      { class: "seats" },
      (game.seats || []).map((s) => {
        const seat = s.seat || 0;
        return h(
          "li",
          {
            class: ["seat", ctx.isYou(seat) ? "mine" : "", active.includes(seat) ? "active" : ""].join(" "),
            dataset: { seat },
          },
          `Seat ${seat + 1}: `,
          s.taken ? (s.bot ? `${s.bot} bot` : s.playerName || "a player") : "free",
          ctx.isYou(seat) ? " (you)" : "",
          active.includes(seat) ? " ◀ to act" : "",
          clock(game, seat),
        );
      }),
    ),
  );
}

/** The game's rules in brief (its module's help), behind a link: one
 * element for the page's life, so it stays open across redrawings. */
export function help(table, ctx) {
  const module = table.module();
  if (table.helpBox) return table.helpBox;
  table.helpBox = h(
    "details",
    { id: "help", class: "help" },
    h("summary", {}, `How to play ${module.title}`),
    module.help(ctx).map((line) => h("p", {}, line)),
  );
  return table.helpBox;
}

/** A seat's time in a timed game (none otherwise): its time left, counting
 * down while it acts (the page ticks it, see tickClocks). */
function clock(game, seat) {
  const control = game.timeControl || {};
  if (!control.baseSeconds && !control.decisionSeconds) return null;
  const c = (game.clocks || []).find((x) => (x.seat || 0) === seat);
  if (!c) return null;
  const deadline = c.deadline ? Date.parse(c.deadline) : NaN;
  const left = c.remainingMs !== undefined ? Number(c.remainingMs) : NaN;
  const el = h("span", { class: "clock", dataset: { seat } });
  if (!Number.isNaN(deadline)) el.dataset.deadline = String(deadline);
  else if (!Number.isNaN(left)) el.dataset.left = String(left);
  else return null;
  showClock(el);
  return [" ", el];
}

/** "1:05" from milliseconds (never below 0:00). */
export function clockText(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

function showClock(el) {
  const ms = el.dataset.deadline ? Number(el.dataset.deadline) - Date.now() : Number(el.dataset.left);
  el.textContent = `⏱ ${clockText(ms)}`;
}

/** Counts the running clocks down, once a second. */
export function tickClocks() {
  setInterval(() => document.querySelectorAll(".clock[data-deadline]").forEach(showClock), 1000);
}
