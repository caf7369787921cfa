/**
 * The most recently written bytes of the log, kept in memory so that consumers reading near the
 * end (the common case) never touch the file. Each entry maps a run of a segment's file
 * positions to the append chunk that was written there; runs written from one chunk one after
 * another merge into one entry. Bounded by bytes: the oldest entries go first.
 */
import type { Segment } from "./segment.js";

class CachedRun {
  segment: Segment;
  /** File position of `bytes[0]`; always the start of a batch. */
  position: number;
  bytes: Buffer;

  constructor(segment: Segment, position: number, bytes: Buffer) {
    this.segment = segment;
    this.position = position;
    this.bytes = bytes;
  }

  get end(): number {
    return this.position + this.bytes.length;
  }
}

export type { CachedRun };

export class TailCache {
  readonly #limit: number;
  #runs: CachedRun[] = [];
  #bytes = 0;

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  /** Records that `bytes` (whole batches) were written to `segment` at `position`. */
  add(segment: Segment, position: number, bytes: Buffer): void {
    if (this.#limit <= 0) return;
    const last = this.#runs.at(-1);
    if (
      last !== undefined &&
      last.segment === segment &&
      last.end === position &&
      last.bytes.buffer === bytes.buffer &&
      last.bytes.byteOffset + last.bytes.length === bytes.byteOffset
    ) {
      last.bytes = Buffer.from(bytes.buffer, last.bytes.byteOffset, last.bytes.length + bytes.length);
    } else {
      this.#runs.push(new CachedRun(segment, position, bytes));
    }
    this.#bytes += bytes.length;
    while (this.#bytes > this.#limit && this.#runs.length > 1) {
      const dropped = this.#runs.shift()!;
      this.#bytes -= dropped.bytes.length;
    }
  }

  /** The cached run of `segment` holding file `position`, if any. */
  find(segment: Segment, position: number): CachedRun | undefined {
    for (let i = this.#runs.length - 1; i >= 0; i--) {
      const run = this.#runs[i]!;
      if (run.segment === segment && run.position <= position && position < run.end) return run;
    }
    return undefined;
  }

  /** The first cached run of `segment`, if any: where memory starts for that segment. */
  first(segment: Segment): CachedRun | undefined {
    for (const run of this.#runs) if (run.segment === segment) return run;
    return undefined;
  }

  /** Forgets everything of `segment` (deleted). */
  forget(segment: Segment): void {
    const kept = this.#runs.filter((run) => run.segment !== segment);
    for (const run of this.#runs) if (run.segment === segment) this.#bytes -= run.bytes.length;
    this.#runs = kept;
  }
}
