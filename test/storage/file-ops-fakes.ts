/** FileOps wrappers for tests: count calls, hold fsyncs back, make writes fail. */
import type { FileHandle } from "node:fs/promises";
import { defaultFileOps, type FileOps } from "../../src/storage/file-ops.js";

/** A latch tests can wait on: resolves the waiters once `count` reaches `n`. */
export class Counter {
  count = 0;
  #waiters: { n: number; resolve: () => void }[] = [];

  bump(): void {
    this.count++;
    this.#waiters = this.#waiters.filter((w) => {
      if (this.count >= w.n) w.resolve();
      return this.count < w.n;
    });
  }

  reached(n: number): Promise<void> {
    if (this.count >= n) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }
}

export class TestFileOps implements FileOps {
  readonly writes = new Counter();
  readonly datasyncs = new Counter();
  /** While set, datasync waits for it before syncing. */
  syncGate: Promise<void> | null = null;
  /** While set, writev waits for it before writing. */
  writeGate: Promise<void> | null = null;
  /** The next writev writes only half its bytes and reports that (a full disk). */
  shortWriteNext = false;
  /** The next writev fails with this error without writing. */
  failNext: Error | null = null;

  async writev(file: FileHandle, buffers: Buffer[], position: number): Promise<number> {
    if (this.writeGate !== null) await this.writeGate;
    try {
      if (this.failNext !== null) {
        const err = this.failNext;
        this.failNext = null;
        throw err;
      }
      if (this.shortWriteNext) {
        this.shortWriteNext = false;
        const all = Buffer.concat(buffers);
        const half = Math.floor(all.length / 2);
        await defaultFileOps.writev(file, [all.subarray(0, half)], position);
        return half;
      }
      return await defaultFileOps.writev(file, buffers, position);
    } finally {
      this.writes.bump();
    }
  }

  async datasync(file: FileHandle): Promise<void> {
    this.datasyncs.bump();
    if (this.syncGate !== null) await this.syncGate;
    await defaultFileOps.datasync(file);
  }

  /** While set, every truncate waits for it. */
  truncateGate: Promise<void> | null = null;

  async truncate(file: FileHandle, length: number): Promise<void> {
    if (this.truncateGate !== null) await this.truncateGate;
    return defaultFileOps.truncate(file, length);
  }

  preallocate(path: string, bytes: number, offset?: number): Promise<boolean> {
    return defaultFileOps.preallocate(path, bytes, offset);
  }
}

/** TestFileOps that can also write synchronously, counting which path each write took. */
export class SyncCapableOps extends TestFileOps {
  syncWrites = 0;
  failSyncNext: Error | null = null;

  writevSync(file: FileHandle, buffers: Buffer[], position: number): number {
    if (this.failSyncNext !== null) {
      const err = this.failSyncNext;
      this.failSyncNext = null;
      throw err;
    }
    this.syncWrites++;
    return defaultFileOps.writevSync!(file, buffers, position);
  }
}

/** A gate: `promise` resolves when `open()` is called. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Lets pending I/O callbacks and promise reactions run a few times. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Awaits `p` while keeping the event loop alive (the log's own timers are unref'd). */
export async function keepAlive<T>(p: Promise<T>): Promise<T> {
  const timer = setInterval(() => {}, 1000);
  try {
    return await p;
  } finally {
    clearInterval(timer);
  }
}
