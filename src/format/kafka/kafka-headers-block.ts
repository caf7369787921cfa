/**
 * The current Kafka record's headers (varint sizes, RecordBatchCursor) as Conch's headers block
 * (u32 sizes, docs/format.md), for BatchBuilder.addRanges: the headers are walked in place twice,
 * once to size the block and once to write it, with no object per record or header. Kafka header
 * keys are never null (checkRecordBatch refuses them); a null value stays null.
 */
import type { HeadersBlockSource } from "../batch-builder.js";
import { NULL_SIZE } from "../layout.js";
import { writeU32 } from "../u64.js";
import type { RecordBatchCursor } from "./record-batch-cursor.js";

/** Bytes of the block's header count, and of each size field in it. */
const SIZE_FIELD = 4;

export class KafkaHeadersBlock implements HeadersBlockSource {
  readonly #cursor: RecordBatchCursor;

  constructor(cursor: RecordBatchCursor) {
    this.#cursor = cursor;
  }

  blockSize(): number {
    const c = this.#cursor;
    if (c.headerCount === 0) return 0;
    c.rewindHeaders();
    let size = SIZE_FIELD;
    while (c.nextHeader()) {
      size += 2 * SIZE_FIELD + c.headerKeyEnd - c.headerKeyStart;
      if (c.headerValueStart >= 0) size += c.headerValueEnd - c.headerValueStart;
    }
    return size;
  }

  writeBlock(target: Buffer, at: number): number {
    const c = this.#cursor;
    const src = c.buffer;
    c.rewindHeaders();
    writeU32(target, at, c.headerCount);
    let p = at + SIZE_FIELD;
    while (c.nextHeader()) {
      writeU32(target, p, c.headerKeyEnd - c.headerKeyStart);
      p += SIZE_FIELD;
      p += src.copy(target, p, c.headerKeyStart, c.headerKeyEnd);
      if (c.headerValueStart < 0) {
        writeU32(target, p, NULL_SIZE);
        p += SIZE_FIELD;
      } else {
        writeU32(target, p, c.headerValueEnd - c.headerValueStart);
        p += SIZE_FIELD;
        p += src.copy(target, p, c.headerValueStart, c.headerValueEnd);
      }
    }
    return p - at;
  }
}
