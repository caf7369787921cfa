/**
 * Long polling: readers waiting for the high watermark to pass an offset. Each waiter ends when
 * data arrives, its deadline passes or the log closes, and leaves the list at that moment. A waiter
 * is the reader's own object (a long poll parks itself) and knows its slot in the list, so parking
 * and leaving allocate nothing. (A Set reallocated its table whenever it emptied, which happens at
 * every produce while a consumer keeps up.)
 *
 * All deadlines of a log share one task on the storage ticker (ticker.ts), due at the earliest
 * one, so a broker with waits on thousands of partitions still runs one timer. The task is not
 * taken out when the list empties (a consumer that keeps up parks and wakes at every produce, and
 * a timer per wait was a measurable share of the broker's garbage): it comes due, finds nothing or
 * schedules itself for the next deadline, and holds the process open only while someone waits.
 */
import { storageTicker, type Ticker, TickTask } from "./ticker.js";

/** A reader parked until the high watermark passes `waitOffset` or `waitDeadline` passes. */
export interface DataWaiter {
  /** Parked until the high watermark is above this offset. */
  readonly waitOffset: number;
  /** performance.now() time at which the wait ends anyway. */
  readonly waitDeadline: number;
  /** Its index in the list while parked, else -1 (managed by DataWaiters; start at -1). */
  waitSlot: number;
  /**
   * The wait ended (data arrived, the deadline passed, or the log closes); the waiter is out of the
   * list. It may park again, but not with a deadline that has passed.
   */
  waitEnded(): void;
}

export class DataWaiters {
  #waiters: DataWaiter[] = [];
  readonly #ticker: Ticker;
  /** Made by the first park: most logs of a broker with thousands are never waited on. */
  #task: TickTask | null = null;

  constructor(ticker: Ticker = storageTicker) {
    this.#ticker = ticker;
  }

  /** Waiters still waiting (for tests and metrics). */
  get size(): number {
    return this.#waiters.length;
  }

  /**
   * Parks `waiter` unless the high watermark already passes its offset (then returns false and
   * parks nothing: the caller reads again).
   */
  park(waiter: DataWaiter, highWatermark: number): boolean {
    if (highWatermark > waiter.waitOffset) return false;
    if (waiter.waitSlot >= 0) return true;
    waiter.waitSlot = this.#waiters.length;
    this.#waiters.push(waiter);
    this.#task ??= new TickTask((now) => this.#expired(now));
    const task = this.#task;
    if (waiter.waitSlot === 0) this.#ticker.keepAlive(task, true);
    if (!task.scheduled || waiter.waitDeadline < task.at) this.#ticker.schedule(task, waiter.waitDeadline);
    return true;
  }

  /** Takes `waiter` out without telling it (it stopped waiting on its own: an abort). */
  unpark(waiter: DataWaiter): void {
    const slot = waiter.waitSlot;
    const waiters = this.#waiters;
    if (slot < 0 || waiters[slot] !== waiter) return;
    const last = waiters.pop()!;
    if (last !== waiter) {
      waiters[slot] = last;
      last.waitSlot = slot;
    }
    waiter.waitSlot = -1;
    if (waiters.length === 0 && this.#task !== null) this.#ticker.keepAlive(this.#task, false);
  }

  /** Resolves once the high watermark passes `offset`, `timeoutMs` passes, or `signal` aborts. */
  wait(offset: number, highWatermark: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (highWatermark > offset || timeoutMs <= 0 || signal?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.park(
        new PromiseWaiter(this, offset, performance.now() + timeoutMs, signal, resolve),
        highWatermark,
      );
    });
  }

  /** The high watermark moved: wake everyone it now passes. */
  notify(highWatermark: number): void {
    const waiters = this.#waiters;
    // A woken waiter's slot takes the last one: look at the same slot again. One that parks again
    // goes to the end with an offset of at least this high watermark, so the walk ends.
    for (let i = 0; i < waiters.length; ) {
      const waiter = waiters[i]!;
      if (highWatermark > waiter.waitOffset) this.#finish(waiter);
      else i++;
    }
  }

  /** Wakes everyone (the log is closing). */
  wakeAll(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    if (this.#task !== null) {
      this.#ticker.cancel(this.#task);
      this.#ticker.keepAlive(this.#task, false);
    }
    for (const waiter of waiters) waiter.waitSlot = -1;
    for (const waiter of waiters) waiter.waitEnded();
  }

  #finish(waiter: DataWaiter): void {
    this.unpark(waiter);
    waiter.waitEnded();
  }

  #expired(now: number): void {
    const waiters = this.#waiters;
    for (let i = 0; i < waiters.length; ) {
      const waiter = waiters[i]!;
      if (waiter.waitDeadline <= now) this.#finish(waiter);
      else i++;
    }
    // Those woken may have parked again, which scheduled the task: look for the next deadline after.
    let next = Number.POSITIVE_INFINITY;
    for (const waiter of this.#waiters) if (waiter.waitDeadline < next) next = waiter.waitDeadline;
    const task = this.#task!; // it ran
    if (next !== Number.POSITIVE_INFINITY && (!task.scheduled || next < task.at))
      this.#ticker.schedule(task, next);
  }
}

/** waitForData's waiter: settles a promise, and leaves at once when its signal aborts. */
class PromiseWaiter implements DataWaiter {
  readonly waitOffset: number;
  readonly waitDeadline: number;
  waitSlot = -1;
  readonly #owner: DataWaiters;
  readonly #signal: AbortSignal | undefined;
  readonly #resolve: () => void;
  readonly #onAbort = (): void => {
    this.#owner.unpark(this);
    this.#resolve();
  };

  constructor(
    owner: DataWaiters,
    offset: number,
    deadline: number,
    signal: AbortSignal | undefined,
    resolve: () => void,
  ) {
    this.waitOffset = offset;
    this.waitDeadline = deadline;
    this.#owner = owner;
    this.#signal = signal;
    this.#resolve = resolve;
    signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  waitEnded(): void {
    this.#signal?.removeEventListener("abort", this.#onAbort);
    this.#resolve();
  }
}
