/**
 * GET /api/v1/events: a Server-Sent Events stream that pushes a compact snapshot every second
 * (per-topic message and byte rates in and out, per-group lag) for a live console. The timer runs
 * only while someone listens, so the feed costs nothing when nobody does; a snapshot is built once
 * per tick for every listener, and a listener that does not keep up skips ticks instead of
 * buffering them.
 */
import type { ServerResponse } from "node:http";
import type { Broker } from "../broker/broker.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { HttpContext } from "./http-context.js";

/** Streams open at once; past this, a new one is refused with TOO_MANY_CONNECTIONS (503). */
export const MAX_EVENT_STREAMS = 32;

interface TopicTotals {
  messagesIn: number;
  bytesIn: number;
  messagesOut: number;
  bytesOut: number;
}

export interface TopicRates {
  topic: string;
  messagesInPerSec: number;
  bytesInPerSec: number;
  messagesOutPerSec: number;
  bytesOutPerSec: number;
}

export interface EventSnapshot {
  timeMs: number;
  topics: TopicRates[];
  groups: { group: string; state: string; members: number; lag: number }[];
}

interface Listener {
  res: ServerResponse;
  /** The socket's buffer is full: skip ticks until it drains. */
  blocked: boolean;
}

export class EventFeed {
  readonly #context: HttpContext;
  readonly #intervalMs: number;
  readonly #listeners = new Set<Listener>();
  #timer: NodeJS.Timeout | null = null;
  #previous: { atMs: number; totals: Map<string, TopicTotals> } | null = null;

  constructor(context: HttpContext, intervalMs = 1000) {
    this.#context = context;
    this.#intervalMs = intervalMs;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** Takes over `res` as an event stream until the client goes away or close() is called. */
  open(res: ServerResponse): void {
    if (this.#listeners.size >= MAX_EVENT_STREAMS) {
      throw new ConchError(
        ErrorCode.TOO_MANY_CONNECTIONS,
        `at most ${MAX_EVENT_STREAMS} event streams at once`,
      );
    }
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
    });
    const listener: Listener = { res, blocked: false };
    this.#listeners.add(listener);
    res.on("drain", () => {
      listener.blocked = false;
    });
    res.on("close", () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stop();
    });
    // The first snapshot at once (rates need two, so they start at zero), then one per interval.
    this.#send(listener, this.#snapshot());
    if (this.#timer === null) {
      this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
      this.#timer.unref();
    }
  }

  close(): void {
    for (const l of this.#listeners) l.res.end();
    this.#listeners.clear();
    this.#stop();
  }

  #stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#previous = null;
  }

  #tick(): void {
    const snapshot = this.#snapshot();
    for (const l of this.#listeners) if (!l.blocked) this.#send(l, snapshot);
  }

  #send(listener: Listener, snapshot: EventSnapshot): void {
    if (!listener.res.write(`event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`))
      listener.blocked = true;
  }

  #snapshot(): EventSnapshot {
    const now = Date.now();
    const broker = this.#context.broker;
    if (broker === null) return { timeMs: now, topics: [], groups: [] };
    const totals = topicTotals(broker);
    const previous = this.#previous;
    const seconds = previous === null ? 0 : (now - previous.atMs) / 1000;
    const topics: TopicRates[] = [];
    for (const [topic, t] of totals) {
      const before = previous?.totals.get(topic);
      const rate = (now: number, then: number | undefined): number =>
        seconds > 0 && then !== undefined ? Math.max(0, Math.round((now - then) / seconds)) : 0;
      topics.push({
        topic,
        messagesInPerSec: rate(t.messagesIn, before?.messagesIn),
        bytesInPerSec: rate(t.bytesIn, before?.bytesIn),
        messagesOutPerSec: rate(t.messagesOut, before?.messagesOut),
        bytesOutPerSec: rate(t.bytesOut, before?.bytesOut),
      });
    }
    this.#previous = { atMs: now, totals };
    const groups = broker.groups.listGroups().map((g) => {
      let lag = 0;
      for (const p of broker.groups.describeGroup(g.group).partitions) if (p.lag > 0) lag += p.lag;
      return { group: g.group, state: g.state, members: g.members, lag };
    });
    return { timeMs: now, topics, groups };
  }
}

function topicTotals(broker: Broker): Map<string, TopicTotals> {
  const totals = new Map<string, TopicTotals>();
  broker.forEachPartition((topic, _partition, log) => {
    let t = totals.get(topic);
    if (t === undefined) {
      t = { messagesIn: 0, bytesIn: 0, messagesOut: 0, bytesOut: 0 };
      totals.set(topic, t);
    }
    const s = log.stats;
    t.messagesIn += s.messagesIn;
    t.bytesIn += s.bytesIn;
    t.messagesOut += s.messagesOut;
    t.bytesOut += s.bytesOut;
  });
  return totals;
}
