/**
 * One syncfs(2) for a whole stop instead of fsyncs per log. A clean stop of a log fsyncs its data,
 * then writes its `.idx` and producer snapshot, each fsynced before its rename: with 10,000 logs,
 * 30,000 fsyncs and seconds of the stop (docs/performance/scale.md, "Clean stops of 10,000
 * partitions"). Closed with a StopSync, a log writes all of that without an fsync, its two files
 * under names no open trusts (the checkpoint's and `<snapshot>.tmp`), and hands the renames to the
 * StopSync (`defer`). The broker then `run`s it: one syncfs for each file system the logs are on,
 * which makes every byte written to it durable, then the renames. A crash before the renames
 * leaves every log as a crash does (recovered at the next open; nothing it holds claims more than
 * is durable); one after them, what a clean stop leaves. A failed syncfs (a write the disk lost)
 * leaves each log unclean, as a failed fsync of it does.
 *
 * Where `sync -f` is missing or refused (`probe`), logs close with their own fsyncs. What syncfs
 * reports, and what else it writes back: syncfs.ts.
 */
import { dirname } from "node:path";
import { type SyncFs, syncFileSystem, syncFileSystems } from "./syncfs.js";

/** A deferred log's second half: its renames once `synced`, else what it left is discarded. */
export type StopFinish = (synced: boolean) => Promise<void>;

export class StopSync {
  readonly #syncfs: SyncFs;
  /** The directories of the logs' parents: one syncfs for each file system among them. */
  readonly #dirs = new Set<string>();
  readonly #finishes: StopFinish[] = [];
  #failure: unknown = null;

  private constructor(syncfs: SyncFs) {
    this.#syncfs = syncfs;
  }

  /**
   * A StopSync for logs under `dir` when syncfs works there (tried once: it also writes back what
   * is dirty already, so the stop's own syncfs has less left); null when it does not.
   */
  static async probe(dir: string, syncfs: SyncFs = syncFileSystem): Promise<StopSync | null> {
    try {
      await syncfs(dir);
      return new StopSync(syncfs);
    } catch {
      return null;
    }
  }

  /** The log in `logDir` wrote its stop without fsyncs; `finish` runs after the syncfs. */
  defer(logDir: string, finish: StopFinish): void {
    this.#dirs.add(dirname(logDir));
    this.#finishes.push(finish);
  }

  /** Why the last run's syncfs failed; null when it did not. */
  get failure(): unknown {
    return this.#failure;
  }

  /**
   * syncfs of every file system a deferred log is on, then each log's finish, told whether the
   * syncfs succeeded. Resolves true when it did (or nothing was deferred).
   */
  async run(): Promise<boolean> {
    const finishes = this.#finishes.splice(0);
    const dirs = [...this.#dirs];
    this.#dirs.clear();
    let synced = true;
    try {
      await syncFileSystems(dirs, this.#syncfs);
    } catch (err) {
      synced = false;
      this.#failure = err;
    }
    await Promise.allSettled(finishes.map((finish) => finish(synced)));
    return synced;
  }
}
