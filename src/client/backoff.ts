/**
 * Exponential backoff with jitter: the n-th retry waits a random time in [step / 2, step] where
 * step = min(max, initial * 2^n), so that clients that lost the same broker do not all come back
 * at the same instant, while the half-step floor keeps a retry from being immediate by chance.
 */
export interface BackoffOptions {
  /** First step in ms. */
  initialMs: number;
  /** Largest step in ms. */
  maxMs: number;
}

export class Backoff {
  #initialMs: number;
  #maxMs: number;
  #attempt = 0;

  constructor(options: BackoffOptions) {
    this.#initialMs = Math.max(1, options.initialMs);
    this.#maxMs = Math.max(this.#initialMs, options.maxMs);
  }

  /** Failed attempts since the last reset. */
  get attempts(): number {
    return this.#attempt;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const step = Math.min(this.#maxMs, this.#initialMs * 2 ** Math.min(this.#attempt, 30));
    this.#attempt++;
    return Math.round(step / 2 + Math.random() * (step / 2));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Resolves after `ms`, or rejects with `onAbort()` when the signal aborts first. */
export function delay(ms: number, signal: AbortSignal | undefined, onAbort: () => Error): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(onAbort());
      return;
    }
    const abort = (): void => {
      clearTimeout(timer);
      reject(onAbort());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", abort, { once: true });
  });
}
