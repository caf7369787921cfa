/**
 * Walks RecordBatch v2 batches and their records in place, without an object per batch, record or
 * header: after `nextBatch()` the batch fields describe the current batch; after `nextRecord()`
 * the record fields describe the current record; after `nextHeader()` the header fields describe
 * the current header. Keys, values and header parts are offsets into `buffer` (start, end; -1 for
 * null), with views made only on request.
 *
 *   const c = new RecordBatchCursor(records);
 *   while (c.nextBatch()) {
 *     if (c.compression !== Compression.NONE) { keepOpaque(c.batchStart, c.batchEnd); continue; }
 *     while (c.nextRecord()) {
 *       use(c.offset, c.timestamp, c.value());
 *       while (c.nextHeader()) useHeader(c.headerKeyStart, c.headerKeyEnd);
 *     }
 *   }
 *
 * The cursor checks the framing it relies on (the whole batch through checkRecordBatch, CRC
 * included, when it enters it) and throws ConchError(INVALID_BATCH) on bytes that do not hold
 * together. A compressed batch yields no records: its records stay opaque.
 */
import { ConchError, ErrorCode } from "../errors.js";
import { readU32 } from "../u64.js";
import {
  ATTRIBUTES_AT,
  BASE_SEQUENCE_AT,
  BASE_TIMESTAMP_AT,
  CONTROL_BIT,
  checkRecordBatch,
  compressionOf,
  LEADER_EPOCH_AT,
  MAX_TIMESTAMP_AT,
  PRODUCER_EPOCH_AT,
  PRODUCER_ID_AT,
  RECORDS_AT,
  RECORDS_COUNT_AT,
  readInt64,
  readVarint,
  recordBatchStatusMessage,
  skipVarint,
  TIMESTAMP_TYPE_BIT,
  TRANSACTIONAL_BIT,
  varintEnd,
} from "./record-batch.js";

/** A varlong's value; the record was already walked by checkRecordBatch, so it is well formed. */
function readVarlong(buf: Uint8Array, at: number): number {
  let u = 0;
  let shift = 0;
  for (;;) {
    const byte = buf[at++]!;
    u += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) break;
  }
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

export class RecordBatchCursor {
  #buf: Buffer = Buffer.alloc(0);
  #end = 0;
  #maxBatchBytes = Number.MAX_SAFE_INTEGER;
  #nextBatchAt = 0;
  #recordsLeft = 0;
  #nextRecordAt = 0;
  #headersLeft = 0;
  #nextHeaderAt = 0;
  /** Where the current record's first header starts, for `rewindHeaders`. */
  #headersAt = 0;

  // The current batch.
  batchStart = 0;
  batchEnd = 0;
  baseOffset = 0;
  partitionLeaderEpoch = 0;
  attributes = 0;
  /** Compression codec, 0-4 (Compression). */
  compression = 0;
  baseTimestamp = 0;
  maxTimestamp = 0;
  producerId = -1;
  producerEpoch = -1;
  baseSequence = -1;
  recordCount = 0;

  // The current record.
  offset = -1;
  timestamp = 0;
  keyStart = -1;
  keyEnd = -1;
  valueStart = -1;
  valueEnd = -1;
  headerCount = 0;

  // The current header.
  headerKeyStart = 0;
  headerKeyEnd = 0;
  headerValueStart = -1;
  headerValueEnd = -1;

  constructor(buf?: Buffer, start = 0, end?: number, maxBatchBytes?: number) {
    if (buf) this.reset(buf, start, end, maxBatchBytes);
  }

  /** Points the cursor at whole batches in buf[start, end). */
  reset(buf: Buffer, start = 0, end = buf.length, maxBatchBytes = Number.MAX_SAFE_INTEGER): this {
    this.#buf = buf;
    this.#end = Math.min(end, buf.length);
    this.#maxBatchBytes = maxBatchBytes;
    this.#nextBatchAt = start;
    this.#recordsLeft = 0;
    this.#headersLeft = 0;
    return this;
  }

  get buffer(): Buffer {
    return this.#buf;
  }

  get timestampType(): 0 | 1 {
    return (this.attributes & TIMESTAMP_TYPE_BIT) === 0 ? 0 : 1;
  }

  get isTransactional(): boolean {
    return (this.attributes & TRANSACTIONAL_BIT) !== 0;
  }

  get isControl(): boolean {
    return (this.attributes & CONTROL_BIT) !== 0;
  }

  /** Enters the next batch, checking all of it; false when there is none. */
  nextBatch(): boolean {
    const at = this.#nextBatchAt;
    if (at >= this.#end) return false;
    const buf = this.#buf;
    const size = checkRecordBatch(buf, at, this.#end, this.#maxBatchBytes);
    if (size < 0) {
      throw new ConchError(ErrorCode.INVALID_BATCH, `${recordBatchStatusMessage(size)} at byte ${at}`);
    }
    this.batchStart = at;
    this.batchEnd = at + size;
    this.#nextBatchAt = at + size;
    this.baseOffset = readInt64(buf, at);
    this.partitionLeaderEpoch = readU32(buf, at + LEADER_EPOCH_AT) | 0;
    this.attributes = (buf[at + ATTRIBUTES_AT]! << 8) | buf[at + ATTRIBUTES_AT + 1]!;
    this.compression = compressionOf(this.attributes);
    this.baseTimestamp = readInt64(buf, at + BASE_TIMESTAMP_AT);
    this.maxTimestamp = readInt64(buf, at + MAX_TIMESTAMP_AT);
    this.producerId = readInt64(buf, at + PRODUCER_ID_AT);
    this.producerEpoch =
      ((buf[at + PRODUCER_EPOCH_AT]! << 24) | (buf[at + PRODUCER_EPOCH_AT + 1]! << 16)) >> 16;
    this.baseSequence = readU32(buf, at + BASE_SEQUENCE_AT) | 0;
    this.recordCount = readU32(buf, at + RECORDS_COUNT_AT) | 0;
    this.#recordsLeft = this.compression === 0 ? this.recordCount : 0;
    this.#nextRecordAt = at + RECORDS_AT;
    this.#headersLeft = 0;
    return true;
  }

  /**
   * Advances to the current batch's next record; false at its end (at once for a compressed
   * batch). The batch was checked whole on entry, so the reads here need no bounds of their own.
   */
  nextRecord(): boolean {
    if (this.#recordsLeft === 0) return false;
    const buf = this.#buf;
    const end = this.batchEnd;
    const length = readVarint(buf, this.#nextRecordAt, end);
    const recordEnd = varintEnd + length;
    let p = varintEnd + 1; // past attributes
    const timestampDelta = readVarlong(buf, p);
    skipVarint(buf, p, end, 10);
    const offsetDelta = readVarint(buf, varintEnd, end);
    p = varintEnd;
    const keyLength = readVarint(buf, p, end);
    this.keyStart = keyLength < 0 ? -1 : varintEnd;
    this.keyEnd = keyLength < 0 ? -1 : varintEnd + keyLength;
    p = varintEnd + Math.max(keyLength, 0);
    const valueLength = readVarint(buf, p, end);
    this.valueStart = valueLength < 0 ? -1 : varintEnd;
    this.valueEnd = valueLength < 0 ? -1 : varintEnd + valueLength;
    p = varintEnd + Math.max(valueLength, 0);
    this.headerCount = readVarint(buf, p, end);
    this.#headersLeft = this.headerCount;
    this.#nextHeaderAt = varintEnd;
    this.#headersAt = varintEnd;
    this.offset = this.baseOffset + offsetDelta;
    this.timestamp = this.baseTimestamp + timestampDelta;
    this.#nextRecordAt = recordEnd;
    this.#recordsLeft--;
    return true;
  }

  /** Advances to the current record's next header; false after the last. */
  nextHeader(): boolean {
    if (this.#headersLeft === 0) return false;
    const buf = this.#buf;
    const keyLength = readVarint(buf, this.#nextHeaderAt, this.batchEnd);
    this.headerKeyStart = varintEnd;
    this.headerKeyEnd = varintEnd + keyLength;
    const valueLength = readVarint(buf, this.headerKeyEnd, this.batchEnd);
    this.headerValueStart = valueLength < 0 ? -1 : varintEnd;
    this.headerValueEnd = valueLength < 0 ? -1 : varintEnd + valueLength;
    this.#nextHeaderAt = varintEnd + Math.max(valueLength, 0);
    this.#headersLeft--;
    return true;
  }

  /** Goes back before the current record's first header, so that they can be walked again. */
  rewindHeaders(): void {
    this.#headersLeft = this.headerCount;
    this.#nextHeaderAt = this.#headersAt;
  }

  /** A view of the current record's key, or null. */
  key(): Buffer | null {
    return this.keyStart < 0 ? null : this.#buf.subarray(this.keyStart, this.keyEnd);
  }

  /** A view of the current record's value, or null. */
  value(): Buffer | null {
    return this.valueStart < 0 ? null : this.#buf.subarray(this.valueStart, this.valueEnd);
  }

  /** The current header's key as a string (header keys are UTF-8 strings). */
  headerKey(): string {
    return this.#buf.toString("utf8", this.headerKeyStart, this.headerKeyEnd);
  }

  /** A view of the current header's value, or null. */
  headerValue(): Buffer | null {
    return this.headerValueStart < 0 ? null : this.#buf.subarray(this.headerValueStart, this.headerValueEnd);
  }
}
