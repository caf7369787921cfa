/**
 * The memory every log of the process copies appends into and serves recent reads from, bounded
 * as a whole. Each log's tail cache has a bound of its own (4 MiB by default), but a broker of
 * 10,000 partitions that all receive data would otherwise hold that much for each of them: memory
 * that grew with the data written until the process ran out. Here:
 *
 * - the tail caches of all logs together hold at most `cacheLimit` bytes; past it the runs cached
 *   longest ago go first, whichever log holds them (their bytes are in the files, so a read of them
 *   goes to the file instead);
 * - chunks nothing refers to any more are kept for reuse by any log, up to `freeLimit` bytes:
 *   reused memory is already mapped, where a fresh chunk costs an allocation and a page fault per
 *   4 KiB on its first copy;
 * - how large a log's next chunk is depends on how fast it filled the last (append-buffer.ts), so a
 *   log that receives little holds a small chunk however long it runs.
 *
 * One instance serves the process (`sharedAppendMemory`), as one ticker does; a broker sets its
 * cache bound from its `tailCacheBytes` setting.
 */
import type { Chunk } from "./append-buffer.js";
import type { CachedRun } from "./tail-cache.js";

/** Bytes of free chunks kept for reuse. */
export const FREE_CHUNK_BYTES = 32 * 1024 * 1024;
/** The default bound on every tail cache of the process together. */
export const DEFAULT_CACHE_BYTES = 256 * 1024 * 1024;

export class AppendMemory {
  #cacheLimit: number;
  readonly #freeLimit: number;
  /** Bytes of cached runs, every log's together. */
  #cached = 0;
  /**
   * Cached runs in the order they were made: the oldest of each log comes before its newer ones.
   * Slots before #head are emptied, so that nothing here keeps a dropped run's chunk alive.
   */
  #runs: Array<CachedRun | undefined> = [];
  #head = 0;
  /** Runs in #runs that are still cached; the rest were dropped by their log and are skipped. */
  #live = 0;
  /** Free chunks by size, the last freed on top. */
  readonly #free = new Map<number, Chunk[]>();
  #freeBytes = 0;
  #evicted = 0;
  /** #reclaim is walking #runs: a drop it causes must not compact the array under it. */
  #reclaiming = false;

  constructor(cacheLimit = DEFAULT_CACHE_BYTES, freeLimit = FREE_CHUNK_BYTES) {
    this.#cacheLimit = cacheLimit;
    this.#freeLimit = freeLimit;
  }

  /** Bytes the tail caches of all logs hold now. */
  get cachedBytes(): number {
    return this.#cached;
  }

  /** Bytes of free chunks kept for reuse now. */
  get freeBytes(): number {
    return this.#freeBytes;
  }

  /** Runs dropped to keep within the bound, since the process started. */
  get evictedRuns(): number {
    return this.#evicted;
  }

  get cacheLimit(): number {
    return this.#cacheLimit;
  }

  /** Sets the bound on every tail cache together (0: nothing cached), dropping the oldest runs past it. */
  setCacheLimit(bytes: number): void {
    this.#cacheLimit = bytes;
    this.#reclaim();
  }

  /** A free chunk of exactly `bytes`, or null: the caller makes one. */
  take(bytes: number): Chunk | null {
    const list = this.#free.get(bytes);
    const chunk = list?.pop();
    if (chunk === undefined) return null;
    this.#freeBytes -= bytes;
    return chunk;
  }

  /** `chunk` is referred to by nothing: kept for reuse while there is room, else left to the collector. */
  give(chunk: Chunk): void {
    const bytes = chunk.buf.length;
    if (this.#freeBytes + bytes > this.#freeLimit) return;
    let list = this.#free.get(bytes);
    if (list === undefined) {
      list = [];
      this.#free.set(bytes, list);
    }
    list.push(chunk);
    this.#freeBytes += bytes;
  }

  /** A log cached `bytes` more, in `run` (a new run, or null when the bytes extended its last one). */
  cached(run: CachedRun | null, bytes: number): void {
    this.#cached += bytes;
    if (run !== null) {
      this.#runs.push(run);
      this.#live++;
    }
    if (this.#cached > this.#cacheLimit) this.#reclaim();
  }

  /** A log dropped `run` from its cache (its own bound, a clear, retention, or this bound). */
  dropped(run: CachedRun): void {
    this.#cached -= run.length;
    this.#live--;
    // Entries of runs their logs dropped are skipped when reached; when most are such, they go.
    const entries = this.#runs.length - this.#head;
    if (!this.#reclaiming && entries > 1024 && entries > 4 * this.#live) this.#compact();
  }

  /** Drops the runs cached longest ago, of any log, until the caches are within the bound. */
  #reclaim(): void {
    const runs = this.#runs;
    this.#reclaiming = true;
    while (this.#cached > this.#cacheLimit && this.#head < runs.length) {
      const run = runs[this.#head]!;
      runs[this.#head] = undefined;
      this.#head++;
      if (run.dropped) continue;
      this.#evicted++;
      run.owner.evict(run);
    }
    this.#reclaiming = false;
    if (this.#head === runs.length || (this.#head > 1024 && this.#head * 2 > runs.length)) this.#compact();
  }

  /** Keeps only the entries of runs still cached, from #head on. */
  #compact(): void {
    const kept: CachedRun[] = [];
    for (let i = this.#head; i < this.#runs.length; i++) {
      const run = this.#runs[i]!;
      if (!run.dropped) kept.push(run);
    }
    this.#runs = kept;
    this.#head = 0;
  }
}

/** The process's append memory: every log uses it unless given another (LogOptions.appendMemory). */
export const sharedAppendMemory = new AppendMemory();
