/**
 * Group commit. Appends that must wait for durability queue here once written; one fsync at a time
 * runs, and when it completes every append written before it started is acknowledged together.
 * Whatever queued meanwhile is covered by the next fsync, started at once. So N appends waiting
 * together cost one fsync, not N.
 */
import type { LogStats } from "./log-stats.js";
import type { PendingAppend } from "./pending-append.js";

/**
 * Makes everything written so far durable and resolves with the written log end it covered
 * (captured before syncing starts).
 */
export type SyncFn = () => Promise<number>;

export class GroupCommit {
  readonly #sync: SyncFn;
  readonly #onFlushed: (flushedOffset: number) => void;
  readonly #onError: (err: unknown) => void;
  /** Waiting appends, in write order, so their flush targets never decrease. */
  #waiting: PendingAppend[] = [];
  #head = 0;
  #running = false;
  #requested = false;
  #flushed: number;
  #idle: Promise<void> = Promise.resolve();
  #failure: Error | null = null;
  readonly #stats: LogStats | null;

  constructor(
    flushedOffset: number,
    sync: SyncFn,
    onFlushed: (offset: number) => void,
    onError: (err: unknown) => void,
    stats: LogStats | null = null,
  ) {
    this.#stats = stats;
    this.#flushed = flushedOffset;
    this.#sync = sync;
    this.#onFlushed = onFlushed;
    this.#onError = onError;
  }

  /** Whether an fsync is running (or about to start). */
  get running(): boolean {
    return this.#running;
  }

  /** The log end the last completed fsync covered. */
  get flushedOffset(): number {
    return this.#flushed;
  }

  /** Acknowledges `p` once an fsync covers `writtenOffset` (the log end when `p` was written). */
  add(p: PendingAppend, writtenOffset: number): void {
    if (this.#failure !== null) {
      p.fail(this.#failure);
      return;
    }
    if (writtenOffset <= this.#flushed) {
      p.acknowledge();
      return;
    }
    p.flushTarget = writtenOffset;
    this.#waiting.push(p);
    // A running fsync that started after `p` was written covers it; one that started before leaves
    // it waiting, and the loop goes on while anything waits. Only an idle committer needs a start
    // (setting `requested` here would cost an fsync with nothing new to cover).
    this.#start();
  }

  /** Asks for an fsync (the interval timer, a roll); joins the running one's successor if busy. */
  request(): void {
    if (this.#failure !== null) return;
    this.#requested = true;
    this.#start();
  }

  #start(): void {
    if (!this.#running) this.#idle = this.#run();
  }

  /** Resolves when no fsync is running or requested. */
  idle(): Promise<void> {
    return this.#idle;
  }

  /** Fails every waiting append and refuses new ones: the log can no longer promise durability. */
  failAll(err: Error): void {
    this.#failure ??= err;
    for (let i = this.#head; i < this.#waiting.length; i++) this.#waiting[i]!.fail(err);
    this.#waiting = [];
    this.#head = 0;
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      while (this.#failure === null && (this.#requested || this.#head < this.#waiting.length)) {
        this.#requested = false;
        let covered: number;
        try {
          covered = await this.#sync();
        } catch (err) {
          this.#onError(err);
          return;
        }
        if (covered > this.#flushed) this.#flushed = covered;
        const waiting = this.#waiting;
        let i = this.#head;
        while (i < waiting.length && waiting[i]!.flushTarget <= this.#flushed) waiting[i++]!.acknowledge();
        // An fsync no append waited for (the interval timer's) is no group commit.
        if (i > this.#head) this.#stats?.groupCommitAppends.observe(i - this.#head);
        if (i === waiting.length) {
          this.#waiting = [];
          this.#head = 0;
        } else if (i > 1024 && i * 2 > waiting.length) {
          this.#waiting = waiting.slice(i);
          this.#head = 0;
        } else {
          this.#head = i;
        }
        this.#onFlushed(this.#flushed);
      }
    } finally {
      this.#running = false;
    }
  }
}
