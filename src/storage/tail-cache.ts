/**
 * The most recently written bytes of the log, kept in memory so that consumers reading near the
 * end (the common case) never touch the file. Each run maps a stretch of a segment's file positions
 * to the append chunk that was written there; runs written from one chunk one after another merge.
 * Bounded by bytes, the log's own bound and the process's for every log together
 * (append-memory.ts): the oldest runs go first, and a chunk the cache lets go of may be reused, so
 * readers get copies (`copy`), never views. Every run is written to the file before it is cached,
 * so dropping one only sends its readers to the file.
 */
import type { AppendBuffer, Chunk } from "./append-buffer.js";
import type { AppendMemory } from "./append-memory.js";
import type { Segment } from "./segment.js";

export class CachedRun {
  readonly segment: Segment;
  /** File position of the run's first byte; always the start of a batch. */
  readonly position: number;
  readonly chunk: Chunk;
  /** Where the run starts in the chunk. */
  readonly start: number;
  length: number;
  /** The cache that holds it. */
  readonly owner: TailCache;
  /** No longer cached. */
  dropped = false;

  constructor(
    owner: TailCache,
    segment: Segment,
    position: number,
    chunk: Chunk,
    start: number,
    length: number,
  ) {
    this.owner = owner;
    this.segment = segment;
    this.position = position;
    this.chunk = chunk;
    this.start = start;
    this.length = length;
  }

  get end(): number {
    return this.position + this.length;
  }
}

export class TailCache {
  readonly #limit: number;
  readonly #chunks: AppendBuffer;
  readonly #memory: AppendMemory;
  /** Runs cached are #runs[#head..]; slots before #head are emptied, so a dropped run's chunk can go. */
  #runs: Array<CachedRun | null> = [];
  #head = 0;
  #bytes = 0;

  constructor(limitBytes: number, chunks: AppendBuffer, memory: AppendMemory) {
    this.#limit = limitBytes;
    this.#chunks = chunks;
    this.#memory = memory;
  }

  /** Records that chunk[start, start + length) (whole batches) was written to `segment` at `position`. */
  add(segment: Segment, position: number, chunk: Chunk, start: number, length: number): void {
    if (this.#limit <= 0) return;
    let run: CachedRun | null = null;
    const last = this.#runs.length > this.#head ? this.#runs[this.#runs.length - 1]! : undefined;
    if (
      last !== undefined &&
      last.segment === segment &&
      last.end === position &&
      last.chunk === chunk &&
      last.start + last.length === start
    ) {
      last.length += length;
    } else {
      run = new CachedRun(this, segment, position, chunk, start, length);
      this.#runs.push(run);
      chunk.cachedRuns++;
    }
    this.#bytes += length;
    // May drop runs of any log, this one's too (the process's bound), before its own bound below.
    this.#memory.cached(run, length);
    while (this.#bytes > this.#limit && this.#runs.length - this.#head > 1) this.#evictOldest();
  }

  /**
   * Drops `run`, to keep every log's caches within the process's bound: the oldest run this
   * cache holds, as the process's bound drops runs in the order they were cached.
   */
  evict(run: CachedRun): void {
    if (run.dropped) return;
    if (this.#runs[this.#head] === run) {
      this.#evictOldest();
      return;
    }
    const at = this.#runs.indexOf(run, this.#head);
    if (at < 0) return;
    this.#runs.splice(at, 1);
    this.#drop(run);
  }

  /** The cached run of `segment` holding file `position`, if any. */
  find(segment: Segment, position: number): CachedRun | undefined {
    const runs = this.#runs;
    for (let i = runs.length - 1; i >= this.#head; i--) {
      const run = runs[i]!;
      if (run.segment === segment && run.position <= position && position < run.end) return run;
    }
    return undefined;
  }

  /** The first cached run of `segment`, if any: where memory starts for that segment. */
  first(segment: Segment): CachedRun | undefined {
    const runs = this.#runs;
    for (let i = this.#head; i < runs.length; i++) if (runs[i]!.segment === segment) return runs[i]!;
    return undefined;
  }

  /** Forgets everything (the log went quiet: its readers have caught up or gone). */
  clear(): void {
    for (let i = this.#head; i < this.#runs.length; i++) this.#drop(this.#runs[i]!);
    this.#runs = [];
    this.#head = 0;
  }

  /** Forgets everything of `segment` (deleted by retention). */
  forget(segment: Segment): void {
    const kept: Array<CachedRun | null> = [];
    for (let i = this.#head; i < this.#runs.length; i++) {
      const run = this.#runs[i]!;
      if (run.segment !== segment) kept.push(run);
      else this.#drop(run);
    }
    this.#runs = kept;
    this.#head = 0;
  }

  #evictOldest(): void {
    const run = this.#runs[this.#head]!;
    this.#runs[this.#head] = null;
    this.#head++;
    this.#drop(run);
    if (this.#head === this.#runs.length) {
      this.#runs.length = 0;
      this.#head = 0;
    } else if (this.#head > 64 && this.#head * 2 > this.#runs.length) {
      this.#runs = this.#runs.slice(this.#head);
      this.#head = 0;
    }
  }

  #drop(run: CachedRun): void {
    this.#bytes -= run.length;
    run.dropped = true;
    this.#memory.dropped(run);
    run.chunk.cachedRuns--;
    this.#chunks.release(run.chunk);
  }
}
