/**
 * A token bucket over bytes, so that compaction's disk reads and writes can be capped
 * (compactionBytesPerSec). The bucket holds at most one second of tokens; a take larger than what
 * is there goes into debt and waits until the debt is paid, so a single large batch is never
 * refused, only delayed. The rate is read at every take, so a config change applies at once.
 */
import { setTimeout as sleep } from "node:timers/promises";

type Sleep = (ms: number, signal: AbortSignal | undefined) => Promise<unknown>;

const realSleep: Sleep = (ms, signal) => sleep(ms, undefined, signal === undefined ? undefined : { signal });

export class IoThrottle {
  readonly #rate: () => number;
  readonly #now: () => number;
  readonly #sleep: Sleep;
  #tokens = 0;
  #last: number;

  /** `rate` returns bytes per second, or -1 for no cap; `now` and `sleep` are for tests. */
  constructor(rate: () => number, now: () => number = () => performance.now(), wait: Sleep = realSleep) {
    this.#rate = rate;
    this.#now = now;
    this.#sleep = wait;
    this.#last = now();
    const r = rate();
    this.#tokens = Math.max(r, 0);
  }

  /** Accounts for `bytes` of I/O, waiting while the bucket is in debt. Rejects if `signal` aborts. */
  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    const rate = this.#rate();
    if (rate <= 0) return;
    const now = this.#now();
    this.#tokens = Math.min(rate, this.#tokens + ((now - this.#last) * rate) / 1000);
    this.#last = now;
    this.#tokens -= bytes;
    if (this.#tokens >= 0) return;
    await this.#sleep(Math.ceil((-this.#tokens * 1000) / rate), signal);
  }
}
