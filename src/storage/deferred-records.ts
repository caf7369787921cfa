/**
 * A partition's deferred records (docs/shared-log.md, "Step 2, designed"): records of partitioned
 * batches that have offsets and are safe in the broker's shared log, but are not yet in the
 * partition's own files. Kept as runs of the batches they came in (nothing copied), framed into
 * ordinary batches when spilled.
 */
import { BATCH_RECORDS_AT } from "../format/layout.js";
import type { PartitionIndex } from "../format/partition-index.js";
import { frameRuns, type RecordRuns } from "../format/record-framer.js";
import type { AppendListener } from "./pending-append.js";

/** Where a run came from: told once its records are written to the partition's file, or dropped. */
export interface SpillSource {
  spilled(): void;
}

export class DeferredRecords {
  // The runs, in parallel arrays (record-framer.ts): run i is group groups[i] of indexes[i], and
  // sources[i] is told once it is written.
  #indexes: PartitionIndex[] = [];
  #groups: number[] = [];
  #sources: SpillSource[] = [];
  /** Records deferred. */
  count = 0;
  /** Their bytes, framed. */
  bytes = 0;

  get empty(): boolean {
    return this.count === 0;
  }

  add(index: PartitionIndex, group: number, source: SpillSource): void {
    this.#indexes.push(index);
    this.#groups.push(group);
    this.#sources.push(source);
    this.count += index.counts[group]!;
    this.bytes += index.bytes[group]!;
  }

  /**
   * Empties this into a spill: every deferred record, to be framed into ordinary batches of at most
   * `maxBatchBytes` each (a run is never split, and one larger than that, which the partitioned
   * batch's own limit prevents, gets a batch alone), one after another, wherever the spill's
   * appender puts them.
   */
  take(maxBatchBytes: number): Spill {
    const runs: RecordRuns = { indexes: this.#indexes, groups: this.#groups };
    const n = this.#indexes.length;
    // ends[b]: the run after batch b's last.
    const ends: number[] = [];
    let total = 0;
    let start = 0;
    let batchBytes = BATCH_RECORDS_AT;
    for (let r = 0; r < n; r++) {
      const index = runs.indexes[r]!;
      const bytes = index.bytes[runs.groups[r]!]!;
      const layoutChanges = runs.indexes[start]!.extended !== index.extended;
      if (r > start && (layoutChanges || batchBytes + bytes > maxBatchBytes)) {
        ends.push(r);
        total += batchBytes;
        start = r;
        batchBytes = BATCH_RECORDS_AT;
      }
      batchBytes += bytes;
    }
    if (n > 0) {
      ends.push(n);
      total += batchBytes;
    }
    const spill = new Spill(runs, ends, total, this.count, new SpillWritten(this.#sources));
    this.#indexes = [];
    this.#groups = [];
    this.#sources = [];
    this.count = 0;
    this.bytes = 0;
    return spill;
  }
}

/**
 * Deferred records taken for one append: framed by `frameInto` straight into the memory the log
 * writes from (log-writer.ts, `appendSpill`), so that they are copied once, from the partitioned
 * batch, and checked by no one again: this process framed them and computed their CRCs.
 */
export class Spill {
  readonly #runs: RecordRuns;
  /** Where each batch's runs end. */
  readonly #ends: readonly number[];
  /** The framed batches' bytes, and their records. */
  readonly bytes: number;
  readonly records: number;
  /** Tells the runs' sources once the batches are written. */
  readonly written: SpillWritten;

  constructor(
    runs: RecordRuns,
    ends: readonly number[],
    bytes: number,
    records: number,
    written: SpillWritten,
  ) {
    this.#runs = runs;
    this.#ends = ends;
    this.bytes = bytes;
    this.records = records;
    this.written = written;
  }

  /** Frames the batches (base offsets 0) at `out[at..]`, which must hold `bytes`. */
  frameInto(out: Buffer, at: number): void {
    let from = 0;
    for (const end of this.#ends) {
      at = frameRuns(this.#runs, from, end, out, at);
      from = end;
    }
  }

  /** The batches in a buffer of their own, for an append of a caller's buffer (the replay's). */
  toBuffer(): Buffer {
    const out = Buffer.allocUnsafe(this.bytes);
    this.frameInto(out, 0);
    return out;
  }
}

/** The spill's append listener: tells every source once the batches are written. */
export class SpillWritten implements AppendListener {
  readonly #sources: readonly SpillSource[];
  #ended = false;
  #waiters: Array<() => void> | null = null;

  constructor(sources: readonly SpillSource[]) {
    this.#sources = sources;
  }

  appended(): void {
    for (const s of this.#sources) s.spilled();
    this.#end();
  }

  /**
   * The log failed to write them: the sources are not told, so the shared log keeps the records
   * and a restart replays them.
   */
  appendFailed(): void {
    this.#end();
  }

  /** Resolves once the spill's append has ended, either way. */
  ended(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiters ??= [];
      this.#waiters.push(resolve);
    });
  }

  #end(): void {
    this.#ended = true;
    const waiters = this.#waiters;
    this.#waiters = null;
    if (waiters !== null) for (const w of waiters) w();
  }
}
