/**
 * Walks the inner records of stored batches without creating an object per record: after `next()`
 * returns true, the cursor's fields describe the current record, read in place. `key()` and
 * `value()` return views only when asked for.
 *
 *   const c = new RecordCursor(fetched);
 *   while (c.next()) use(c.offset, c.timestampMs, c.value());
 */
import { ConchError, ErrorCode } from "./errors.js";
import { BATCH_RECORDS_AT, COUNT_AT, HEADER_SIZE, KEY_SIZE_AT, MAGIC, OFFSET_AT, PAYLOAD_SIZE_AT, TIMESTAMP_AT } from "./layout.js";
import { readTimestampMs } from "./timestamp.js";
import { readU32, readU64 } from "./u64.js";

export class RecordCursor {
  #buf: Buffer = Buffer.alloc(0);
  #end = 0;
  /** Start of the next batch to enter. */
  #nextBatch = 0;
  /** End of the current batch's records. */
  #batchEnd = 0;
  /** Start of the next inner record in the current batch. */
  #next = 0;
  #recordAt = -1;

  /** Base offset of the current record's batch. */
  baseOffset = 0;
  /** Absolute offset of the current record. */
  offset = -1;
  keyStart = 0;
  keyEnd = 0;
  valueStart = 0;
  valueEnd = 0;

  constructor(buf?: Buffer, start = 0, end?: number) {
    if (buf) this.reset(buf, start, end);
  }

  /** Points the cursor at a new run of whole batches, buf[start, end). */
  reset(buf: Buffer, start = 0, end = buf.length): this {
    this.#buf = buf;
    this.#end = end;
    this.#nextBatch = start;
    this.#batchEnd = start;
    this.#next = start;
    this.#recordAt = -1;
    this.offset = -1;
    return this;
  }

  /**
   * Advances to the next record; false at the end. Throws INVALID_BATCH on framing that does not
   * hold together (a well-behaved broker never sends it).
   */
  next(): boolean {
    const buf = this.#buf;
    while (this.#next >= this.#batchEnd) {
      const at = this.#nextBatch;
      if (at >= this.#end) return false;
      if (this.#end - at < BATCH_RECORDS_AT || buf[at] !== MAGIC) throw malformed(at);
      const size = HEADER_SIZE + readU32(buf, at + KEY_SIZE_AT) + readU32(buf, at + PAYLOAD_SIZE_AT);
      if (size > this.#end - at) throw malformed(at);
      this.baseOffset = readU64(buf, at + OFFSET_AT);
      this.#next = at + HEADER_SIZE + readU32(buf, at + KEY_SIZE_AT);
      this.#batchEnd = at + size;
      this.#nextBatch = at + size;
    }
    const p = this.#next;
    if (this.#batchEnd - p < HEADER_SIZE || buf[p] !== MAGIC || readU32(buf, p + COUNT_AT) !== 1) {
      throw malformed(p);
    }
    const keySize = readU32(buf, p + KEY_SIZE_AT);
    const valueSize = readU32(buf, p + PAYLOAD_SIZE_AT);
    const end = p + HEADER_SIZE + keySize + valueSize;
    if (end > this.#batchEnd) throw malformed(p);
    this.#recordAt = p;
    this.offset = this.baseOffset + readU32(buf, p + OFFSET_AT + 4);
    this.keyStart = p + HEADER_SIZE;
    this.keyEnd = this.keyStart + keySize;
    this.valueStart = this.keyEnd;
    this.valueEnd = end;
    this.#next = end;
    return true;
  }

  /** The current record's timestamp in milliseconds. */
  get timestampMs(): number {
    return readTimestampMs(this.#buf, this.#recordAt + TIMESTAMP_AT);
  }

  /** The buffer the cursor reads; with keyStart..valueEnd, for callers that copy bytes themselves. */
  get buffer(): Buffer {
    return this.#buf;
  }

  /** A view of the current record's key, or null when it has none. */
  key(): Buffer | null {
    return this.keyEnd === this.keyStart ? null : this.#buf.subarray(this.keyStart, this.keyEnd);
  }

  /** A view of the current record's value. */
  value(): Buffer {
    return this.#buf.subarray(this.valueStart, this.valueEnd);
  }
}

function malformed(at: number): ConchError {
  return new ConchError(ErrorCode.INVALID_BATCH, `malformed batch data at byte ${at}`);
}
