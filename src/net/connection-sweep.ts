/**
 * One coarse timer for all of a server's connections: it keeps a clock that connections read
 * instead of the system's (a request costs a field write, not a timer reset), and asks each
 * connection in turn whether it has been idle or stuck mid-frame too long. Its period is a quarter
 * of the shortest timeout, between 5 ms and 1 s: a timeout fires at most two periods (half the
 * timeout) late, one to notice the frame or the silence and one to see it last.
 */

/** What the sweep asks of each connection. */
export interface Swept {
  checkTimeouts(now: number): void;
}

const MIN_PERIOD_MS = 5;
const MAX_PERIOD_MS = 1000;

export class ConnectionSweep {
  /** performance.now() as of the last sweep (or the start). */
  now = performance.now();
  readonly periodMs: number;
  #timer: NodeJS.Timeout | null = null;

  constructor(shortestTimeoutMs: number) {
    this.periodMs = Math.min(MAX_PERIOD_MS, Math.max(MIN_PERIOD_MS, Math.floor(shortestTimeoutMs / 4)));
  }

  /** Sweeps `connections` every period until stop(). */
  start(connections: Iterable<Swept>): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.now = now;
      for (const c of connections) c.checkTimeouts(now);
    }, this.periodMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }
}
