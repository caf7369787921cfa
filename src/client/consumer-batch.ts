/**
 * What one fetch of one partition hands the application: the stored batches exactly as the broker
 * sent them, and a cursor that walks their records in place. A fetch starts with the batch holding
 * the requested offset, so the cursor skips the records before it; batches wholly before it are cut
 * off here, by reading batch headers only.
 */

import { batchLastOffset, recordSize } from "../format/batch-header.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { BATCH_RECORDS_AT, MAGIC } from "../format/layout.js";
import { RecordCursor } from "../format/record-cursor.js";

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
}

export class ConsumerBatch {
  readonly topic: string;
  readonly partition: number;
  /** Whole stored batches; records below `fromOffset` in the first one are not the application's. */
  readonly records: Buffer;
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
  ) {
    this.topic = source.topic;
    this.partition = source.partition;
    this.source = source;
    this.epoch = source.epoch;
    this.records = records;
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
    return new ConsumerBatch(this.source, this.records, position, this.nextOffset, this.highWatermark);
  }

  /** A cursor over the records from `fromOffset` on; pass one to reuse it. */
  cursor(into: BatchCursor = new BatchCursor()): BatchCursor {
    return into.start(this.records, this.fromOffset);
  }

  /**
   * The part of a fetch response at or after `fromOffset`: whole batches only, from the first whose
   * last offset reaches `fromOffset`. Null when there is none.
   */
  static slice(
    source: BatchSource,
    records: Buffer,
    fromOffset: number,
    highWatermark: number,
  ): ConsumerBatch | null {
    let at = 0;
    let start = -1;
    let next = fromOffset;
    while (records.length - at >= BATCH_RECORDS_AT) {
      if (records[at] !== MAGIC)
        throw new ConchError(ErrorCode.INVALID_BATCH, `fetched data has no batch at byte ${at}`);
      const size = recordSize(records, at);
      if (size > records.length - at) break; // a cut-off tail batch is fetched again whole
      const last = batchLastOffset(records, at);
      if (last >= fromOffset) {
        if (start < 0) start = at;
        next = last + 1;
      }
      at += size;
    }
    if (start < 0) return null;
    return new ConsumerBatch(source, records.subarray(start, at), fromOffset, next, highWatermark);
  }
}

/** One record as the message iterator hands it out; key and value are views of the fetched bytes. */
export interface ConsumerMessage {
  topic: string;
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer;
  /** Milliseconds since the epoch. */
  timestamp: number;
}
