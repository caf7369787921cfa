/**
 * The records of the Kafka batch a RecordBatchCursor is in, added to a BatchBuilder from the
 * cursor's positions (addRanges): no object per record, null and empty keys and values kept apart,
 * headers re-encoded in place (KafkaHeadersBlock). Shared by the Kafka listener's produce fallback
 * (records without a timestamp) and by the readers that hand stored Kafka batches to native clients.
 */
import type { BatchBuilder } from "../batch-builder.js";
import { MAX_TIMESTAMP_MS } from "../layout.js";
import { KafkaHeadersBlock } from "./kafka-headers-block.js";
import type { RecordBatchCursor } from "./record-batch-cursor.js";

/** A producer's "no timestamp". */
export const NO_TIMESTAMP = -1;

export class KafkaRecordsToConch {
  readonly #cursor: RecordBatchCursor;
  readonly #headers: KafkaHeadersBlock;

  constructor(cursor: RecordBatchCursor) {
    this.#cursor = cursor;
    this.#headers = new KafkaHeadersBlock(cursor);
  }

  /**
   * Adds the current batch's records to `b`; a record without a timestamp takes `nowMs`. Returns
   * true, or false at the first record whose timestamp is outside 0..2^42 - 1 ms (the cursor is left
   * on it, `b` holds the records before it: the caller clears it).
   */
  addBatch(b: BatchBuilder, nowMs: number): boolean {
    const c = this.#cursor;
    const buf = c.buffer;
    while (c.nextRecord()) {
      const ts = c.timestamp === NO_TIMESTAMP ? nowMs : c.timestamp;
      if (ts < 0 || ts > MAX_TIMESTAMP_MS) return false;
      const headers = c.headerCount === 0 ? null : this.#headers;
      b.addRanges(buf, c.keyStart, c.keyEnd, c.valueStart, c.valueEnd, ts, headers);
    }
    return true;
  }
}
