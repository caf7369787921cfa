/**
 * Stored Conch batches as Kafka batches (batch-conversion.ts): the records are walked in place
 * (RecordCursor) and copied from its positions into a Kafka batch (RecordBatchBuilder.addFrom),
 * one Kafka batch per Conch batch with the same base offset, so offsets are the same numbers. No
 * object per record. Null keys and values stay null, empty ones empty, and headers are re-encoded
 * in place; a v1 record reads as its layout says (key size 0: null key; a key with an empty value:
 * a tombstone, docs/format.md). A compressed Conch batch is decompressed first (bounded by
 * `maxBatchBytes`) and written as an uncompressed Kafka batch, which every client reads.
 */
import { expandBatches } from "../../format/compressed-batch.js";
import { LARGEST_BATCH_BYTES } from "../../format/layout.js";
import { RecordCursor } from "../../format/record-cursor.js";
import { RecordBatchBuilder } from "../protocol/record-batch-builder.js";

export class ConchToKafka {
  readonly #cursor = new RecordCursor();
  readonly #builder = new RecordBatchBuilder();
  readonly #batches: Buffer[] = [];
  readonly #maxBatchBytes: number;

  constructor(maxBatchBytes = LARGEST_BATCH_BYTES) {
    this.#maxBatchBytes = maxBatchBytes;
  }

  convert(stored: Buffer): Buffer {
    const c = this.#cursor.reset(expandBatches(stored, 0, stored.length, this.#maxBatchBytes));
    const b = this.#builder;
    const batches = this.#batches;
    batches.length = 0;
    let base = -1;
    const buf = c.buffer;
    while (c.next()) {
      if (c.baseOffset !== base) {
        if (b.count > 0) batches.push(b.finish({ baseOffset: base }));
        base = c.baseOffset;
      }
      b.addFrom(
        c.timestampMs,
        buf,
        c.keyNull ? -1 : c.keyStart,
        c.keyEnd,
        c.valueNull ? -1 : c.valueStart,
        c.valueEnd,
        c.headersStart,
        c.headersEnd,
      );
    }
    if (b.count > 0) batches.push(b.finish({ baseOffset: base }));
    const out = batches.length === 1 ? batches[0]! : Buffer.concat(batches);
    batches.length = 0;
    return out;
  }
}
