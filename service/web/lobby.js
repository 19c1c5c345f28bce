// The lobby at `/`: create a game (its type, options, who sits where, bots)
// and the lists of games waiting to start and being played.

import { call } from "./api.js";
import { h } from "./dom.js";
import { jsonKey, renderer, main, showError, store } from "./common.js";


export async function lobby() {
  document.title = "Strata: new game";
  const { gameTypes } = await call("ListGameTypes", {});
  const types = gameTypes || [];
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
    const wanted = renderer(current().gameType, current().title).options || [];
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
    // "me" is taken in the same call: at the open-seat limit the creation
    // is refused and no game is left with its creator's seat empty.
    const seat = choices.indexOf("person");
    const playerName = name.value.trim() || "Player";
    if (seat >= 0) localStorage.setItem("strata.name", playerName);
    try {
      const created = await call("CreateGame", {
        gameType: type.gameType,
        players: choices.length,
        bots,
        options: { [jsonKey(type.gameType)]: chosenOptions() },
        // No requestId: each submit would send a new one (nothing retries
        // a creation).
        ...(seat >= 0 ? { creatorSeat: { seat, playerName } } : {}),
      });
      const gameId = created.gameId;
      const mine = { host: created.hostToken || "" };
      // The host token acts for the creator's seat too.
      if (seat >= 0) mine.token = created.hostToken;
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
    // Newest first is creation order, reversed, whatever the games' ids.
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
