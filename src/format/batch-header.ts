/**
 * Reading and stamping a stored batch's header fields in place. These trust that the batch at `at`
 * was checked by `checkBatch` (validate.ts), except `walkableBatchSize`, which is how a reader of
 * stored bytes checks a header before it trusts it; they never allocate.
 */
import {
  ATTRIBUTES_AT,
  BATCH_META_SIZE,
  BATCH_RECORDS_AT,
  COUNT_AT,
  HEADER_SIZE,
  KAFKA_RECORD_BATCH_PAYLOAD,
  KEY_SIZE_AT,
  MAGIC,
  MAX_OFFSET,
  MIN_BATCH_SIZE,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
  TIMESTAMP_AT,
} from "./layout.js";
import { readTimestampMs } from "./timestamp.js";
import { readU16, readU32, readU64, writeU64 } from "./u64.js";

/** Total bytes of the record (batch) at `at`: header + key (metadata) + payload. */
export function recordSize(buf: Uint8Array, at: number): number {
  return HEADER_SIZE + readU32(buf, at + KEY_SIZE_AT) + readU32(buf, at + PAYLOAD_SIZE_AT);
}

/**
 * The offset after the last whole batch in records[from, to) (a read returns whole batches only),
 * or -1 when it holds none.
 */
export function offsetAfter(records: Uint8Array, from = 0, to = records.length): number {
  let at = from;
  let next = -1;
  while (to - at >= BATCH_RECORDS_AT) {
    const size = recordSize(records, at);
    if (size > to - at) break;
    next = batchLastOffset(records, at) + 1;
    at += size;
  }
  return next;
}

/**
 * The size of the batch at `at` when its header can be walked (the magic byte, version 1 metadata,
 * at least one record, room for one), else -1: what a reader of stored batches checks before it
 * trusts a header's sizes to find the next batch. Needs HEADER_SIZE bytes at `at`; reads no others.
 */
export function walkableBatchSize(buf: Uint8Array, at: number): number {
  if (buf[at] !== MAGIC || readU32(buf, at + KEY_SIZE_AT) !== BATCH_META_SIZE) return -1;
  if (readU32(buf, at + COUNT_AT) === 0) return -1;
  const size = recordSize(buf, at);
  return size < MIN_BATCH_SIZE ? -1 : size;
}

export function batchBaseOffset(buf: Uint8Array, at: number): number {
  return readU64(buf, at + OFFSET_AT);
}

export function batchCount(buf: Uint8Array, at: number): number {
  return readU32(buf, at + COUNT_AT);
}

/** The offset of the batch's last inner record. */
export function batchLastOffset(buf: Uint8Array, at: number): number {
  return readU64(buf, at + OFFSET_AT) + readU32(buf, at + COUNT_AT) - 1;
}

/** The batch's timestamp (the largest of its records'), in milliseconds. */
export function batchTimestampMs(buf: Uint8Array, at: number): number {
  return readTimestampMs(buf, at + TIMESTAMP_AT);
}

/**
 * Writes the broker-assigned base offset. The CRC does not cover this field. An offset that is not an
 * integer in 0..2^53 - 1 would be written as garbage (or as a value checkBatch rejects), so it throws.
 * A stored Kafka batch (attribute bit 4) gets it in its Kafka header as well.
 */
export function stampBaseOffset(buf: Uint8Array, at: number, baseOffset: number): void {
  if (!Number.isInteger(baseOffset) || baseOffset < 0 || baseOffset > MAX_OFFSET) {
    throw new RangeError(`base offset ${baseOffset} is not an integer in 0..2^53-1`);
  }
  writeU64(buf, at + OFFSET_AT, baseOffset);
  // A stored Kafka batch carries its base offset in its own header too, also outside its CRC.
  if (readU16(buf, at + ATTRIBUTES_AT) === KAFKA_RECORD_BATCH_PAYLOAD)
    writeU64(buf, at + BATCH_RECORDS_AT, baseOffset);
}
