/**
 * Fetch with long polling: read at an offset and, while fewer than `minBytes` are available, wait
 * for the partition's high watermark to move and read again, until enough arrived, `maxWaitMs`
 * passed, the caller aborted, or the topic closed. Every wait is registered with the log and
 * removed when it ends, so a client that goes away leaves nothing behind. `maxWaitMs` was checked
 * against the timer ceiling (format/duration.ts) by the broker.
 *
 * A wait is one object, the LongPoll: it parks itself with the log (PartitionLog.park) and
 * subscribes itself to the caller's signal (abort-fanout.ts), and tells the caller's listener how
 * it ended, so a consumer that keeps up, which waits once per produce, costs one object per fetch
 * and no promise, and its answer is read in the same tick as the write that made the data visible.
 * The topic's signal needs no subscription: Topic.close aborts it and then closes the logs, which
 * wakes every parked wait, and a woken wait looks at that signal first.
 */

import type { DataWaiter } from "../storage/data-waiters.js";
import type { PartitionLog, ReadResult } from "../storage/partition-log.js";
import { AbortTarget, subscribe, unsubscribe } from "./abort-fanout.js";

/** Told once how a fetch ended, in place of a promise. Must not throw. */
export interface FetchListener {
  fetched(result: ReadResult): void;
  fetchFailed(err: unknown): void;
}

/** A fetch as the broker takes it: read whole batches from `offset`, waiting for `minBytes`. */
export interface FetchRequest {
  topic: string;
  partition: number;
  offset: number;
  maxBytes: number;
  /** How long to wait while fewer than `minBytes` are there; 0 answers at once. */
  maxWaitMs: number;
  minBytes: number;
  /** Ends the wait at once, answering with what is there (the connection closed). */
  signal?: AbortSignal | undefined;
}

/**
 * Tells `listener` what the read at `offset` returns once it is enough or the wait is over; it may
 * be told before this returns. `closed` is the topic's signal: when it fires during a wait, the
 * fetch fails with its reason (a ConchError: UNKNOWN_TOPIC after a delete, SHUTTING_DOWN when the
 * broker stops). When `signal` fires the fetch ends at once with what the last read returned.
 */
export function fetchWithWait(
  log: PartitionLog,
  request: FetchRequest,
  closed: AbortSignal,
  listener: FetchListener,
  firstRead?: ReadResult,
  startedAt: number = log.stats.counting ? performance.now() : 0,
): void {
  const { offset, maxBytes, maxWaitMs, minBytes, signal } = request;
  // A reader keeping up is served from the tail cache without a promise (readNow); otherwise the
  // file is read, and this is called again with what it returned.
  const result = firstRead ?? log.readNow(offset, maxBytes);
  if (result === undefined) {
    log.read(offset, maxBytes).then(
      (read) => fetchWithWait(log, request, closed, listener, read, startedAt),
      (err: unknown) => {
        log.stats.errors.count(err);
        listener.fetchFailed(err);
      },
    );
    return;
  }
  // A read may return less than maxBytes only when less is there, so asking for more than maxBytes
  // would always wait out the full time for nothing.
  const wanted = Math.max(1, Math.min(minBytes, maxBytes));
  if (result.records.length >= wanted || maxWaitMs <= 0 || signal?.aborted === true) {
    log.stats.fetched(offset, result.records, startedAt);
    listener.fetched(result);
  } else if (closed.aborted) {
    log.stats.errors.count(closed.reason);
    listener.fetchFailed(closed.reason);
  } else {
    new LongPoll(log, request, wanted, closed, listener, result, startedAt).park();
  }
}

const PARKED = 0;
const READING = 1;
const DONE = 2;

class LongPoll extends AbortTarget implements DataWaiter {
  waitOffset: number;
  readonly waitDeadline: number;
  waitSlot = -1;
  readonly #log: PartitionLog;
  readonly #offset: number;
  readonly #maxBytes: number;
  readonly #wanted: number;
  readonly #closed: AbortSignal;
  readonly #listener: FetchListener;
  readonly #startedAt: number;
  #result: ReadResult;
  #state = PARKED;
  /** An abort arrived during a file read: it ends the poll when the read returns. */
  #aborted = false;

  constructor(
    log: PartitionLog,
    request: FetchRequest,
    wanted: number,
    closed: AbortSignal,
    listener: FetchListener,
    result: ReadResult,
    startedAt: number,
  ) {
    super();
    const { maxWaitMs, signal } = request;
    this.#startedAt = startedAt;
    this.#log = log;
    this.#offset = request.offset;
    this.#maxBytes = request.maxBytes;
    this.#wanted = wanted;
    this.#closed = closed;
    this.#listener = listener;
    this.#result = result;
    this.waitOffset = result.highWatermark;
    this.waitDeadline = performance.now() + maxWaitMs;
    // A shared signal (the connection's) gets one listener, whatever the number of waits on it.
    if (signal !== undefined) subscribe(signal, this);
  }

  /** Waits for the high watermark to pass what the last read saw, or ends the poll. */
  park(): void {
    for (;;) {
      if (performance.now() >= this.waitDeadline) {
        this.#finish();
        return;
      }
      this.waitOffset = this.#result.highWatermark;
      this.#state = PARKED;
      if (this.#log.park(this)) return;
      // New data is already visible (or the log is closing): read again at once.
      if (!this.#readAgain()) return;
    }
  }

  /** From the log: data arrived, the deadline passed, or the log is closing. */
  waitEnded(): void {
    if (this.#state !== PARKED) return;
    if (this.#readAgain()) this.park();
  }

  /** From the caller's signal: it went away. */
  signalAborted(): void {
    if (this.#state === DONE) return;
    if (this.#state === READING) {
      this.#aborted = true;
      return;
    }
    this.#log.unpark(this);
    this.#finish();
  }

  /**
   * Reads again after a wake. Returns true when the poll should park again; false when it ended
   * or a file read is under way (which parks or ends it when it returns).
   */
  #readAgain(): boolean {
    if (this.#closed.aborted) {
      this.#finish();
      return false;
    }
    const now = this.#log.readNow(this.#offset, this.#maxBytes);
    if (now !== undefined) return this.#gotResult(now);
    this.#state = READING;
    this.#log.read(this.#offset, this.#maxBytes).then(
      (result) => {
        if (this.#state === DONE) return;
        if (this.#aborted) {
          this.#finish();
          return;
        }
        if (this.#gotResult(result)) this.park();
      },
      (err: unknown) => this.#fail(err),
    );
    return false;
  }

  #gotResult(result: ReadResult): boolean {
    this.#result = result;
    if (result.records.length < this.#wanted) return true;
    this.#finish();
    return false;
  }

  /** Ends the poll: rejects when the topic closed, else resolves with the last read. */
  #finish(): void {
    if (this.#closed.aborted) this.#fail(this.#closed.reason);
    else this.#end(this.#result, null);
  }

  #fail(err: unknown): void {
    this.#end(null, err);
  }

  #end(result: ReadResult | null, err: unknown): void {
    if (this.#state === DONE) return;
    this.#state = DONE;
    unsubscribe(this);
    if (result !== null) {
      this.#log.stats.fetched(this.#offset, result.records, this.#startedAt);
      this.#listener.fetched(result);
    } else {
      this.#log.stats.errors.count(err);
      this.#listener.fetchFailed(err);
    }
  }
}
