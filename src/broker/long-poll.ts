/**
 * Fetch with long polling: read at an offset and, while fewer than `minBytes` are available, wait
 * for the partition's high watermark to move and read again, until enough arrived, `maxWaitMs`
 * passed, the caller aborted, or the topic closed. Every wait is registered with the log and
 * removed when it ends, so a client that goes away leaves nothing behind.
 *
 * A wait is one object, the LongPoll: it parks itself with the log (PartitionLog.park) and
 * subscribes itself to the caller's signal (abort-fanout.ts), so a consumer that keeps up, which
 * waits once per produce, costs one object and one promise per fetch, and its answer is read in
 * the same tick as the write that made the data visible. The topic's signal needs no subscription:
 * Topic.close aborts it and then closes the logs, which wakes every parked wait, and a woken wait
 * looks at that signal first.
 */
import type { PartitionLog, ReadResult } from "../storage/partition-log.js";
import type { DataWaiter } from "../storage/data-waiters.js";
import { AbortTarget, subscribe, unsubscribe } from "./abort-fanout.js";

/** setTimeout's ceiling; a longer wait would fire at once. */
const MAX_WAIT_MS = 2 ** 31 - 1;

/**
 * `closed` is the topic's signal: when it fires during a wait, the fetch fails with its reason (a
 * ConchError: UNKNOWN_TOPIC after a delete, SHUTTING_DOWN when the broker stops). When `signal` fires
 * the fetch resolves at once with what the last read returned.
 */
export function fetchWithWait(
  log: PartitionLog,
  offset: number,
  maxBytes: number,
  maxWaitMs: number,
  minBytes: number,
  signal: AbortSignal | undefined,
  closed: AbortSignal,
): Promise<ReadResult> {
  const wait: WaitSpec = { log, offset, maxBytes, maxWaitMs, minBytes, signal, closed };
  // A reader keeping up is served from the tail cache without a promise (readNow).
  const now = log.readNow(offset, maxBytes);
  if (now !== undefined) return afterFirstRead(wait, now);
  return log.read(offset, maxBytes).then((result) => afterFirstRead(wait, result));
}

interface WaitSpec {
  log: PartitionLog;
  offset: number;
  maxBytes: number;
  maxWaitMs: number;
  minBytes: number;
  signal: AbortSignal | undefined;
  closed: AbortSignal;
}

function afterFirstRead(w: WaitSpec, result: ReadResult): Promise<ReadResult> {
  // A read may return less than maxBytes only when less is there, so asking for more than maxBytes
  // would always wait out the full time for nothing.
  const wanted = Math.max(1, Math.min(w.minBytes, w.maxBytes));
  if (result.records.length >= wanted || w.maxWaitMs <= 0 || w.signal?.aborted === true) {
    return Promise.resolve(result);
  }
  if (w.closed.aborted) return Promise.reject(w.closed.reason);
  return new Promise<ReadResult>((resolve, reject) => {
    new LongPoll(w, wanted, result, resolve, reject).park();
  });
}

const PARKED = 0;
const READING = 1;
const DONE = 2;

class LongPoll extends AbortTarget implements DataWaiter {
  waitOffset: number;
  readonly waitDeadline: number;
  waitSlot = -1;
  readonly #w: WaitSpec;
  readonly #wanted: number;
  #result: ReadResult;
  #state = PARKED;
  /** An abort arrived during a file read: it ends the poll when the read returns. */
  #aborted = false;
  readonly #resolve: (result: ReadResult) => void;
  readonly #reject: (err: unknown) => void;

  constructor(
    w: WaitSpec,
    wanted: number,
    result: ReadResult,
    resolve: (result: ReadResult) => void,
    reject: (err: unknown) => void,
  ) {
    super();
    this.#w = w;
    this.#wanted = wanted;
    this.#result = result;
    this.waitOffset = result.highWatermark;
    this.waitDeadline = performance.now() + Math.min(w.maxWaitMs, MAX_WAIT_MS);
    this.#resolve = resolve;
    this.#reject = reject;
    // A shared signal (the connection's) gets one listener, whatever the number of waits on it.
    if (w.signal !== undefined) subscribe(w.signal, this);
  }

  /** Waits for the high watermark to pass what the last read saw, or ends the poll. */
  park(): void {
    const w = this.#w;
    for (;;) {
      if (performance.now() >= this.waitDeadline) {
        this.#finish();
        return;
      }
      this.waitOffset = this.#result.highWatermark;
      this.#state = PARKED;
      if (w.log.park(this)) return;
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
    this.#w.log.unpark(this);
    this.#finish();
  }

  /**
   * Reads again after a wake. Returns true when the poll should park again; false when it ended
   * or a file read is under way (which parks or ends it when it returns).
   */
  #readAgain(): boolean {
    const w = this.#w;
    if (w.closed.aborted) {
      this.#finish();
      return false;
    }
    const now = w.log.readNow(w.offset, w.maxBytes);
    if (now !== undefined) return this.#gotResult(now);
    this.#state = READING;
    w.log.read(w.offset, w.maxBytes).then(
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
    if (this.#w.closed.aborted) this.#fail(this.#w.closed.reason);
    else this.#end(this.#result, null);
  }

  #fail(err: unknown): void {
    this.#end(null, err);
  }

  #end(result: ReadResult | null, err: unknown): void {
    if (this.#state === DONE) return;
    this.#state = DONE;
    unsubscribe(this);
    if (result !== null) this.#resolve(result);
    else this.#reject(err);
  }
}
