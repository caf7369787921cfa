/**
 * Building DOM nodes from data. Text always goes in as text nodes, never as HTML, so a topic name
 * or a message value cannot inject markup.
 */
export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(name.replace(/^on/, ""), value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
}

/** Replaces the children of `el`. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A message line under a form: an error in red, news in blue; empty text clears it. */
export function notice(el: Element, kind: "error" | "info", text: string): void {
  fill(el, text === "" ? null : h("div", { class: `message ${kind}` }, text));
}

export function table(
  headers: readonly (string | [string, string])[],
  rows: readonly Node[],
): HTMLTableElement {
  const head = h(
    "tr",
    {},
    ...headers.map((x) => (typeof x === "string" ? h("th", {}, x) : h("th", { class: x[1] }, x[0]))),
  );
  return h("table", {}, h("thead", {}, head), h("tbody", {}, ...rows));
}
