/**
 * The bound on response bytes held for all of a server's connections together. Each connection
 * charges what it holds (requests in progress, with the response a fetch may answer with, plus
 * the bytes its socket has not yet handed to the kernel) and updates its charge as that changes.
 * Without it, each connection's own bound (maxInflightBytes) still lets N clients that pipeline
 * fetches and never read hold N times that bound: 32 of them took the broker to 2.7 GB.
 *
 * Over the bound, fetches wait (Connection holds the frame and stops reading) and streams hold
 * their pushes; they are woken when a charge goes down and the total is back under the bound.
 * A connection that holds nothing may still fetch, with its maxBytes cut to a small floor, so a
 * client that reads its responses is served however much the others hold.
 *
 * When the total falls far from its high point (connections that held a lot went away),
 * `onReleased` is told: what they held is garbage now, but an idle broker allocates nothing, so
 * no collection would run to free it (ConchServer's `releaseMemory` option).
 */

/** Told once when the budget has room again after `wait`. */
/** A fall of this much (or half the bound, if less) from the high point is worth a collection. */
const RELEASE_BYTES = 64 * 1024 * 1024;

export interface BudgetWaiter {
  budgetAvailable(): void;
}

export class ResponseBudget {
  readonly maxBytes: number;
  #queued = 0;
  /** Connections waiting for room; each at most once, and only while the budget is full. */
  #waiters = new Set<BudgetWaiter>();
  /** The highest total since `onReleased` was last told, and the fall that tells it. */
  #high = 0;
  readonly #releaseBytes: number;
  onReleased: (() => void) | null = null;

  readonly #fetchBytes: number;

  /** `fetchBytes`: the most one fetch may answer with, the room a fetch needs to start. */
  constructor(maxBytes: number, fetchBytes: number) {
    this.maxBytes = maxBytes;
    this.#fetchBytes = fetchBytes;
    this.#releaseBytes = Math.min(RELEASE_BYTES, Math.ceil(maxBytes / 2));
  }

  /** Bytes charged by all connections now. */
  get queuedBytes(): number {
    return this.#queued;
  }

  /** Whether the largest fetch answer fits under the bound now. */
  hasRoom(): boolean {
    return this.#queued + this.#fetchBytes <= this.maxBytes;
  }

  /** A connection's charge went up or down by `delta`. */
  change(delta: number): void {
    const queued = this.#queued + delta;
    this.#queued = queued;
    if (delta > 0) {
      if (queued > this.#high) this.#high = queued;
      return;
    }
    if (this.#waiters.size > 0 && this.hasRoom()) this.#wake();
    if (this.#high - queued >= this.#releaseBytes) {
      this.#high = queued;
      this.onReleased?.();
    }
  }

  /** `waiter.budgetAvailable()` is called once, when the total went down and there is room. */
  wait(waiter: BudgetWaiter): void {
    this.#waiters.add(waiter);
  }

  /** A waiter that went away. */
  cancel(waiter: BudgetWaiter): void {
    this.#waiters.delete(waiter);
  }

  #wake(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w.budgetAvailable();
  }
}
