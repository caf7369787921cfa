/**
 * Walks the inner records of stored batches without creating an object per record: after `next()`
 * returns true, the cursor's fields describe the current record, read in place. `key()` and
 * `value()` return views only when asked for, and `headers()` a HeaderCursor over its headers.
 * Both layouts (v1 and extended, docs/format.md) read with one meaning: `keyNull`, `valueNull`.
 *
 *   const c = new RecordCursor(fetched);
 *   while (c.next()) use(c.offset, c.timestampMs, c.value());
 *
 * The cursor does not check CRCs (the bytes were checked when stored, and checkBatch is there for
 * callers that want it), but it checks every piece of framing it relies on, so that bytes that do
 * not hold together throw INVALID_BATCH instead of yielding records read from the wrong place.
 */
import { ConchError, ErrorCode } from "./errors.js";
import {
  ATTRIBUTES_AT,
  BATCH_META_SIZE,
  BATCH_RECORDS_AT,
  COUNT_AT,
  EXTENDED_RECORDS,
  HEADER_SIZE,
  KEY_SIZE_AT,
  MAGIC,
  MAX_OFFSET,
  NULL_SIZE,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
  TIMESTAMP_AT,
} from "./layout.js";
import { HeaderCursor } from "./record-headers.js";
import { readTimestampMs } from "./timestamp.js";
import { readU16, readU32, readU64Safe } from "./u64.js";

export class RecordCursor {
  #buf: Buffer = Buffer.alloc(0);
  #end = 0;
  /** Start of the current batch (for error messages). */
  #batchAt = 0;
  /** Start of the next batch to enter. */
  #nextBatch = 0;
  /** End of the current batch's records. */
  #batchEnd = 0;
  /** Start of the next inner record in the current batch. */
  #next = 0;
  /** Inner records of the current batch not yet read, per its header's count. */
  #remaining = 0;
  /** The offset delta the next inner record must carry. */
  #delta = 0;
  /** Whether the current batch's inner records have the extended layout. */
  #extended = false;

  /** Base offset of the current record's batch. */
  baseOffset = 0;
  /** Absolute offset of the current record. */
  offset = -1;
  /** The current record's first byte; key, value and headers block follow its 29-byte header. */
  recordStart = -1;
  keyStart = 0;
  keyEnd = 0;
  valueStart = 0;
  valueEnd = 0;
  // An extended record's null flags; a v1 record's follow from its sizes (see keyNull, valueNull).
  #keyNull = false;
  #valueNull = false;

  constructor(buf?: Buffer, start = 0, end?: number) {
    if (buf) this.reset(buf, start, end);
  }

  /** Points the cursor at a new run of whole batches, buf[start, end) (end is capped at buf.length). */
  reset(buf: Buffer, start = 0, end = buf.length): this {
    this.#buf = buf;
    this.#end = Math.min(end, buf.length);
    this.#batchAt = start;
    this.#nextBatch = start;
    this.#batchEnd = start;
    this.#next = start;
    this.#remaining = 0;
    this.#delta = 0;
    this.recordStart = -1;
    this.baseOffset = 0;
    this.offset = -1;
    return this;
  }

  /**
   * Advances to the next record; false at the end. Throws INVALID_BATCH on framing that does not
   * hold together (a well-behaved broker never sends it): a batch cut short, a wrong magic or
   * metadata size, a base or last offset past 2^53 - 1, an inner record that is not framed as one or
   * carries the wrong offset delta, or a record count that disagrees with the inner records.
   */
  next(): boolean {
    const buf = this.#buf;
    while (this.#next >= this.#batchEnd) {
      if (this.#remaining !== 0) throw malformed(this.#batchAt); // fewer inner records than its count
      const at = this.#nextBatch;
      if (at >= this.#end) return false;
      if (
        this.#end - at < BATCH_RECORDS_AT ||
        buf[at] !== MAGIC ||
        readU32(buf, at + KEY_SIZE_AT) !== BATCH_META_SIZE
      ) {
        throw malformed(at);
      }
      const size = BATCH_RECORDS_AT + readU32(buf, at + PAYLOAD_SIZE_AT);
      const count = readU32(buf, at + COUNT_AT);
      const baseOffset = readU64Safe(buf, at + OFFSET_AT);
      const attributes = readU16(buf, at + ATTRIBUTES_AT);
      if (
        size > this.#end - at ||
        count === 0 ||
        baseOffset < 0 ||
        baseOffset > MAX_OFFSET - (count - 1) ||
        (attributes !== 0 && attributes !== EXTENDED_RECORDS)
      ) {
        throw malformed(at);
      }
      this.#extended = attributes !== 0;
      this.baseOffset = baseOffset;
      this.#batchAt = at;
      this.#remaining = count;
      this.#delta = 0;
      this.#next = at + BATCH_RECORDS_AT;
      this.#batchEnd = at + size;
      this.#nextBatch = at + size;
    }
    const p = this.#next;
    if (this.#remaining === 0 || this.#batchEnd - p < HEADER_SIZE) throw malformed(p); // more records than its count
    const extended = this.#extended;
    const innerCount = readU32(buf, p + COUNT_AT);
    if (
      buf[p] !== MAGIC ||
      (!extended && innerCount !== 1) ||
      readU32(buf, p + OFFSET_AT) !== 0 ||
      readU32(buf, p + OFFSET_AT + 4) !== this.#delta
    ) {
      throw malformed(p);
    }
    let keySize = readU32(buf, p + KEY_SIZE_AT);
    let valueSize = readU32(buf, p + PAYLOAD_SIZE_AT);
    let end = p + HEADER_SIZE + keySize + valueSize;
    if (extended) {
      this.#keyNull = keySize === NULL_SIZE;
      if (this.#keyNull) keySize = 0;
      this.#valueNull = valueSize === NULL_SIZE;
      if (this.#valueNull) valueSize = 0;
      end = p + HEADER_SIZE + keySize + valueSize + innerCount;
    }
    if (end > this.#batchEnd) throw malformed(p);
    this.recordStart = p;
    this.offset = this.baseOffset + this.#delta;
    this.#delta++;
    this.#remaining--;
    this.keyStart = p + HEADER_SIZE;
    this.keyEnd = this.keyStart + keySize;
    this.valueStart = this.keyEnd;
    this.valueEnd = this.keyEnd + valueSize;
    this.#next = end;
    return true;
  }

  // Derived when asked, so that the walk itself sets no more fields than it did for v1 records.

  /** The key is null (keyStart = keyEnd); an empty key is not. v1: key size 0 is no key. */
  get keyNull(): boolean {
    return this.#extended ? this.#keyNull : this.keyEnd === this.keyStart;
  }

  /** The value is null (valueStart = valueEnd). v1: a key with an empty value, the tombstone. */
  get valueNull(): boolean {
    return this.#extended
      ? this.#valueNull
      : this.keyEnd !== this.keyStart && this.valueEnd === this.valueStart;
  }

  /** The current record's headers block (empty when it has none): after the value, to its end. */
  get headersStart(): number {
    return this.valueEnd;
  }

  get headersEnd(): number {
    return this.#next;
  }

  /** The end of the current record. */
  get recordEnd(): number {
    return this.#next;
  }

  /** The current record's timestamp in milliseconds (valid once `next()` has returned true). */
  get timestampMs(): number {
    return readTimestampMs(this.#buf, this.recordStart + TIMESTAMP_AT);
  }

  /** Whether the current record is a tombstone: it has a key and a null value. */
  get isTombstone(): boolean {
    return !this.keyNull && this.valueNull;
  }

  /** Whether the current record has headers. */
  get hasHeaders(): boolean {
    return this.headersEnd !== this.headersStart;
  }

  /** A HeaderCursor over the current record's headers; pass one to reuse it. */
  headers(into: HeaderCursor = new HeaderCursor()): HeaderCursor {
    return into.reset(this.#buf, this.headersStart, this.headersEnd);
  }

  /** The buffer the cursor reads; with keyStart..valueEnd, for callers that copy bytes themselves. */
  get buffer(): Buffer {
    return this.#buf;
  }

  /** A view of the current record's key, or null when it has none. */
  key(): Buffer | null {
    return this.keyNull ? null : this.#buf.subarray(this.keyStart, this.keyEnd);
  }

  /** A view of the current record's value; empty when the value is null (see `valueNull`). */
  value(): Buffer {
    return this.#buf.subarray(this.valueStart, this.valueEnd);
  }
}

function malformed(at: number): ConchError {
  return new ConchError(ErrorCode.INVALID_BATCH, `malformed batch data at byte ${at}`);
}
