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
   * Frames every deferred record into ordinary batches of at most `maxBatchBytes` each (a run is
   * never split, and one larger than that, which the partitioned batch's own limit prevents, gets
   * a batch alone), one after another in one buffer; empties this and returns the batches and the
   * listener that tells the runs' sources once they are written.
   */
  take(maxBatchBytes: number): { batches: Buffer; written: SpillWritten } {
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
    const batches = Buffer.allocUnsafe(total);
    for (let i = 0, at = 0; i < groups.length; i++) at = frameRuns(groups[i]!, batches, at);
    const written = new SpillWritten(runs.map((r) => r.source));
    this.#runs = [];
    this.count = 0;
    this.bytes = 0;
    return { batches, written };
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
