import { Wakeup } from "./wakeup.js";

/**
 * Long polling: readers waiting for the high watermark to pass an offset. Each waiter ends when
 * data arrives, its timeout passes or its signal aborts, and leaves the list at that moment (an
 * aborted fetch holds nothing). All timeouts share one timer, armed for the earliest deadline.
 */
/** What can end a wait early: an AbortSignal, or (cheaper, for the broker's own waits) a Wakeup. */
export type WaitCancel = AbortSignal | Wakeup;

class Waiter {
  readonly offset: number;
  readonly deadline: number;
  readonly signal: WaitCancel | undefined;
  readonly resolve: () => void;
  onAbort: (() => void) | null = null;

  constructor(offset: number, deadline: number, signal: WaitCancel | undefined, resolve: () => void) {
    this.offset = offset;
    this.deadline = deadline;
    this.signal = signal;
    this.resolve = resolve;
  }
}

export class DataWaiters {
  #waiters = new Set<Waiter>();
  #timer: NodeJS.Timeout | null = null;
  #timerAt = Number.POSITIVE_INFINITY;

  /** Waiters still waiting (for tests and metrics). */
  get size(): number {
    return this.#waiters.size;
  }

  /** Resolves once `notify` reports a high watermark above `offset`, or on timeout or abort. */
  wait(offset: number, highWatermark: number, timeoutMs: number, signal?: WaitCancel): Promise<void> {
    if (highWatermark > offset || timeoutMs <= 0 || cancelled(signal)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter = new Waiter(offset, Date.now() + timeoutMs, signal, resolve);
      this.#waiters.add(waiter);
      if (signal !== undefined) {
        waiter.onAbort = () => this.#finish(waiter);
        if (signal instanceof Wakeup) signal.listen(waiter.onAbort);
        else signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      if (waiter.deadline < this.#timerAt) this.#arm(waiter.deadline);
    });
  }

  /** The high watermark moved: wake everyone it now passes. */
  notify(highWatermark: number): void {
    if (this.#waiters.size === 0) return;
    for (const waiter of this.#waiters) if (highWatermark > waiter.offset) this.#finish(waiter);
  }

  /** Wakes everyone (the log is closing). */
  wakeAll(): void {
    for (const waiter of this.#waiters) this.#finish(waiter);
    this.#disarm();
  }

  #finish(waiter: Waiter): void {
    if (!this.#waiters.delete(waiter)) return;
    const signal = waiter.signal;
    if (waiter.onAbort !== null && signal !== undefined) {
      if (signal instanceof Wakeup) signal.listen(null);
      else signal.removeEventListener("abort", waiter.onAbort);
    }
    if (this.#waiters.size === 0) this.#disarm();
    waiter.resolve();
  }

  #arm(at: number): void {
    this.#disarm();
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, at - Date.now()));
  }

  #disarm(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  #expire(): void {
    this.#timer = null;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const waiter of this.#waiters) {
      if (waiter.deadline <= now) this.#finish(waiter);
      else if (waiter.deadline < next) next = waiter.deadline;
    }
    if (next !== Number.POSITIVE_INFINITY && this.#waiters.size > 0) this.#arm(next);
  }
}

function cancelled(signal: WaitCancel | undefined): boolean {
  if (signal === undefined) return false;
  return signal instanceof Wakeup ? signal.woken : signal.aborted;
}
