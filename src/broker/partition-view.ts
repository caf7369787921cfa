/**
 * What describe, metadata, list-offsets and the HTTP API read of a partition without touching its
 * data: an open PartitionLog is one, and so is the summary a clean stop left for a log not opened
 * yet (clean-stop.ts). A summary holds for as long as its log stays closed, which is why a topic
 * hands out the open log the moment there is one.
 */
import type { PartitionLog } from "../storage/partition-log.js";

export interface PartitionView {
  readonly logStartOffset: number;
  readonly highWatermark: number;
  readonly logEndOffset: number;
  readonly sizeBytes: number;
  readonly segmentCount: number;
}

export class PartitionSummary implements PartitionView {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly sizeBytes: number;
  readonly segmentCount: number;

  constructor(logStartOffset: number, logEndOffset: number, sizeBytes: number, segmentCount: number) {
    this.logStartOffset = logStartOffset;
    this.logEndOffset = logEndOffset;
    this.sizeBytes = sizeBytes;
    this.segmentCount = segmentCount;
  }

  /**
   * A partition created and never opened: no directory yet, and when it opens, one empty segment.
   * Shared by every such partition (a summary never changes).
   */
  static readonly EMPTY = new PartitionSummary(0, 0, 0, 1);

  /** After a clean stop everything written was flushed: an opened log's high watermark is its end. */
  get highWatermark(): number {
    return this.logEndOffset;
  }

  /** Whether `log`, just opened, is what this summary says. */
  matches(log: PartitionLog): boolean {
    return log.logStartOffset === this.logStartOffset && log.logEndOffset === this.logEndOffset;
  }

  /** The summary of a log as its clean close left it. */
  static of(log: PartitionLog): PartitionSummary {
    return new PartitionSummary(log.logStartOffset, log.logEndOffset, log.sizeBytes, log.segmentCount);
  }
}
