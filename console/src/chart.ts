/**
 * A small SVG line chart of the last minutes of a few series (rates per second), redrawn in place
 * on each live snapshot: a few hundred points, no library.
 */
const NS = "http://www.w3.org/2000/svg";
/** Drawn in CSS pixels at the element's width (so text is not stretched); this before layout. */
const DEFAULT_W = 640;
const H = 180;
const PAD_LEFT = 48;
const PAD_BOTTOM = 18;

export interface Series {
  label: string;
  color: string;
  values: readonly number[];
}

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

export class LineChart {
  readonly element: HTMLDivElement;
  readonly #svg: SVGSVGElement;
  readonly #points: number;
  readonly #format: (n: number) => string;

  /** `points`: how many samples fit across (one per snapshot). */
  constructor(points: number, format: (n: number) => string) {
    this.#points = points;
    this.#format = format;
    this.#svg = svg("svg", { viewBox: `0 0 ${DEFAULT_W} ${H}`, class: "chart" });
    this.element = document.createElement("div");
    this.element.append(this.#svg);
  }

  draw(series: readonly Series[]): void {
    const W = Math.round(this.#svg.getBoundingClientRect().width) || DEFAULT_W;
    this.#svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    let max = 1;
    for (const s of series) for (const v of s.values) if (v > max) max = v;
    max = niceCeiling(max);
    const plotW = W - PAD_LEFT;
    const plotH = H - PAD_BOTTOM;
    const nodes: SVGElement[] = [];
    for (let i = 0; i <= 4; i++) {
      const y = Math.round(plotH - (plotH * i) / 4) + 0.5;
      nodes.push(svg("line", { x1: PAD_LEFT, x2: W, y1: y, y2: y, class: "grid" }));
      const label = svg("text", { x: PAD_LEFT - 6, y: y + 4, "text-anchor": "end" });
      label.textContent = this.#format((max * i) / 4);
      if (i === 4) label.setAttribute("y", String(y + 10));
      nodes.push(label);
    }
    const step = plotW / Math.max(1, this.#points - 1);
    for (const s of series) {
      const values = s.values.slice(-this.#points);
      const offset = this.#points - values.length;
      const d = values
        .map(
          (v, i) =>
            `${i === 0 ? "M" : "L"}${(PAD_LEFT + (offset + i) * step).toFixed(1)},${(plotH - (plotH * v) / max).toFixed(1)}`,
        )
        .join("");
      if (d !== "")
        nodes.push(
          svg("path", {
            d,
            fill: "none",
            stroke: s.color,
            "stroke-width": 2,
            "vector-effect": "non-scaling-stroke",
          }),
        );
    }
    const ago = svg("text", { x: PAD_LEFT, y: H - 4 });
    ago.textContent = `last ${this.#points} s`;
    nodes.push(ago);
    this.#svg.replaceChildren(...nodes);
  }
}

/** 1, 2 or 5 times a power of ten, at or above `n`. */
function niceCeiling(n: number): number {
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

export function legend(series: readonly { label: string; color: string }[]): HTMLDivElement {
  const el = document.createElement("div");
  el.className = "legend";
  for (const s of series) {
    const item = document.createElement("span");
    const swatch = document.createElement("i");
    swatch.style.background = s.color;
    item.append(swatch, s.label);
    el.append(item);
  }
  return el;
}
