/**
 * The shared log's timed work, on the storage ticker (ticker.ts): its interval fsync, due when the
 * oldest entry it does not cover has waited its topic's flush interval (one fsync for every
 * partition written meanwhile), and its retirement (shared-log.ts, `retire`), every second while
 * it holds entries. Neither is scheduled while the log is idle.
 */
import type { Logger } from "pino";
import { storageTicker, type Ticker, TickTask } from "../ticker.js";
import type { SharedLog } from "./shared-log.js";

/** How often the log tries to retire segments while it holds entries. */
export const RETIRE_EVERY_MS = 1_000;

export class SharedLogUpkeep {
  readonly #log: SharedLog;
  readonly #ticker: Ticker;
  readonly #logger: Logger | undefined;
  readonly #syncTask = new TickTask(() => this.#log.requestSync());
  readonly #retireTask = new TickTask(() => this.#retire());
  #closed = false;

  constructor(log: SharedLog, logger?: Logger, ticker: Ticker = storageTicker) {
    this.#log = log;
    this.#logger = logger;
    this.#ticker = ticker;
  }

  /** An entry was appended that must be fsynced within `flushIntervalMs` (null: no fsync owed). */
  appended(flushIntervalMs: number | null): void {
    if (this.#closed) return;
    if (flushIntervalMs !== null) {
      const due = performance.now() + flushIntervalMs;
      if (!this.#syncTask.scheduled || due < this.#syncTask.at) this.#ticker.schedule(this.#syncTask, due);
    }
    if (!this.#retireTask.scheduled)
      this.#ticker.schedule(this.#retireTask, performance.now() + RETIRE_EVERY_MS);
  }

  /** Starts retiring what the log holds at its open, if anything. */
  start(): void {
    this.#again();
  }

  /** Stops scheduling (the broker is closing). */
  close(): void {
    this.#closed = true;
    this.#ticker.cancel(this.#syncTask);
    this.#ticker.cancel(this.#retireTask);
  }

  #retire(): void {
    this.#log.retire().then(
      () => this.#again(),
      (err: unknown) => {
        this.#logger?.warn({ err }, "shared log segments not retired; tried again later");
        this.#again();
      },
    );
  }

  #again(): void {
    if (!this.#closed && this.#log.holdsEntries && !this.#retireTask.scheduled)
      this.#ticker.schedule(this.#retireTask, performance.now() + RETIRE_EVERY_MS);
  }
}
