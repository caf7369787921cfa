/**
 * What a partition log counts, as plain fields bumped once per append, read, fsync, roll or pass
 * (never per record) and read by the metrics exporter at scrape time. Totals since the log was
 * opened; a restart starts them at zero, as Prometheus counters expect.
 */
import { batchBaseOffset, batchLastOffset, recordSize } from "../format/batch-header.js";
import { BucketCounts, GROUP_COMMIT_BOUNDS, LATENCY_SECONDS_BOUNDS } from "./bucket-counts.js";
import { ErrorCounts } from "./error-counts.js";

export class LogStats {
  /** False when the broker runs with metrics off: nothing below is counted but `errors`. */
  readonly counting: boolean;
  /** Appends accepted (one per produce of this partition), their bytes and records. */
  appends = 0;
  bytesIn = 0;
  messagesIn = 0;
  /** Appends that failed after being accepted (a write or fsync error) and fetches that failed. */
  readonly errors = new ErrorCounts();
  /** Fetches answered with data or empty, their bytes and the records from the asked offset on. */
  fetches = 0;
  bytesOut = 0;
  messagesOut = 0;
  /** Seconds from append to acknowledgment (written, or fsynced when it waits for durability). */
  readonly appendSeconds = new BucketCounts(LATENCY_SECONDS_BOUNDS);
  /** Seconds from a fetch's arrival to its answer, long-poll wait included. */
  readonly fetchSeconds = new BucketCounts(LATENCY_SECONDS_BOUNDS);
  /** Seconds per group-commit fsync. */
  readonly fsyncSeconds = new BucketCounts(LATENCY_SECONDS_BOUNDS);
  /** Appends acknowledged per fsync. */
  readonly groupCommitAppends = new BucketCounts(GROUP_COMMIT_BOUNDS);
  segmentsRolled = 0;
  segmentsDeleted = 0;
  compactionPasses = 0;
  compactionRecordsRemoved = 0;
  compactionBytesRemoved = 0;

  constructor(counting = true) {
    this.counting = counting;
  }

  /**
   * Counts a fetch answered with `records` (whole batches) for `offset`, which arrived at
   * `startedAt` (performance.now()). Messages are the offsets delivered from `offset` on: a walk
   * over the batch headers, not the records.
   */
  fetched(offset: number, records: Uint8Array, startedAt: number): void {
    if (!this.counting) return;
    this.fetches++;
    this.fetchSeconds.observe((performance.now() - startedAt) / 1000);
    const n = records.length;
    if (n === 0) return;
    this.bytesOut += n;
    let last = 0;
    for (let at = 0; at < n; at += recordSize(records, at)) last = at;
    this.messagesOut += batchLastOffset(records, last) + 1 - Math.max(offset, batchBaseOffset(records, 0));
  }
}
