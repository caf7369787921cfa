/**
 * Structural and integrity checks of batches, reading fields in place. `checkBatch` is the one
 * implementation used on ingest (produce), at recovery (scanning a segment) and by clients reading
 * fetched bytes; it returns a status number instead of throwing so a scan can tell a torn tail from a
 * good batch without exceptions.
 */
import { batchCrcMatches } from "./crc.js";
import { ConchError, ErrorCode } from "./errors.js";
import {
  ATTRIBUTES_AT,
  BATCH_META_SIZE,
  BATCH_RECORDS_AT,
  COMPRESSION_MASK,
  COMPRESSION_NONE,
  COUNT_AT,
  EXTENDED_RECORDS,
  HEADER_SIZE,
  KEY_SIZE_AT,
  KNOWN_ATTRIBUTES,
  MAGIC,
  MAX_OFFSET,
  NULL_SIZE,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
  TIMESTAMP_AT,
} from "./layout.js";
import { producerFieldsValid } from "./producer-fields.js";
import { headersBlockValid } from "./record-headers.js";
import { readU16, readU32, readU64Safe } from "./u64.js";

/** Outcomes of `checkBatch` other than success (which returns the batch's size, > 0). */
export const BatchStatus = {
  /** The bytes end before the header or before the size the header claims: a torn write. */
  TRUNCATED: -1,
  BAD_MAGIC: -2,
  /** The metadata size is not version 1's, or reserved bits are set. */
  BAD_METADATA: -3,
  /** Record count 0, or the inner records do not add up to it. */
  BAD_COUNT: -4,
  /** An inner record's framing is wrong: magic, count, offset delta, sizes or headers block. */
  BAD_RECORD: -5,
  BAD_CRC: -6,
  UNSUPPORTED_COMPRESSION: -7,
  TOO_LARGE: -8,
  /** The batch timestamp is not the largest inner timestamp. */
  BAD_TIMESTAMP: -9,
  /** The base offset, or the last offset (base + count - 1), is past 2^53 - 1. */
  BAD_OFFSET: -10,
} as const;

const statusMessages: Record<number, string> = {
  [BatchStatus.TRUNCATED]: "batch is truncated: its header claims more bytes than are present",
  [BatchStatus.BAD_MAGIC]: "wrong magic byte: not a Conch v1 batch",
  [BatchStatus.BAD_METADATA]:
    "batch metadata has the wrong size, reserved bits set or producer fields out of range",
  [BatchStatus.BAD_COUNT]: "batch record count disagrees with its inner records",
  [BatchStatus.BAD_RECORD]: "inner record framing is invalid",
  [BatchStatus.BAD_CRC]: "batch CRC32C mismatch",
  [BatchStatus.UNSUPPORTED_COMPRESSION]: "unsupported compression codec",
  [BatchStatus.TOO_LARGE]: "batch is larger than the maximum batch size",
  [BatchStatus.BAD_TIMESTAMP]: "batch timestamp is not the largest record timestamp",
  [BatchStatus.BAD_OFFSET]: "batch base offset is out of range",
};

/** A one-line description of a negative `checkBatch` result. */
export function batchStatusMessage(status: number): string {
  return statusMessages[status] ?? `unknown batch status ${status}`;
}

/**
 * Checks the batch that starts at `at` and must end at or before `end`. Returns its total size in
 * bytes when it is whole and valid, else a negative `BatchStatus`. Checks, in order: enough bytes
 * for a header, magic, metadata size, size limit, enough bytes for the claimed size, count not 0,
 * base and last offset within 2^53 - 1, attributes and producer fields, compression, every inner
 * record's framing (magic, count 1 in the v1 layout, offset delta i, timestamp not above the
 * batch's, sizes inside the payload, an extended record's headers block), that they fill the payload exactly and number `count`, that the batch timestamp
 * is one of theirs, and last the CRC. It reads nothing outside buf[at, end).
 */
export function checkBatch(buf: Uint8Array, at: number, end: number, maxBatchBytes: number): number {
  if (end - at < HEADER_SIZE) return BatchStatus.TRUNCATED;
  if (buf[at] !== MAGIC) return BatchStatus.BAD_MAGIC;
  const keySize = readU32(buf, at + KEY_SIZE_AT);
  if (keySize !== BATCH_META_SIZE) return BatchStatus.BAD_METADATA;
  const payloadSize = readU32(buf, at + PAYLOAD_SIZE_AT);
  const size = HEADER_SIZE + BATCH_META_SIZE + payloadSize;
  if (size > maxBatchBytes) return BatchStatus.TOO_LARGE;
  if (size > end - at) return BatchStatus.TRUNCATED;
  const count = readU32(buf, at + COUNT_AT);
  if (count === 0) return BatchStatus.BAD_COUNT;
  // Every record's offset (base + delta) must be an exact JavaScript number.
  const baseOffset = readU64Safe(buf, at + OFFSET_AT);
  if (baseOffset < 0 || baseOffset > MAX_OFFSET - (count - 1)) return BatchStatus.BAD_OFFSET;
  const attributes = readU16(buf, at + ATTRIBUTES_AT);
  if ((attributes & ~KNOWN_ATTRIBUTES) !== 0 || !producerFieldsValid(buf, at)) {
    return BatchStatus.BAD_METADATA;
  }
  if ((attributes & COMPRESSION_MASK) !== COMPRESSION_NONE) return BatchStatus.UNSUPPORTED_COMPRESSION;

  const payloadEnd = at + size;
  // The batch timestamp, read once: every record's is compared with it as two u32 halves.
  const batchTsHigh = readU32(buf, at + TIMESTAMP_AT);
  const batchTsLow = readU32(buf, at + TIMESTAMP_AT + 4);
  // Extended records: all-ones sizes are null (no bytes), and the count field is the headers size.
  const extended = (attributes & EXTENDED_RECORDS) !== 0;
  let p = at + BATCH_RECORDS_AT;
  let sawMaxTimestamp = false;
  for (let i = 0; i < count; i++) {
    if (payloadEnd - p < HEADER_SIZE) return BatchStatus.BAD_COUNT;
    const innerCount = readU32(buf, p + COUNT_AT);
    if (
      buf[p] !== MAGIC ||
      (!extended && innerCount !== 1) ||
      readU32(buf, p + OFFSET_AT) !== 0 ||
      readU32(buf, p + OFFSET_AT + 4) !== i
    ) {
      return BatchStatus.BAD_RECORD;
    }
    const tsHigh = readU32(buf, p + TIMESTAMP_AT);
    if (tsHigh >= batchTsHigh) {
      if (tsHigh > batchTsHigh) return BatchStatus.BAD_TIMESTAMP;
      const tsLow = readU32(buf, p + TIMESTAMP_AT + 4);
      if (tsLow > batchTsLow) return BatchStatus.BAD_TIMESTAMP;
      if (tsLow === batchTsLow) sawMaxTimestamp = true;
    }
    let keySize = readU32(buf, p + KEY_SIZE_AT);
    let valueSize = readU32(buf, p + PAYLOAD_SIZE_AT);
    if (extended) {
      if (keySize === NULL_SIZE) keySize = 0;
      if (valueSize === NULL_SIZE) valueSize = 0;
    }
    const headersSize = extended ? innerCount : 0;
    const recordSize = HEADER_SIZE + keySize + valueSize + headersSize;
    if (recordSize > payloadEnd - p) return BatchStatus.BAD_RECORD;
    p += recordSize;
    if (headersSize !== 0 && !headersBlockValid(buf, p - headersSize, p)) return BatchStatus.BAD_RECORD;
  }
  if (p !== payloadEnd) return BatchStatus.BAD_COUNT;
  if (!sawMaxTimestamp) return BatchStatus.BAD_TIMESTAMP;
  if (!batchCrcMatches(buf, at, payloadEnd)) return BatchStatus.BAD_CRC;
  return size;
}

/** What `validateBatches` found. */
export interface BatchesSummary {
  batches: number;
  records: number;
}

/**
 * Validates a buffer holding one or more whole batches (a produce request's records), throwing a
 * `ConchError` (CORRUPT_BATCH, BATCH_TOO_LARGE or INVALID_BATCH) at the first problem. Nothing is
 * modified.
 */
export function validateBatches(buf: Uint8Array, maxBatchBytes: number): BatchesSummary {
  if (buf.length === 0) throw new ConchError(ErrorCode.INVALID_BATCH, "no batches in the request");
  let at = 0;
  let batches = 0;
  let records = 0;
  while (at < buf.length) {
    const size = checkBatch(buf, at, buf.length, maxBatchBytes);
    if (size < 0) throw batchError(size, batches);
    records += readU32(buf, at + COUNT_AT);
    batches++;
    at += size;
  }
  return { batches, records };
}

/** The typed error for a negative `checkBatch` status. */
export function batchError(status: number, batchIndex: number): ConchError {
  const code =
    status === BatchStatus.BAD_CRC
      ? ErrorCode.CORRUPT_BATCH
      : status === BatchStatus.TOO_LARGE
        ? ErrorCode.BATCH_TOO_LARGE
        : ErrorCode.INVALID_BATCH;
  return new ConchError(code, `batch ${batchIndex}: ${batchStatusMessage(status)}`);
}
