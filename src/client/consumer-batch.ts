/**
 * What one fetch of one partition hands the application: the stored batches exactly as the broker
 * sent them, and a cursor that walks their records in place. A fetch starts with the batch holding
 * the requested offset, so the cursor skips the records before it; batches wholly before it are cut
 * off here, by reading batch headers only. Each batch handed on is checked against its CRC32C
 * first (unless the consumer turned that off), as the README promises: checked end to end.
 * Compressed batches are then expanded (`readable`), so cursors walk plain records with the same
 * offsets; a fetch without one costs a header read per batch and no copy.
 */

import { batchBaseOffset, batchLastOffset, recordSize, walkableBatchSize } from "../format/batch-header.js";
import { expandBatches } from "../format/compressed-batch.js";
import { batchCrcMatches } from "../format/crc.js";
import { ConchError } from "../format/errors.js";
import { BATCH_RECORDS_AT, LARGEST_BATCH_BYTES } from "../format/layout.js";
import { RecordCursor } from "../format/record-cursor.js";
import { CorruptBatchError } from "./corrupt-batch-error.js";

/** A RecordCursor that starts at a given offset, skipping the records before it. */
export class BatchCursor extends RecordCursor {
  #from = 0;

  /** Points the cursor at `records`, yielding only records at or after `fromOffset`. */
  start(records: Buffer, fromOffset: number): this {
    this.reset(records);
    this.#from = fromOffset;
    return this;
  }

  override next(): boolean {
    while (super.next()) if (this.offset >= this.#from) return true;
    return false;
  }
}

/** The partition a batch came from: its fetch state, which iterators update as records are consumed. */
export interface BatchSource {
  readonly topic: string;
  readonly partition: number;
  /** Bumped by every seek: batches of an older epoch are stale. */
  readonly epoch: number;
  /** The next offset the application will see. */
  position: number;
  /** Paused by the application: its batches wait (BatchQueue) until it is resumed. */
  readonly paused: boolean;
}

export class ConsumerBatch {
  readonly topic: string;
  readonly partition: number;
  /** Whole stored batches; records below `fromOffset` in the first one are not the application's. */
  readonly records: Buffer;
  /** `records` with compressed batches expanded: what cursors walk. `records` itself when none is. */
  readonly readable: Buffer;
  /** The first offset this fetch was for. */
  readonly fromOffset: number;
  /** The offset after the last record here: where the next fetch starts. */
  readonly nextOffset: number;
  /** The partition's high watermark when fetched: `highWatermark - nextOffset` is the lag. */
  readonly highWatermark: number;
  readonly source: BatchSource;
  readonly epoch: number;

  constructor(
    source: BatchSource,
    records: Buffer,
    fromOffset: number,
    nextOffset: number,
    highWatermark: number,
    readable: Buffer = records,
  ) {
    this.topic = source.topic;
    this.partition = source.partition;
    this.source = source;
    this.epoch = source.epoch;
    this.records = records;
    this.readable = readable;
    this.fromOffset = fromOffset;
    this.nextOffset = nextOffset;
    this.highWatermark = highWatermark;
  }

  /** Whether a seek (or a change of assignment) made this batch obsolete. */
  get stale(): boolean {
    return this.epoch !== this.source.epoch;
  }

  /**
   * What is left of this batch for the application from `position` on (the same bytes), or null
   * when nothing is: an iterator that stops part-way through puts the rest back in the queue.
   */
  rest(position: number): ConsumerBatch | null {
    if (position >= this.nextOffset) return null;
    return new ConsumerBatch(
      this.source,
      this.records,
      position,
      this.nextOffset,
      this.highWatermark,
      this.readable,
    );
  }

  /** A cursor over the records from `fromOffset` on; pass one to reuse it. */
  cursor(into: BatchCursor = new BatchCursor()): BatchCursor {
    return into.start(this.readable, this.fromOffset);
  }

  /**
   * The part of a fetch response at or after `fromOffset`: whole batches only, from the first whose
   * last offset reaches `fromOffset`. Null when there is none. Batches up to a damaged one (see
   * `damage`) are handed on; a damaged first one is a CorruptBatchError naming its offset, and so
   * is a compressed one that does not decompress within `maxBatchBytes`.
   */
  static slice(
    source: BatchSource,
    records: Buffer,
    fromOffset: number,
    highWatermark: number,
    checkCrcs: boolean,
    maxBatchBytes: number = LARGEST_BATCH_BYTES,
  ): ConsumerBatch | null {
    let at = 0;
    let start = -1;
    let next = fromOffset;
    while (records.length - at >= BATCH_RECORDS_AT) {
      const problem = damage(records, at, fromOffset, start >= 0 ? next : -1, checkCrcs);
      if (problem !== null) {
        // The good batches before it go on; the next fetch starts at the damaged one and stops there.
        if (start >= 0) break;
        throw new CorruptBatchError(source.topic, source.partition, next, problem);
      }
      const size = recordSize(records, at);
      // A cut-off tail batch is fetched again whole.
      if (size > records.length - at) break;
      const last = batchLastOffset(records, at);
      if (last >= fromOffset) {
        if (start < 0) start = at;
        next = last + 1;
      }
      at += size;
    }
    if (start < 0) return null;
    const whole = records.subarray(start, at);
    let readable: Buffer;
    try {
      readable = expandBatches(whole, 0, whole.length, maxBatchBytes);
    } catch (err) {
      if (!(err instanceof ConchError)) throw err;
      throw new CorruptBatchError(source.topic, source.partition, fromOffset, err.message);
    }
    return new ConsumerBatch(source, whole, fromOffset, next, highWatermark, readable);
  }
}

/**
 * What is wrong with the batch at `at` of a response, or null: a header that cannot be walked, a
 * first batch cut off (the broker sends whole batches), one that does not follow the batch before
 * it (`after`, -1 for the first), or, with `checkCrcs`, a CRC32C that does not match a batch at or
 * past `fromOffset` (the ones before it are skipped unread).
 */
function damage(
  records: Buffer,
  at: number,
  fromOffset: number,
  after: number,
  checkCrcs: boolean,
): string | null {
  const size = walkableBatchSize(records, at);
  if (size < 0) return `no batch header at byte ${at} of the response`;
  if (size > records.length - at) return after < 0 ? `the batch at byte ${at} runs past the response` : null;
  if (batchLastOffset(records, at) < fromOffset) return null;
  if (after >= 0 && batchBaseOffset(records, at) < after)
    return `the batch at byte ${at} does not follow the one before it`;
  if (checkCrcs && !batchCrcMatches(records, at, at + size))
    return `CRC32C mismatch in the batch at byte ${at} of the response`;
  return null;
}

export type { ConsumerMessage } from "./consumer-message.js";
