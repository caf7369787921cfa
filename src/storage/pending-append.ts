/**
 * One append between its call and its acknowledgment: where its stamped copy lives, the offsets it
 * was given, and whom to tell: the caller's listener, or else a promise made for it. A flush marker
 * (`flush()`, `close()`) is a pending append of no bytes that waits for an fsync covering
 * everything queued before it.
 */
import type { Chunk } from "./append-buffer.js";
import type { LogStats } from "./log-stats.js";

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  /**
   * An idempotent producer's retry of a batch stored already: nothing was written, and the offsets
   * are the original's.
   */
  duplicate?: boolean;
}

/**
 * Told once how an append ended, in place of a promise (the broker's network path: one object per
 * request instead of a chain of promises). Called from inside the log's write path, so it must not
 * throw and must not wait.
 */
export interface AppendListener {
  appended(result: AppendResult): void;
  appendFailed(err: Error): void;
}

export class PendingAppend implements AppendResult {
  readonly baseOffset: number;
  /** baseOffset - 1 for a flush marker. */
  readonly lastOffset: number;
  readonly chunk: Chunk | null;
  readonly start: number;
  readonly end: number;
  /** Waits for an fsync covering it before acknowledging. */
  readonly durable: boolean;
  /** For the group commit: the written log end the covering fsync must reach. */
  flushTarget = 0;
  /** A retry answered with the original's offsets (AppendResult.duplicate). */
  duplicate = false;
  readonly #listener: AppendListener | null;
  /** Where its latency is counted; null for a flush marker. */
  readonly #stats: LogStats | null;
  readonly #startedAt: number;
  #promise: Promise<AppendResult> | null = null;
  #resolve: ((result: AppendResult) => void) | null = null;
  #reject: ((err: Error) => void) | null = null;

  constructor(
    baseOffset: number,
    lastOffset: number,
    chunk: Chunk | null,
    start: number,
    end: number,
    durable: boolean,
    listener: AppendListener | null = null,
    stats: LogStats | null = null,
  ) {
    this.baseOffset = baseOffset;
    this.lastOffset = lastOffset;
    this.chunk = chunk;
    this.start = start;
    this.end = end;
    this.durable = durable;
    this.#listener = listener;
    this.#stats = stats;
    // With metrics off the clock is not read: errors are still counted, latency is not.
    this.#startedAt = stats?.counting ? performance.now() : 0;
    if (listener === null) {
      this.#promise = new Promise<AppendResult>((resolve, reject) => {
        this.#resolve = resolve;
        this.#reject = reject;
      });
    }
  }

  /** Settles as the append does; only for an append made without a listener. */
  get promise(): Promise<AppendResult> {
    if (this.#promise === null) throw new Error("this append reports to a listener");
    return this.#promise;
  }

  get byteLength(): number {
    return this.end - this.start;
  }

  /** The offset after this append's last record. */
  get nextOffset(): number {
    return this.lastOffset + 1;
  }

  acknowledge(): void {
    const stats = this.#stats;
    if (stats?.counting) stats.appendSeconds.observe((performance.now() - this.#startedAt) / 1000);
    if (this.#listener !== null) this.#listener.appended(this);
    else if (this.duplicate)
      this.#resolve!({ baseOffset: this.baseOffset, lastOffset: this.lastOffset, duplicate: true });
    else this.#resolve!({ baseOffset: this.baseOffset, lastOffset: this.lastOffset });
  }

  fail(err: Error): void {
    if (this.#stats !== null) this.#stats.errors.count(err);
    if (this.#listener !== null) this.#listener.appendFailed(err);
    else this.#reject!(err);
  }
}
