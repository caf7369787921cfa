/**
 * One append between its call and its acknowledgment: where its stamped copy lives, the offsets it
 * was given, and how to settle the caller's promise. A flush marker (`flush()`, `close()`) is a
 * pending append of no bytes that waits for an fsync covering everything queued before it.
 */
import type { Chunk } from "./append-buffer.js";

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
}

export class PendingAppend {
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
  readonly promise: Promise<AppendResult>;
  #resolve!: (result: AppendResult) => void;
  #reject!: (err: Error) => void;

  constructor(
    baseOffset: number,
    lastOffset: number,
    chunk: Chunk | null,
    start: number,
    end: number,
    durable: boolean,
  ) {
    this.baseOffset = baseOffset;
    this.lastOffset = lastOffset;
    this.chunk = chunk;
    this.start = start;
    this.end = end;
    this.durable = durable;
    this.promise = new Promise<AppendResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get byteLength(): number {
    return this.end - this.start;
  }

  /** The offset after this append's last record. */
  get nextOffset(): number {
    return this.lastOffset + 1;
  }

  acknowledge(): void {
    this.#resolve({ baseOffset: this.baseOffset, lastOffset: this.lastOffset });
  }

  fail(err: Error): void {
    this.#reject(err);
  }
}
