/**
 * The interval fsyncs (flush=interval) of every log in the process, a few at a time. A log whose
 * interval has passed joins the queue (the ticker tells it, ticker.ts); at most `limit` of the
 * queued fsyncs run at once, in the order they came due, and a log is never in the queue twice
 * nor queued while its fsync runs. With thousands of logs written in the same second, their
 * fsyncs would otherwise all start together: each holds a thread of libuv's pool (4 by default)
 * for a disk round trip, so the pool is saturated, the writes and opens of every other log wait
 * behind them, and the kernel's work per fsync is paid thousands of times a second.
 *
 * flush.interval.ms is then a target, not a promise: with D logs dirty at once and fsyncs taking
 * L each, a log's fsync may start up to about D x L / limit after its interval ended. Meanwhile
 * its writes go on joining what that fsync will cover, so the broker pays fewer fsyncs as the
 * dirty logs grow. Appends with acks=durable never wait here: they are group-committed by their
 * own log (flusher.ts) as before. By how much the interval is missed is measured: each fsync's wait
 * from its due time to its start (`delays`), and the wait of the oldest still queued (`oldestWaitMs`),
 * both exported as metrics (docs/http-api.md).
 */
import { BucketCounts, LATENCY_SECONDS_BOUNDS } from "./bucket-counts.js";

/** Interval fsyncs that run at once by default: half of libuv's default pool. */
export const INTERVAL_FSYNCS_AT_ONCE = 2;

/** One log's place in the queue. Made once per log, queued again as often as needed. */
export class FlushEntry {
  /** In the queue, its fsync not started. */
  queued = false;
  /** Its fsync runs. */
  running = false;
  /** When it was last queued (performance.now()): its fsync came due then. */
  queuedAt = 0;
  /** Starts the log's fsync of what it has written; the promise settles when it ends. */
  readonly sync: () => Promise<unknown>;
  /** Told when the fsync ended, successfully or not (the log reports its own failures). */
  readonly ended: () => void;
  /** Bound once: settles the entry in the queue, then tells the log. */
  done: () => void = () => {};

  constructor(sync: () => Promise<unknown>, ended: () => void) {
    this.sync = sync;
    this.ended = ended;
  }

  /** In the queue or running: a new write needs no fsync of its own, the coming one covers it. */
  get pending(): boolean {
    return this.queued || this.running;
  }
}

export class FlushQueue {
  readonly #limit: number;
  #running = 0;
  /** Entries in due order from #head; an entry taken out early stays with queued = false, skipped. */
  #ready: Array<FlushEntry | null> = [];
  #head = 0;
  /** Seconds from each fsync's due time (queued) to its start. */
  readonly delays = new BucketCounts(LATENCY_SECONDS_BOUNDS);

  constructor(limit = INTERVAL_FSYNCS_AT_ONCE) {
    if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`limit must be >= 1, got ${limit}`);
    this.#limit = limit;
  }

  /** fsyncs running now (for tests and metrics). */
  get running(): number {
    return this.#running;
  }

  /** Entries waiting for a free place (for tests and metrics). */
  get waiting(): number {
    let n = 0;
    for (let i = this.#head; i < this.#ready.length; i++) if (this.#ready[i]?.queued === true) n++;
    return n;
  }

  /** How long the oldest entry still waiting has waited, in ms (0 when none waits). */
  oldestWaitMs(now = performance.now()): number {
    const ready = this.#ready;
    for (let i = this.#head; i < ready.length; i++) {
      const entry = ready[i];
      if (entry?.queued === true) return now - entry.queuedAt;
    }
    return 0;
  }

  /** Makes an entry for one log; `sync` and `ended` are as in FlushEntry. */
  entry(sync: () => Promise<unknown>, ended: () => void): FlushEntry {
    const entry = new FlushEntry(sync, ended);
    entry.done = () => this.#ended(entry);
    return entry;
  }

  /** Queues `entry`'s fsync, unless it is queued or running already. */
  push(entry: FlushEntry): void {
    if (entry.pending) return;
    entry.queued = true;
    entry.queuedAt = performance.now();
    this.#ready.push(entry);
    this.#startSome();
  }

  /** Takes `entry` out of the queue (its log closes); a running fsync ends as it would. */
  remove(entry: FlushEntry): void {
    entry.queued = false;
  }

  #startSome(): void {
    const ready = this.#ready;
    let now = 0;
    while (this.#running < this.#limit && this.#head < ready.length) {
      const entry = ready[this.#head];
      ready[this.#head++] = null;
      if (entry == null || !entry.queued) continue;
      entry.queued = false;
      entry.running = true;
      this.#running++;
      now ||= performance.now();
      this.delays.observe((now - entry.queuedAt) / 1000);
      let sync: Promise<unknown>;
      try {
        sync = entry.sync();
      } catch (err) {
        sync = Promise.reject(err);
      }
      sync.then(entry.done, entry.done);
    }
    if (this.#head === ready.length) {
      this.#ready = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > ready.length) {
      this.#ready = ready.slice(this.#head);
      this.#head = 0;
    }
  }

  #ended(entry: FlushEntry): void {
    entry.running = false;
    this.#running--;
    entry.ended();
    this.#startSome();
  }
}

/** The flush queue of the storage layer, shared by every partition log in the process. */
export const storageFlushQueue = new FlushQueue();
