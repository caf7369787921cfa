/**
 * Stored Conch batches as Kafka batches (batch-conversion.ts): the records are walked in place
 * (RecordCursor) and copied from its positions into a Kafka batch (RecordBatchBuilder.addFrom),
 * one Kafka batch per Conch batch with the same base offset, so offsets are the same numbers. No
 * object per record. A record with no key is read as a null key.
 */
import { RecordCursor } from "../../format/record-cursor.js";
import { RecordBatchBuilder } from "../protocol/record-batch-builder.js";

export class ConchToKafka {
  readonly #cursor = new RecordCursor();
  readonly #builder = new RecordBatchBuilder();
  readonly #batches: Buffer[] = [];

  convert(stored: Buffer): Buffer {
    const c = this.#cursor.reset(stored);
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
      const noKey = c.keyEnd === c.keyStart;
      b.addFrom(c.timestampMs, buf, noKey ? -1 : c.keyStart, c.keyEnd, c.valueStart, c.valueEnd);
    }
    if (b.count > 0) batches.push(b.finish({ baseOffset: base }));
    const out = batches.length === 1 ? batches[0]! : Buffer.concat(batches);
    batches.length = 0;
    return out;
  }
}
