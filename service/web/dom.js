// Small helpers to build the page: elements from text (never from HTML, so a
// player's name is shown, never run), names of seats, cards and enums.

/** An element: h("li", {class: "x"}, "text", child, [more, children]). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    // Through the CSSOM: the page's CSP (style-src 'self') refuses style
    // attributes, so setAttribute("style", …) would be dropped.
    else if (key === "style") el.style.cssText = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** `DINOSAUR_NERVOUS_REX` (prefix `DINOSAUR_`) -> `Nervous rex`. */
export function enumWords(value, prefix) {
  let text = String(value || "");
  if (prefix && text.startsWith(prefix)) text = text.slice(prefix.length);
  text = text.toLowerCase().replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The base id of a physical card: `pet_rock_3` -> `pet_rock`. */
export function baseId(card) {
  return String(card || "").replace(/_\d+$/, "");
}

/** A list in words: ["a", "b", "c"] -> "a, b and c". */
export function words(items) {
  const list = [...items];
  if (list.length === 0) return "nobody";
  if (list.length === 1) return list[0];
  return `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
}

/** A card shown in a hand: its name, what it does and an optional note. */
export function cardBox(id, name, text, note) {
  return h(
    "div",
    { class: "card", dataset: { card: id } },
    h("div", { class: "card-name" }, name),
    note ? h("div", { class: "card-note" }, note) : null,
    text ? h("div", { class: "card-text" }, text) : null,
  );
}

/** A small table: headers and rows of cells. Each cell carries its
 * column's header (`data-label`): on a phone the rows are stacked, each cell
 * on a line of its own after its header. */
export function table(headers, rows, attrs) {
  const given = attrs || {};
  return h(
    "table",
    { ...given, class: `stack ${given.class || ""}`.trim() },
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h(
          "tr",
          row.attrs || {},
          (row.cells || row).map((x, i) => h("td", { dataset: { label: headers[i] || "" } }, x)),
        ),
      ),
    ),
  );
}
