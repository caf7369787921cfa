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

/**
 * The longest runs' arrays kept for reuse: past it a spill's arrays are left to the collector, so
 * that one burst does not leave every partition holding arrays of its size.
 */
const REUSED_RUNS = 128;

/** One set of parallel arrays (record-framer.ts): run i is group groups[i] of indexes[i]. */
interface RunArrays extends RecordRuns {
  readonly indexes: Array<PartitionIndex | undefined>;
  readonly groups: number[];
}

export class DeferredRecords {
  // The runs; sources[i] is told once run i is written. The arrays are reused from spill to spill
  // (their length is their longest fill, `#runs` how many hold runs now): a partition that gets a
  // run from most requests would otherwise grow three new arrays a second, each living until its
  // spill, long enough to be copied by every scavenge in between and promoted.
  #runArrays: RunArrays = { indexes: [], groups: [] };
  #sources: Array<SpillSource | undefined> = [];
  #runs = 0;
  /** Arrays given back by the last spill that framed and wrote them, for the next runs. */
  #spareRuns: RunArrays | null = null;
  #spareSources: Array<SpillSource | undefined> | null = null;
  /** Records deferred. */
  count = 0;
  /** Their bytes, framed. */
  bytes = 0;

  get empty(): boolean {
    return this.count === 0;
  }

  add(index: PartitionIndex, group: number, source: SpillSource): void {
    const r = this.#runs++;
    this.#runArrays.indexes[r] = index;
    this.#runArrays.groups[r] = group;
    this.#sources[r] = source;
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
    const runs = this.#runArrays;
    const n = this.#runs;
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
    const written = new SpillWritten(this.#sources, n, (sources) => this.#giveBackSources(sources));
    const spill = new Spill(runs, ends, total, this.count, written, (framed) => this.#giveBackRuns(framed));
    this.#runArrays = this.#spareRuns ?? { indexes: [], groups: [] };
    this.#spareRuns = null;
    this.#sources = this.#spareSources ?? [];
    this.#spareSources = null;
    this.#runs = 0;
    this.count = 0;
    this.bytes = 0;
    return spill;
  }

  /** A spill framed its runs: their arrays serve the next spill (the references dropped). */
  #giveBackRuns(runs: RunArrays): void {
    if (runs.indexes.length > REUSED_RUNS) return;
    runs.indexes.fill(undefined);
    this.#spareRuns ??= runs;
  }

  /** A spill's sources were told (or it failed): their array serves the next spill. */
  #giveBackSources(sources: Array<SpillSource | undefined>): void {
    if (sources.length > REUSED_RUNS) return;
    sources.fill(undefined);
    this.#spareSources ??= sources;
  }
}

/**
 * Deferred records taken for one append: framed by `frameInto` straight into the memory the log
 * writes from (log-writer.ts, `appendSpill`), so that they are copied once, from the partitioned
 * batch, and checked by no one again: this process framed them and computed their CRCs.
 */
export class Spill {
  /** Null once framed: the arrays are given back then. */
  #runs: RunArrays | null;
  readonly #framed: (runs: RunArrays) => void;
  /** Where each batch's runs end. */
  readonly #ends: readonly number[];
  /** The framed batches' bytes, and their records. */
  readonly bytes: number;
  readonly records: number;
  /** Tells the runs' sources once the batches are written. */
  readonly written: SpillWritten;

  constructor(
    runs: RunArrays,
    ends: readonly number[],
    bytes: number,
    records: number,
    written: SpillWritten,
    framed: (runs: RunArrays) => void,
  ) {
    this.#runs = runs;
    this.#framed = framed;
    this.#ends = ends;
    this.bytes = bytes;
    this.records = records;
    this.written = written;
  }

  /**
   * Frames the batches (base offsets 0) at `out[at..]`, which must hold `bytes`. Once: the runs'
   * arrays go back to their log for its next spill.
   */
  frameInto(out: Buffer, at: number): void {
    const runs = this.#runs;
    if (runs === null) throw new Error("Spill.frameInto: framed already");
    let from = 0;
    for (const end of this.#ends) {
      at = frameRuns(runs, from, end, out, at);
      from = end;
    }
    this.#runs = null;
    this.#framed(runs);
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
  readonly #sources: Array<SpillSource | undefined>;
  readonly #count: number;
  readonly #done: (sources: Array<SpillSource | undefined>) => void;
  #ended = false;
  #waiters: Array<() => void> | null = null;

  /** Tells `sources[0..count)`, then hands the array to `done`. */
  constructor(
    sources: Array<SpillSource | undefined>,
    count: number,
    done: (sources: Array<SpillSource | undefined>) => void,
  ) {
    this.#sources = sources;
    this.#count = count;
    this.#done = done;
  }

  appended(): void {
    if (this.#ended) return;
    const sources = this.#sources;
    for (let i = 0; i < this.#count; i++) sources[i]!.spilled();
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
    if (this.#ended) return;
    this.#ended = true;
    this.#done(this.#sources);
    const waiters = this.#waiters;
    this.#waiters = null;
    if (waiters !== null) for (const w of waiters) w();
  }
}
