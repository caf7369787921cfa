/**
 * The interval fsyncs (flush=interval) of every log in the process, a few at a time. A log whose
 * interval has passed joins the queue (the ticker tells it, ticker.ts); at most `limit` of the
 * queued fsyncs run at once, in the order they came due, and a log is never in the queue twice
 * nor queued while its fsync runs. With thousands of logs written in the same second, their
 * fsyncs would otherwise all start together: each holds a thread of libuv's pool (4 by default)
 * for a disk round trip, so the pool is saturated, the writes and opens of every other log wait
 * behind them, and the kernel's work per fsync is paid thousands of times a second.
 *
 * With many logs due at once, one at a time per place is still too slow: 10,000 logs written in
 * the same second took 8 s to fsync, two at a time (docs/performance/scale.md). So when at least
 * BULK_MIN_WAITING are waiting and the queue has a syncfs (`bulk`; the process's queue uses
 * `sync -f`, syncfs.ts), every waiting log is taken at once: each notes what it has written
 * (`BulkSync.mark`), one syncfs of their file systems makes all of it durable, and each is told
 * (`covered`); while it runs, logs that come due wait for the next one once 16 or more wait,
 * rather than fsync beside it. A failed syncfs puts them back for fsyncs of their own, which
 * report their own errors, and turns the bulk path off for the queue.
 *
 * flush.interval.ms stays a target, not a promise: a log's fsync starts when a place or the next
 * bulk sync is free. By how much the interval is missed is measured: each fsync's wait from its
 * due time to its start (`delays`) and to its successful end (`lags`: how long past the interval
 * the data it covers waited to be durable), and the wait of the oldest still queued
 * (`oldestWaitMs`), all exported as metrics (docs/http-api.md). Appends with acks=durable never
 * wait here: they are group-committed by their own log (flusher.ts) as before.
 */
import { dirname } from "node:path";
import { BucketCounts, LATENCY_SECONDS_BOUNDS } from "./bucket-counts.js";
import { type SyncFs, syncFileSystem, syncFileSystems } from "./syncfs.js";

/** Interval fsyncs that run at once by default: half of libuv's default pool. */
export const INTERVAL_FSYNCS_AT_ONCE = 2;

/**
 * Waiting logs from which one syncfs serves them all. A syncfs costs a few ms more than an fsync
 * (its request to the helper, and `sync`'s own start); 16 fsyncs two at a time take several.
 */
export const BULK_MIN_WAITING = 16;

/** How a log's interval fsync can be made by a syncfs of its file system instead. */
export interface BulkSync {
  /** The log's directory: the syncfs is of the file system holding it. */
  readonly dir: string;
  /**
   * Notes what the log has written so far (in the OS, so a syncfs started after this call covers
   * it); returns what to call once that syncfs succeeded, or null when nothing needs syncing.
   */
  mark(): (() => void) | null;
}

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
  /** Bound once: settles the entry in the queue, then tells the log (`failed`: the fsync failed). */
  done: () => void = () => {};
  failed: () => void = () => {};
  /** The log's part in a bulk syncfs; null: always an fsync of its own. */
  readonly bulk: BulkSync | null;

  constructor(sync: () => Promise<unknown>, ended: () => void, bulk: BulkSync | null = null) {
    this.sync = sync;
    this.ended = ended;
    this.bulk = bulk;
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
  /** Entries with queued = true. */
  #queued = 0;
  /** The syncfs of the bulk path; null: off. */
  #bulk: SyncFs | null;
  #bulkRunning = false;
  /** Seconds from each fsync's due time (queued) to its start. */
  readonly delays = new BucketCounts(LATENCY_SECONDS_BOUNDS);
  /** Seconds from each fsync's due time to its successful end, own or bulk. */
  readonly lags = new BucketCounts(LATENCY_SECONDS_BOUNDS);
  /** Bulk syncs that succeeded, and the fsyncs of logs they made. */
  bulkSyncs = 0;
  bulkEntries = 0;

  /** `bulk`: the syncfs that serves many waiting logs at once (BULK_MIN_WAITING); null: none. */
  constructor(limit = INTERVAL_FSYNCS_AT_ONCE, bulk: SyncFs | null = null) {
    if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`limit must be >= 1, got ${limit}`);
    this.#limit = limit;
    this.#bulk = bulk;
  }

  /** fsyncs running now (for tests and metrics). */
  get running(): number {
    return this.#running;
  }

  /** Entries waiting for a free place (for tests and metrics). */
  get waiting(): number {
    return this.#queued;
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

  /** Makes an entry for one log; `sync`, `ended` and `bulk` are as in FlushEntry. */
  entry(sync: () => Promise<unknown>, ended: () => void, bulk: BulkSync | null = null): FlushEntry {
    const entry = new FlushEntry(sync, ended, bulk);
    entry.done = () => this.#ended(entry, true);
    entry.failed = () => this.#ended(entry, false);
    return entry;
  }

  /** Queues `entry`'s fsync, unless it is queued or running already. */
  push(entry: FlushEntry): void {
    if (entry.pending) return;
    entry.queued = true;
    this.#queued++;
    entry.queuedAt = performance.now();
    this.#ready.push(entry);
    this.#startSome();
  }

  /** Takes `entry` out of the queue (its log closes); a running fsync ends as it would. */
  remove(entry: FlushEntry): void {
    if (!entry.queued) return;
    entry.queued = false;
    this.#queued--;
  }

  #startSome(): void {
    if (this.#bulk !== null && this.#queued >= BULK_MIN_WAITING) {
      if (!this.#bulkRunning) this.#startBulk(this.#bulk);
      // Enough wait for the next bulk sync: fsyncs of their own beside the running one would only
      // contend with it for the disk.
      else return;
    }
    const ready = this.#ready;
    let now = 0;
    while (this.#running < this.#limit && this.#head < ready.length) {
      const entry = ready[this.#head];
      ready[this.#head++] = null;
      if (entry == null || !entry.queued) continue;
      entry.queued = false;
      this.#queued--;
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
      sync.then(entry.done, entry.failed);
    }
    this.#compact();
  }

  #compact(): void {
    const ready = this.#ready;
    if (this.#head === ready.length) {
      this.#ready = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > ready.length) {
      this.#ready = ready.slice(this.#head);
      this.#head = 0;
    }
  }

  /**
   * Takes every waiting entry that can join a bulk sync: each marks what it has written, then one
   * syncfs of their file systems runs; each is then covered and ended, or on failure queued again.
   */
  #startBulk(syncfs: SyncFs): void {
    const taken: FlushEntry[] = [];
    const covers: Array<(() => void) | null> = [];
    const dirs = new Set<string>();
    const ready = this.#ready;
    const now = performance.now();
    for (let i = this.#head; i < ready.length; i++) {
      const entry = ready[i];
      if (entry == null || !entry.queued || entry.bulk === null) continue;
      ready[i] = null;
      entry.queued = false;
      this.#queued--;
      entry.running = true;
      this.delays.observe((now - entry.queuedAt) / 1000);
      taken.push(entry);
      covers.push(entry.bulk.mark());
      // The parent: a few to stat, not one per log (a topic's logs share theirs).
      dirs.add(dirname(entry.bulk.dir));
    }
    while (this.#head < ready.length && ready[this.#head] === null) this.#head++;
    this.#compact();
    if (taken.length === 0) return;
    this.#bulkRunning = true;
    syncFileSystems(dirs, syncfs).then(
      () => {
        this.bulkSyncs++;
        this.bulkEntries += taken.length;
        const now = performance.now();
        taken.forEach((entry, i) => {
          entry.running = false;
          this.lags.observe((now - entry.queuedAt) / 1000);
          covers[i]?.();
          entry.ended();
        });
        this.#bulkEnded();
      },
      () => {
        // The disk lost a write, or syncfs cannot run: each log's own fsync says which.
        this.#bulk = null;
        for (const entry of taken) {
          // Back in the queue as due since when it first was.
          entry.running = false;
          entry.queued = true;
          this.#queued++;
          this.#ready.push(entry);
        }
        this.#bulkEnded();
      },
    );
  }

  #bulkEnded(): void {
    this.#bulkRunning = false;
    this.#startSome();
  }

  #ended(entry: FlushEntry, ok: boolean): void {
    if (ok) this.lags.observe((performance.now() - entry.queuedAt) / 1000);
    entry.running = false;
    this.#running--;
    entry.ended();
    this.#startSome();
  }
}

/** The flush queue of the storage layer, shared by every partition log in the process. */
export const storageFlushQueue = new FlushQueue(INTERVAL_FSYNCS_AT_ONCE, syncFileSystem);
