/**
 * The live feed: one EventSource on /api/v1/events for the whole page, the last HISTORY snapshots
 * kept per topic (for charts that are full as soon as a view opens), and views subscribed to each
 * new snapshot. EventSource reconnects by itself; the status badge says when it is down.
 */
export interface TopicRates {
  topic: string;
  messagesInPerSec: number;
  bytesInPerSec: number;
  messagesOutPerSec: number;
  bytesOutPerSec: number;
}

export interface Snapshot {
  timeMs: number;
  topics: TopicRates[];
  groups: { group: string; state: string; members: number; lag: number }[];
}

/** Seconds of history kept (one snapshot per second). */
export const HISTORY = 120;

export interface Totals {
  messagesIn: number[];
  messagesOut: number[];
  bytesIn: number[];
  bytesOut: number[];
}

type Listener = (s: Snapshot) => void;

export class LiveFeed {
  readonly #listeners = new Set<Listener>();
  readonly #byTopic = new Map<string, Totals>();
  readonly total: Totals = emptyTotals();
  last: Snapshot | null = null;
  #snapshots = 0;

  constructor(status: HTMLElement) {
    const source = new EventSource("/api/v1/events");
    source.addEventListener("open", () => setStatus(status, "on", "live"));
    source.addEventListener("error", () => setStatus(status, "off", "reconnecting"));
    source.addEventListener("snapshot", (e) =>
      this.#receive(JSON.parse((e as MessageEvent<string>).data) as Snapshot),
    );
  }

  /** Calls `fn` on every snapshot from now on (and at once with the last one); returns the unsubscribe. */
  subscribe(fn: Listener, now = true): () => void {
    this.#listeners.add(fn);
    if (now && this.last !== null) fn(this.last);
    return () => this.#listeners.delete(fn);
  }

  topic(name: string): Totals {
    return this.#byTopic.get(name) ?? emptyTotals();
  }

  #receive(s: Snapshot): void {
    // The first snapshot of a stream has zero rates by definition: not a real zero for the charts.
    const first = this.#snapshots++ === 0;
    this.last = s;
    if (!first) {
      const sum = { messagesIn: 0, messagesOut: 0, bytesIn: 0, bytesOut: 0 };
      const seen = new Set<string>();
      for (const t of s.topics) {
        seen.add(t.topic);
        let h = this.#byTopic.get(t.topic);
        if (h === undefined) this.#byTopic.set(t.topic, (h = emptyTotals()));
        push(h, t.messagesInPerSec, t.messagesOutPerSec, t.bytesInPerSec, t.bytesOutPerSec);
        sum.messagesIn += t.messagesInPerSec;
        sum.messagesOut += t.messagesOutPerSec;
        sum.bytesIn += t.bytesInPerSec;
        sum.bytesOut += t.bytesOutPerSec;
      }
      for (const name of this.#byTopic.keys()) if (!seen.has(name)) this.#byTopic.delete(name);
      push(this.total, sum.messagesIn, sum.messagesOut, sum.bytesIn, sum.bytesOut);
    }
    for (const fn of this.#listeners) fn(s);
  }
}

function emptyTotals(): Totals {
  return { messagesIn: [], messagesOut: [], bytesIn: [], bytesOut: [] };
}

function push(h: Totals, mIn: number, mOut: number, bIn: number, bOut: number): void {
  h.messagesIn.push(mIn);
  h.messagesOut.push(mOut);
  h.bytesIn.push(bIn);
  h.bytesOut.push(bOut);
  if (h.messagesIn.length > HISTORY) {
    h.messagesIn.shift();
    h.messagesOut.shift();
    h.bytesIn.shift();
    h.bytesOut.shift();
  }
}

function setStatus(el: HTMLElement, cls: "on" | "off", text: string): void {
  el.className = `live ${cls}`;
  el.textContent = text;
}

/**
 * Runs `load` now and on every snapshot, one at a time: a snapshot that arrives while a load is still
 * running is folded into one more run after it, so a slow broker is never asked twice at once.
 */
export function onEachSnapshot(live: LiveFeed, load: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await load();
      } while (again);
    } finally {
      running = false;
    }
  };
  run().catch(() => {});
  return live.subscribe(() => {
    run().catch(() => {});
  }, false);
}
