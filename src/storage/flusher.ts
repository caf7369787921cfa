/**
 * Group commit. Appends that must wait for durability queue here once written, and are
 * acknowledged, together, by the first fsync that started after they were written. Up to
 * SYNCS_IN_FLIGHT fsyncs run at once: an append written while one runs gets the next at once, so
 * it waits for one fsync, not for the rest of the running one and then its own (a stop-and-wait
 * writer's round trip is its fsync's latency, not up to two). The disk serves overlapping fsyncs
 * of one file in parallel (docs/performance/durable.md, "Hot path, eighth round"). With both slots busy,
 * whatever is written meanwhile waits for the first to end and is then covered by one fsync: N
 * appends waiting together still cost one fsync, not N.
 */
import { IdleWaiters } from "./idle-waiters.js";
import type { LogStats } from "./log-stats.js";
import type { PendingAppend } from "./pending-append.js";

/** Told once that an fsync ended: `err` is null when it succeeded. */
export type SyncDone = (err: unknown) => void;

/**
 * Starts making everything written so far durable (the log end `written()` returns at the call);
 * calls `done`, never in the same tick, when that is done or has failed.
 */
export type SyncFn = (done: SyncDone) => void;

/** fsyncs of one log that may run at once. */
export const SYNCS_IN_FLIGHT = 2;

/** One running fsync: what it covers and when it began. Made once per slot, reused. */
class SyncSlot {
  busy = false;
  target = 0;
  startedAt = 0;
  /** The slot's SyncDone, made once. */
  readonly done: SyncDone;

  constructor(done: (slot: SyncSlot) => void, failed: (slot: SyncSlot, err: unknown) => void) {
    this.done = (err: unknown) => {
      if (err === null || err === undefined) done(this);
      else failed(this, err);
    };
  }
}

export class GroupCommit {
  readonly #sync: SyncFn;
  readonly #written: () => number;
  readonly #onFlushed: (flushedOffset: number) => void;
  readonly #onError: (err: unknown) => void;
  /** Waiting appends, in write order, so their flush targets never decrease. */
  #waiting: PendingAppend[] = [];
  #head = 0;
  readonly #slots: SyncSlot[] = [];
  #inFlight = 0;
  /** An fsync was asked for (the interval timer) though nothing new may be written. */
  #requested = false;
  /** The highest log end an fsync has been started for. */
  #started: number;
  #flushed: number;
  readonly #idle = new IdleWaiters();
  #failure: Error | null = null;
  readonly #stats: LogStats | null;

  /**
   * `written` returns the log end written so far (what an fsync started now covers); `sync` starts
   * an fsync of it.
   */
  constructor(
    flushedOffset: number,
    written: () => number,
    sync: SyncFn,
    onFlushed: (offset: number) => void,
    onError: (err: unknown) => void,
    stats: LogStats | null = null,
  ) {
    this.#stats = stats;
    this.#flushed = flushedOffset;
    this.#started = flushedOffset;
    this.#written = written;
    this.#sync = sync;
    this.#onFlushed = onFlushed;
    this.#onError = onError;
    for (let i = 0; i < SYNCS_IN_FLIGHT; i++) {
      this.#slots.push(
        new SyncSlot(
          (slot) => this.#synced(slot),
          (slot, err) => this.#syncFailed(slot, err),
        ),
      );
    }
  }

  /** Whether an fsync is running. */
  get running(): boolean {
    return this.#inFlight > 0;
  }

  /** The log end the completed fsyncs cover. */
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
    // A running fsync that started after `p` was written covers it; otherwise one starts now if a
    // slot is free, or when the first running one ends.
    this.#startSyncs();
  }

  /** Asks for an fsync (the interval timer): one starts now, or when a slot frees up. */
  request(): void {
    if (this.#failure !== null) return;
    this.#requested = true;
    this.#startSyncs();
  }

  /** Resolves when no fsync is running or asked for. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return this.#idle.wait();
  }

  /** The log was cut back to `offset` (nothing waits and no fsync runs): it is the flushed end now. */
  rewind(offset: number): void {
    this.#flushed = Math.min(this.#flushed, offset);
    this.#started = Math.min(this.#started, offset);
  }

  /** Fails every waiting append and refuses new ones: the log can no longer promise durability. */
  failAll(err: Error): void {
    this.#failure ??= err;
    for (let i = this.#head; i < this.#waiting.length; i++) this.#waiting[i]!.fail(err);
    this.#waiting = [];
    this.#head = 0;
  }

  /**
   * Starts fsyncs while slots are free and one is wanted: asked for (the interval timer), or owed
   * to a waiting append that no started fsync covers. Writes nobody waits for start none: after an
   * interval fsync ends, what was written meanwhile waits for the next interval (an fsync after
   * every fsync while a producer wrote made a chain of them, a dozen a second, instead of one).
   */
  #startSyncs(): void {
    while (this.#inFlight < SYNCS_IN_FLIGHT && this.#failure === null) {
      const target = this.#written();
      if (target <= this.#started) {
        if (!this.#requested) return;
      } else if (!this.#requested && !this.#owed()) {
        return;
      }
      this.#requested = false;
      let slot = this.#slots[0]!;
      for (let i = 1; slot.busy; i++) slot = this.#slots[i]!;
      slot.busy = true;
      slot.target = target;
      slot.startedAt = this.#stats?.counting === true ? performance.now() : 0;
      this.#started = target;
      this.#inFlight++;
      try {
        this.#sync(slot.done);
      } catch (err) {
        // Told in a later tick, like any fsync's end: this loop and its caller go on first.
        queueMicrotask(() => slot.done(err ?? new Error("fsync failed")));
      }
    }
  }

  /** Whether a waiting append was written after the last fsync started (targets never decrease). */
  #owed(): boolean {
    const waiting = this.#waiting;
    return waiting.length > this.#head && waiting[waiting.length - 1]!.flushTarget > this.#started;
  }

  /**
   * Everything up to `target` (at most what was written) was made durable by a sync of the whole
   * file system (flush-queue.ts, the bulk path): as an fsync of this log's that ended.
   */
  covered(target: number): void {
    if (this.#failure !== null) return;
    if (target > this.#started) this.#started = target;
    this.#advance(target);
  }

  /** An fsync ended: everything written before it started is durable. Acknowledges in this tick. */
  #synced(slot: SyncSlot): void {
    const stats = this.#stats;
    if (stats?.counting === true) stats.fsyncSeconds.observe((performance.now() - slot.startedAt) / 1000);
    this.#release(slot);
    if (this.#failure !== null) {
      this.#stopped();
      return;
    }
    this.#advance(slot.target);
    this.#startSyncs();
    this.#stopped();
  }

  /**
   * The flushed end moves to `target` if that is past it, and the appends it covers are
   * acknowledged. fsyncs may end out of order; each covers what was written before it began,
   * whatever the other does, so the flushed end is the highest target of any that ended.
   */
  #advance(target: number): void {
    const stats = this.#stats;
    if (target > this.#flushed) {
      this.#flushed = target;
      const waiting = this.#waiting;
      let i = this.#head;
      while (i < waiting.length && waiting[i]!.flushTarget <= this.#flushed) waiting[i++]!.acknowledge();
      // An fsync no append waited for (the interval timer's) is no group commit.
      if (i > this.#head && stats?.counting === true) stats.groupCommitAppends.observe(i - this.#head);
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
  }

  #syncFailed(slot: SyncSlot, err: unknown): void {
    this.#release(slot);
    if (this.#failure === null) this.#onError(err);
    this.#stopped();
  }

  #release(slot: SyncSlot): void {
    slot.busy = false;
    this.#inFlight--;
  }

  #stopped(): void {
    if (this.#inFlight === 0) this.#idle.wake();
  }
}
