// The web table: a lobby at `/` (create a game, seat bots) and a table at
// `/game/<id>` (take a seat or watch, see your view, click a legal action,
// follow the game live). Everything shown comes from the API, redacted for
// this browser's seat token; the page holds no rules: what may be done comes
// from ListLegalActions and SubmitCommand(include_legal_actions).

import { h } from "./dom.js";
import { main } from "./common.js";
import { lobby } from "./lobby.js";
import { Table } from "./table.js";

const match = location.pathname.match(/^\/game\/([^/]+)\/?$/);
if (match) {
  new Table(decodeURIComponent(match[1])).start();
} else {
  lobby().catch((error) => {
    main.replaceChildren(h("p", { id: "error", class: "error" }, String(error.message || error)));
  });
}
