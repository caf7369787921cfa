/**
 * A partition's deferred records (docs/shared-log.md, "Step 2, designed"): records of partitioned
 * batches that have offsets and are safe in the broker's shared log, but are not yet in the
 * partition's own files. Kept as runs of the batches they came in (nothing copied), framed into
 * ordinary batches when spilled.
 */
import { BATCH_RECORDS_AT } from "../format/layout.js";
import type { PartitionIndex } from "../format/partition-index.js";
import { framedBytes, frameRuns, type RecordRun } from "../format/record-framer.js";
import type { AppendListener } from "./pending-append.js";

/** Where a run came from: told once its records are written to the partition's file, or dropped. */
export interface SpillSource {
  spilled(): void;
}

interface DeferredRun extends RecordRun {
  readonly source: SpillSource;
}

export class DeferredRecords {
  #runs: DeferredRun[] = [];
  /** Records deferred. */
  count = 0;
  /** Their bytes, framed. */
  bytes = 0;

  get empty(): boolean {
    return this.count === 0;
  }

  add(index: PartitionIndex, group: number, source: SpillSource): void {
    this.#runs.push({ index, group, source });
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
    const runs = this.#runs;
    const groups: RecordRun[][] = [];
    let group: RecordRun[] = [];
    let groupBytes = BATCH_RECORDS_AT;
    for (const run of runs) {
      const bytes = run.index.bytes[run.group]!;
      const layoutChanges = group.length > 0 && group[0]!.index.extended !== run.index.extended;
      if (group.length > 0 && (layoutChanges || groupBytes + bytes > maxBatchBytes)) {
        groups.push(group);
        group = [];
        groupBytes = BATCH_RECORDS_AT;
      }
      group.push(run);
      groupBytes += bytes;
    }
    if (group.length > 0) groups.push(group);
    let total = 0;
    for (const g of groups) total += framedBytes(g);
    const spill = new Spill(groups, total, this.count, new SpillWritten(runs.map((r) => r.source)));
    this.#runs = [];
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
  readonly #groups: RecordRun[][];
  /** The framed batches' bytes, and their records. */
  readonly bytes: number;
  readonly records: number;
  /** Tells the runs' sources once the batches are written. */
  readonly written: SpillWritten;

  constructor(groups: RecordRun[][], bytes: number, records: number, written: SpillWritten) {
    this.#groups = groups;
    this.bytes = bytes;
    this.records = records;
    this.written = written;
  }

  /** Frames the batches (base offsets 0) at `out[at..]`, which must hold `bytes`. */
  frameInto(out: Buffer, at: number): void {
    for (const group of this.#groups) at = frameRuns(group, out, at);
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
  readonly #sources: SpillSource[];
  #ended = false;
  #waiters: Array<() => void> | null = null;

  constructor(sources: SpillSource[]) {
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
