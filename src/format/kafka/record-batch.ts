/**
 * Kafka's RecordBatch, magic 2 (docs/kafka.md, "RecordBatch v2"): the unit a Produce request
 * carries and a Fetch response returns.
 *
 *   offset size field
 *      0    8  base_offset int64
 *      8    4  batch_length int32            bytes after this field (total - 12)
 *     12    4  partition_leader_epoch int32
 *     16    1  magic int8                    2
 *     17    4  crc uint32                    CRC32C of bytes 21..end
 *     21    2  attributes int16              bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4,
 *                                            4 zstd), 3 timestamp type (1 = log append time),
 *                                            4 transactional, 5 control, 6 delete horizon
 *     23    4  last_offset_delta int32
 *     27    8  base_timestamp int64
 *     35    8  max_timestamp int64
 *     43    8  producer_id int64
 *     51    2  producer_epoch int16
 *     53    4  base_sequence int32
 *     57    4  records_count int32
 *     61       records (compressed as a whole when the codec is not 0)
 *
 *   record = length varint | attributes int8 | timestamp_delta varlong | offset_delta varint
 *            | key_length varint | key | value_length varint | value          (-1 length = null)
 *            | headers_count varint | headers [key_length varint | key | value_length varint | value]
 *
 * `checkRecordBatch` reads every field in place and returns a status instead of throwing, like
 * Conch's own checkBatch (src/format/validate.ts), so a scan of many batches costs no exceptions.
 */
import { crc32c } from "@node-rs/crc32";
import { readU32 } from "../u64.js";

export const BASE_OFFSET_AT = 0;
export const BATCH_LENGTH_AT = 8;
export const LEADER_EPOCH_AT = 12;
export const MAGIC_AT = 16;
export const CRC_AT = 17;
export const ATTRIBUTES_AT = 21;
export const LAST_OFFSET_DELTA_AT = 23;
export const BASE_TIMESTAMP_AT = 27;
export const MAX_TIMESTAMP_AT = 35;
export const PRODUCER_ID_AT = 43;
export const PRODUCER_EPOCH_AT = 51;
export const BASE_SEQUENCE_AT = 53;
export const RECORDS_COUNT_AT = 57;
export const RECORDS_AT = 61;
/** Bytes before batch_length's count begins: base_offset and batch_length themselves. */
export const LOG_OVERHEAD = 12;
export const RECORD_BATCH_MAGIC = 2;

export const Compression = { NONE: 0, GZIP: 1, SNAPPY: 2, LZ4: 3, ZSTD: 4 } as const;
export const COMPRESSION_MASK = 0x07;
export const TIMESTAMP_TYPE_BIT = 0x08;
export const TRANSACTIONAL_BIT = 0x10;
export const CONTROL_BIT = 0x20;
export const DELETE_HORIZON_BIT = 0x40;
/** Bits 7-15 have no meaning yet: a batch that sets them is refused rather than misread. */
const KNOWN_ATTRIBUTES = 0x7f;

/** Outcomes of `checkRecordBatch` other than success (the batch's size in bytes, > 0). */
export const RecordBatchStatus = {
  /** Fewer bytes than the header, or than the size the header claims. */
  TRUNCATED: -1,
  BAD_MAGIC: -2,
  /** batch_length smaller than a header, or larger than the limit. */
  BAD_LENGTH: -3,
  BAD_CRC: -4,
  /** Unknown attribute bits, or a codec above 4. */
  BAD_ATTRIBUTES: -5,
  /** records_count negative, zero, or not last_offset_delta + 1; or the records do not add up. */
  BAD_COUNT: -6,
  /** A record's framing: its length, a field past its end, an offset delta out of sequence. */
  BAD_RECORD: -7,
  /** A base offset that is negative or whose last offset passes 2^53 - 1. */
  BAD_OFFSET: -8,
  TOO_LARGE: -9,
} as const;

const statusMessages: Record<number, string> = {
  [RecordBatchStatus.TRUNCATED]: "record batch is truncated",
  [RecordBatchStatus.BAD_MAGIC]: "record batch magic is not 2",
  [RecordBatchStatus.BAD_LENGTH]: "record batch length is smaller than its header",
  [RecordBatchStatus.BAD_CRC]: "record batch CRC32C mismatch",
  [RecordBatchStatus.BAD_ATTRIBUTES]: "record batch attributes are unknown",
  [RecordBatchStatus.BAD_COUNT]: "record batch count disagrees with its records",
  [RecordBatchStatus.BAD_RECORD]: "record framing is invalid",
  [RecordBatchStatus.BAD_OFFSET]: "record batch offsets are out of range",
  [RecordBatchStatus.TOO_LARGE]: "record batch is larger than the maximum batch size",
};

/** A one-line description of a negative `checkRecordBatch` result. */
export function recordBatchStatusMessage(status: number): string {
  return statusMessages[status] ?? `unknown record batch status ${status}`;
}

/** The codec of a batch's attributes (0-4). */
export function compressionOf(attributes: number): number {
  return attributes & COMPRESSION_MASK;
}

/** The CRC32C a batch at buf[at, end) must carry: attributes to the end. */
export function recordBatchCrc(buf: Uint8Array, at: number, end: number): number {
  return crc32c(buf.subarray(at + ATTRIBUTES_AT, end));
}

function readInt32(buf: Uint8Array, at: number): number {
  return readU32(buf, at) | 0;
}

const TWO_32 = 0x1_0000_0000;

/** An int64 field (a timestamp, an id) as a number: exact within +-2^53, which callers check. */
export function readInt64(buf: Uint8Array, at: number): number {
  return readInt32(buf, at) * TWO_32 + readU32(buf, at + 4);
}

/**
 * Checks the batch that starts at `at` and must end at or before `end`. Returns its size when it
 * is whole and valid, else a negative RecordBatchStatus. Checks, in order: the header
 * (`checkRecordBatchHeader`), the CRC, and for an uncompressed batch every record's framing
 * (walkRecords). A compressed batch's records stay opaque: its codec is identified, its CRC
 * checked, nothing inside is read.
 */
export function checkRecordBatch(buf: Uint8Array, at: number, end: number, maxBatchBytes: number): number {
  const size = checkRecordBatchHeader(buf, at, end, maxBatchBytes);
  if (size < 0) return size;
  if (readU32(buf, at + CRC_AT) !== recordBatchCrc(buf, at, at + size)) return RecordBatchStatus.BAD_CRC;
  if (compressionOf(buf[at + ATTRIBUTES_AT + 1]!) !== Compression.NONE) return size;
  const walked = walkRecords(buf, at + RECORDS_AT, at + size, readInt32(buf, at + RECORDS_COUNT_AT));
  return walked < 0 ? walked : size;
}

/**
 * `checkRecordBatch`'s header rules alone, reading no byte past the header: header bytes present,
 * magic, batch_length at least a header and within the limit, bytes present, attributes, the base
 * offset and last offset within 0..2^53 - 1, count = last_offset_delta + 1 and not 0. Returns the
 * size or a negative status. The Kafka listener checks this much of a produced batch; the CRC and
 * the walk of the records are the log's, when it checks the stored batch whole (validate.ts rule
 * K1), so each byte is checksummed and each record walked once on produce.
 */
export function checkRecordBatchHeader(
  buf: Uint8Array,
  at: number,
  end: number,
  maxBatchBytes: number,
): number {
  if (end - at < RECORDS_AT) return RecordBatchStatus.TRUNCATED;
  if (buf[at + MAGIC_AT] !== RECORD_BATCH_MAGIC) return RecordBatchStatus.BAD_MAGIC;
  const length = readInt32(buf, at + BATCH_LENGTH_AT);
  if (length < RECORDS_AT - LOG_OVERHEAD) return RecordBatchStatus.BAD_LENGTH;
  const size = LOG_OVERHEAD + length;
  if (size > maxBatchBytes) return RecordBatchStatus.TOO_LARGE;
  if (size > end - at) return RecordBatchStatus.TRUNCATED;
  const attributes = (buf[at + ATTRIBUTES_AT]! << 8) | buf[at + ATTRIBUTES_AT + 1]!;
  if ((attributes & ~KNOWN_ATTRIBUTES) !== 0 || compressionOf(attributes) > Compression.ZSTD) {
    return RecordBatchStatus.BAD_ATTRIBUTES;
  }
  const hi = readInt32(buf, at + BASE_OFFSET_AT);
  const baseOffset = hi * TWO_32 + readU32(buf, at + BASE_OFFSET_AT + 4);
  const lastDelta = readInt32(buf, at + LAST_OFFSET_DELTA_AT);
  if (hi < 0 || hi > 0x1fffff || lastDelta < 0 || baseOffset > Number.MAX_SAFE_INTEGER - lastDelta) {
    return RecordBatchStatus.BAD_OFFSET;
  }
  const count = readInt32(buf, at + RECORDS_COUNT_AT);
  if (count <= 0 || count !== lastDelta + 1) return RecordBatchStatus.BAD_COUNT;
  return size;
}

/**
 * The smallest and largest timestamp delta of the records the last walk (walkRecords, or
 * checkRecordBatch of an uncompressed batch) went through: what a broker needs to place the batch
 * in time (its largest timestamp) and to check every record's against its range, read on the walk
 * that checks the framing anyway rather than on a second one. Module state, not an object per walk.
 */
export let minTimestampDelta = 0;
export let maxTimestampDelta = 0;

/**
 * Walks `count` records in buf[start, end) checking their framing; returns 0 or a negative status.
 * Everything is read in place with local varint reads: no reader, no object per record. Sets
 * minTimestampDelta and maxTimestampDelta.
 */
export function walkRecords(buf: Uint8Array, start: number, end: number, count: number): number {
  let p = start;
  minTimestampDelta = Number.POSITIVE_INFINITY;
  maxTimestampDelta = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    if (p >= end) return RecordBatchStatus.BAD_COUNT;
    const length = readVarint(buf, p, end);
    if (length === BAD) return RecordBatchStatus.BAD_RECORD;
    p = varintEnd;
    const recordEnd = p + length;
    if (length < 1 || recordEnd > end) return RecordBatchStatus.BAD_RECORD;
    p++; // attributes: unused, any value
    const tsDelta = readVarlong(buf, p, recordEnd);
    if (Number.isNaN(tsDelta)) return RecordBatchStatus.BAD_RECORD;
    if (tsDelta < minTimestampDelta) minTimestampDelta = tsDelta;
    if (tsDelta > maxTimestampDelta) maxTimestampDelta = tsDelta;
    p = varintEnd;
    if (readVarint(buf, p, recordEnd) !== i) return RecordBatchStatus.BAD_RECORD; // offset delta
    p = varintEnd;
    for (let field = 0; field < 2; field++) {
      const n = readVarint(buf, p, recordEnd); // key, then value
      if (n === BAD || n < -1 || varintEnd + Math.max(n, 0) > recordEnd) return RecordBatchStatus.BAD_RECORD;
      p = varintEnd + Math.max(n, 0);
    }
    const headers = readVarint(buf, p, recordEnd);
    if (headers === BAD || headers < 0) return RecordBatchStatus.BAD_RECORD;
    p = varintEnd;
    for (let h = 0; h < headers; h++) {
      const keyLength = readVarint(buf, p, recordEnd);
      if (keyLength === BAD || keyLength < 0 || varintEnd + keyLength > recordEnd) {
        return RecordBatchStatus.BAD_RECORD;
      }
      p = varintEnd + keyLength;
      const valueLength = readVarint(buf, p, recordEnd);
      if (valueLength === BAD || valueLength < -1 || varintEnd + Math.max(valueLength, 0) > recordEnd) {
        return RecordBatchStatus.BAD_RECORD;
      }
      p = varintEnd + Math.max(valueLength, 0);
    }
    if (p !== recordEnd) return RecordBatchStatus.BAD_RECORD;
  }
  return p === end ? 0 : RecordBatchStatus.BAD_COUNT;
}

/** Returned by the varint reads below for bytes that do not hold one. */
export const BAD = 0x7fff_ffff + 1;
/** Where the last varint read ended: module state instead of an object per read. */
export let varintEnd = 0;

/**
 * A zigzag varint (int32) at buf[at], bounded by end; BAD when it runs past end or holds more than
 * 32 bits. Integer arithmetic only, with a fast path for the one-byte varints that most lengths and
 * deltas are (measured: a third of a record walk's time went to the general loop).
 */
export function readVarint(buf: Uint8Array, at: number, end: number): number {
  if (at >= end) return BAD;
  let b = buf[at]!;
  if (b < 0x80) {
    varintEnd = at + 1;
    return (b >>> 1) ^ -(b & 1);
  }
  let u = b & 0x7f;
  for (let shift = 7; shift < 28; shift += 7) {
    if (++at >= end) return BAD;
    b = buf[at]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) {
      varintEnd = at + 1;
      return (u >>> 1) ^ -(u & 1);
    }
  }
  if (++at >= end) return BAD;
  b = buf[at]!;
  if (b > 0x0f) return BAD; // a fifth byte carries the top 4 bits only
  u = (u | (b << 28)) >>> 0;
  varintEnd = at + 1;
  return (u >>> 1) ^ -(u & 1);
}

/**
 * A zigzag varlong (int64) at buf[at], bounded by end, as a number: exact within 2^53, which every
 * timestamp delta a broker accepts is (larger ones only need to compare as too large); BAD when it
 * runs past end or past 10 bytes. NaN (not BAD: 2^31 is a valid delta) when it does not hold one.
 * One-byte fast path, as readVarint.
 */
export function readVarlong(buf: Uint8Array, at: number, end: number): number {
  if (at >= end) return Number.NaN;
  let b = buf[at]!;
  if (b < 0x80) {
    varintEnd = at + 1;
    return (b >>> 1) ^ -(b & 1);
  }
  let u = b & 0x7f;
  let scale = 0x80;
  for (let i = 1; i < 10; i++) {
    if (++at >= end) return Number.NaN;
    b = buf[at]!;
    u += (b & 0x7f) * scale;
    if (b < 0x80) {
      varintEnd = at + 1;
      // Zigzag without bit operations, which would cut u to 32 bits.
      const half = Math.floor(u / 2);
      return u % 2 === 0 ? half : -half - 1;
    }
    scale *= 0x80;
  }
  return Number.NaN;
}

/** Skips a varint of at most `maxBytes` bytes; BAD when it runs past end. */
export function skipVarint(buf: Uint8Array, at: number, end: number, maxBytes: number): number {
  for (let i = 0; i < maxBytes; i++) {
    if (at >= end) return BAD;
    if (buf[at++]! < 0x80) {
      varintEnd = at;
      return 0;
    }
  }
  return BAD;
}
