/**
 * Records a topic owes partitions whose logs are not open: each partition's open appends them, at
 * the offsets their producers were told, before anything else uses its log. Two kinds:
 *
 * - after a crash, what the shared log kept for the partition (shared-log/replay.ts); its end is
 *   not known until its log is recovered, so nothing more is deferred into it;
 * - on a running broker, Produce version 3 records deferred into a partition not open yet
 *   (docs/shared-log.md, "Step 3"): its end is known (a new partition's 0, or a clean stop's
 *   summary), so each run takes the next offsets from there, and the partition opens in the
 *   background meanwhile instead of holding the request for its open.
 *
 * A produce that goes the split way and waits for the partition's open is not overtaken: while one
 * waits, nothing is deferred into that partition (it would get earlier offsets than records that
 * came before it).
 */
import type { OwedRun } from "../storage/shared-log/replay.js";

export class OwedPartitions {
  readonly #runs: Map<number, OwedRun[]>;
  /** The next offset of each partition that records were deferred into on this run. */
  readonly #ends = new Map<number, number>();
  /** Produces waiting for a partition's open, by partition. */
  readonly #waiting = new Map<number, number>();

  /** `recovered`: what the shared log owed each partition at the open (after a crash). */
  constructor(recovered: ReadonlyMap<number, readonly OwedRun[]> = new Map()) {
    this.#runs = new Map([...recovered].map(([p, runs]) => [p, [...runs]]));
  }

  /** Whether `partition` is owed records. */
  has(partition: number): boolean {
    return this.#runs.has(partition);
  }

  /** Partitions owed records. */
  partitions(): number[] {
    return [...this.#runs.keys()];
  }

  /**
   * Whether records may be deferred into `partition` (not open, its end known): not when a crash
   * left it records (its end is not known), nor while a produce waits for its open.
   */
  canTake(partition: number): boolean {
    if ((this.#waiting.get(partition) ?? 0) > 0) return false;
    return !this.#runs.has(partition) || this.#ends.has(partition);
  }

  /** The offset the next run deferred into `partition` gets; `knownEnd` is its end when it is owed none. */
  nextOffset(partition: number, knownEnd: number): number {
    return this.#ends.get(partition) ?? knownEnd;
  }

  /** Defers `run` (whose `baseOffset` is `nextOffset`) into `partition`. */
  take(partition: number, run: OwedRun): void {
    this.#ends.set(partition, run.baseOffset + run.index.counts[run.group]!);
    const runs = this.#runs.get(partition);
    if (runs !== undefined) runs.push(run);
    else this.#runs.set(partition, [run]);
  }

  /** What `partition` is owed now, oldest first (its open appends them), or undefined. */
  runs(partition: number): readonly OwedRun[] | undefined {
    return this.#runs.get(partition);
  }

  /** The first `n` runs owed to `partition` are in its log now; more may have come meanwhile. */
  appended(partition: number, n: number): void {
    const runs = this.#runs.get(partition);
    if (runs === undefined) return;
    runs.splice(0, n);
    if (runs.length === 0) this.#runs.delete(partition);
  }

  /** `partition` is open and owed nothing: its log assigns offsets from now on. */
  opened(partition: number): void {
    this.#ends.delete(partition);
  }

  /** A produce waits for `partition`'s open (`delta` 1), or stopped waiting (-1). */
  waiting(partition: number, delta: 1 | -1): void {
    const n = (this.#waiting.get(partition) ?? 0) + delta;
    if (n === 0) this.#waiting.delete(partition);
    else this.#waiting.set(partition, n);
  }

  /**
   * The topic was deleted: nothing owed will be appended, and the shared log may retire the
   * entries (its deletion entry keeps a replay from giving them to a new topic of the name).
   */
  forgetAll(): void {
    for (const runs of this.#runs.values()) for (const run of runs) run.source.spilled();
    this.#runs.clear();
    this.#ends.clear();
  }
}
