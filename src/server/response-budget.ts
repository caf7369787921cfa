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
 */

/** Told once when the budget has room again after `wait`. */
export interface BudgetWaiter {
  budgetAvailable(): void;
}

export class ResponseBudget {
  readonly maxBytes: number;
  #queued = 0;
  /** Connections waiting for room; each at most once, and only while the budget is full. */
  #waiters = new Set<BudgetWaiter>();

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes charged by all connections now. */
  get queuedBytes(): number {
    return this.#queued;
  }

  /** Whether `bytes` more fit under the bound. */
  fits(bytes: number): boolean {
    return this.#queued + bytes <= this.maxBytes;
  }

  /** A connection's charge went up or down by `delta`. */
  change(delta: number): void {
    this.#queued += delta;
    if (delta < 0 && this.#waiters.size > 0 && this.#queued < this.maxBytes) this.#wake();
  }

  /** `waiter.budgetAvailable()` is called once the total goes down again. */
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
