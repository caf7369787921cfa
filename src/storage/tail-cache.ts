/**
 * The most recently written bytes of the log, kept in memory so that consumers reading near the
 * end (the common case) never touch the file. Each run maps a stretch of a segment's file positions
 * to the append chunk that was written there; runs written from one chunk one after another merge.
 * Bounded by bytes: the oldest runs go first, and a chunk the cache lets go of may be reused, so
 * readers get copies (`copy`), never views.
 */
import type { AppendBuffer, Chunk } from "./append-buffer.js";
import type { Segment } from "./segment.js";

export class CachedRun {
  readonly segment: Segment;
  /** File position of the run's first byte; always the start of a batch. */
  readonly position: number;
  readonly chunk: Chunk;
  /** Where the run starts in the chunk. */
  readonly start: number;
  length: number;

  constructor(segment: Segment, position: number, chunk: Chunk, start: number, length: number) {
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
  #runs: CachedRun[] = [];
  #head = 0;
  #bytes = 0;

  constructor(limitBytes: number, chunks: AppendBuffer) {
    this.#limit = limitBytes;
    this.#chunks = chunks;
  }

  /** Records that chunk[start, start + length) (whole batches) was written to `segment` at `position`. */
  add(segment: Segment, position: number, chunk: Chunk, start: number, length: number): void {
    if (this.#limit <= 0) return;
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
      this.#runs.push(new CachedRun(segment, position, chunk, start, length));
      chunk.cachedRuns++;
    }
    this.#bytes += length;
    while (this.#bytes > this.#limit && this.#runs.length - this.#head > 1) this.#evictOldest();
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
    for (let i = this.#head; i < runs.length; i++) if (runs[i]!.segment === segment) return runs[i];
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
    const kept: CachedRun[] = [];
    for (let i = this.#head; i < this.#runs.length; i++) {
      const run = this.#runs[i]!;
      if (run.segment !== segment) kept.push(run);
      else this.#drop(run);
    }
    this.#runs = kept;
    this.#head = 0;
  }

  #evictOldest(): void {
    this.#drop(this.#runs[this.#head]!);
    this.#head++;
    if (this.#head > 64 && this.#head * 2 > this.#runs.length) {
      this.#runs = this.#runs.slice(this.#head);
      this.#head = 0;
    }
  }

  #drop(run: CachedRun): void {
    this.#bytes -= run.length;
    run.chunk.cachedRuns--;
    this.#chunks.release(run.chunk);
  }
}
