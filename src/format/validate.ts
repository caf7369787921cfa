/**
 * Structural and integrity checks of batches, reading fields in place. `checkBatch` is the one
 * implementation used on ingest (produce), at recovery (scanning a segment) and by clients reading
 * fetched bytes; it returns a status number instead of throwing so a scan can tell a torn tail from a
 * good batch without exceptions.
 */
import { type CodecId, decompress, isCodecId } from "./codecs/index.js";
import { batchCrcMatches } from "./crc.js";
import { ConchError, ErrorCode } from "./errors.js";
import { kafkaEnvelopeCrc } from "./kafka/kafka-envelope.js";
import type { MaxTimestampRepairs } from "./kafka/max-timestamp-repairs.js";
import {
  checkRecordBatch,
  ATTRIBUTES_AT as KAFKA_ATTRIBUTES_AT,
  BASE_SEQUENCE_AT as KAFKA_BASE_SEQUENCE_AT,
  BASE_TIMESTAMP_AT as KAFKA_BASE_TIMESTAMP_AT,
  COMPRESSION_MASK as KAFKA_COMPRESSION_MASK,
  PRODUCER_EPOCH_AT as KAFKA_PRODUCER_EPOCH_AT,
  PRODUCER_ID_AT as KAFKA_PRODUCER_ID_AT,
  RECORDS_COUNT_AT as KAFKA_RECORDS_COUNT_AT,
  maxTimestampDelta,
  minTimestampDelta,
  RecordBatchStatus,
  readInt64,
} from "./kafka/record-batch.js";
import {
  ATTRIBUTES_AT,
  BASE_SEQUENCE_AT,
  BATCH_META_SIZE,
  BATCH_RECORDS_AT,
  COMPRESSION_MASK,
  COMPRESSION_NONE,
  COUNT_AT,
  CRC_AT,
  EXTENDED_RECORDS,
  HEADER_SIZE,
  KAFKA_RECORD_BATCH_PAYLOAD,
  KEY_SIZE_AT,
  KNOWN_ATTRIBUTES,
  MAGIC,
  MAX_OFFSET,
  MAX_TIMESTAMP_MS,
  NULL_SIZE,
  OFFSET_AT,
  PARTITIONED_ATTRIBUTES,
  PARTITIONED_RECORDS,
  PAYLOAD_SIZE_AT,
  PRODUCER_EPOCH_AT,
  PRODUCER_ID_AT,
  TIMESTAMP_AT,
} from "./layout.js";
import { batchProducerId, NO_PRODUCER_ID, producerFieldsValid } from "./producer-fields.js";
import { headersBlockValid } from "./record-headers.js";
import { readTimestampMs } from "./timestamp.js";
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
  /**
   * A stored Kafka batch (rule K6) whose records are all at or after 1970 but whose envelope
   * timestamp (its header's max_timestamp) is not their largest: apart from BAD_TIMESTAMP because
   * a produce's batch is set right and stored (validateBatches with MaxTimestampRepairs), as Kafka's
   * broker does; anywhere else it is a fault like any other.
   */
  KAFKA_MAX_TIMESTAMP: -11,
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
  [BatchStatus.KAFKA_MAX_TIMESTAMP]: "Kafka batch max_timestamp is not its largest record timestamp",
};

/** A one-line description of a negative `checkBatch` result. */
export function batchStatusMessage(status: number): string {
  return statusMessages[status] ?? `unknown batch status ${status}`;
}

/**
 * Checks the batch that starts at `at` and must end at or before `end`. Returns its total size in
 * bytes when it is whole and valid, else a negative `BatchStatus`. Checks, in order: enough bytes
 * for a header, magic, metadata size, size limit, enough bytes for the claimed size, count not 0,
 * base and last offset within 2^53 - 1, attributes and producer fields, a known codec, then for an
 * uncompressed batch `checkRecords` (every inner record's framing, and that they fill the payload
 * exactly and number `count`), and last the CRC. A compressed batch's records are checked by
 * `validateBatches`, which decompresses them. It reads nothing outside buf[at, end).
 */
export function checkBatch(buf: Uint8Array, at: number, end: number, maxBatchBytes: number): number {
  return checkBatchAs(buf, at, end, maxBatchBytes, false);
}

/**
 * `checkBatch` for a partitioned batch (attribute bit 5, docs/format.md): the same rules, but bit
 * 5 must be set, no codec, no producer id, base offset 0, and each inner record's offset field
 * holds a partition number (its high half 0) instead of its delta. Which partitions exist is for
 * the broker to say. Returns the batch's size or a negative `BatchStatus`.
 */
export function checkPartitionedBatch(
  buf: Uint8Array,
  at: number,
  end: number,
  maxBatchBytes: number,
): number {
  return checkBatchAs(buf, at, end, maxBatchBytes, true);
}

function checkBatchAs(
  buf: Uint8Array,
  at: number,
  end: number,
  maxBatchBytes: number,
  partitioned: boolean,
): number {
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
  if (partitioned) {
    if (baseOffset !== 0) return BatchStatus.BAD_OFFSET;
    if (
      (attributes & PARTITIONED_RECORDS) === 0 ||
      (attributes & ~PARTITIONED_ATTRIBUTES) !== 0 ||
      !producerFieldsValid(buf, at) ||
      batchProducerId(buf, at) !== NO_PRODUCER_ID
    ) {
      return BatchStatus.BAD_METADATA;
    }
  } else {
    if (attributes === KAFKA_RECORD_BATCH_PAYLOAD) return checkKafkaPayload(buf, at, size, count, baseOffset);
    if ((attributes & ~KNOWN_ATTRIBUTES) !== 0 || !producerFieldsValid(buf, at)) {
      return BatchStatus.BAD_METADATA;
    }
  }
  const codec = attributes & COMPRESSION_MASK;
  if (!isCodecId(codec)) return BatchStatus.UNSUPPORTED_COMPRESSION;
  const payloadEnd = at + size;
  // A compressed payload's records are checked where they are taken in (validateBatches), after a
  // bounded decompression; here, as in a recovery scan, its CRC is what vouches for it.
  if (codec === COMPRESSION_NONE) {
    const status = checkRecords(buf, at, at + BATCH_RECORDS_AT, payloadEnd);
    if (status < 0) return status;
  }
  if (!batchCrcMatches(buf, at, payloadEnd)) return BatchStatus.BAD_CRC;
  return size;
}

/**
 * Checks the `count` inner records of the batch whose header is at `at` (its count, layout bit and
 * timestamp are read from there) in records[p, payloadEnd): the batch's own payload, or its
 * decompressed one in another buffer. Returns 0 or a negative `BatchStatus`.
 */
export function checkRecords(
  header: Uint8Array,
  at: number,
  p: number,
  payloadEnd: number,
  records: Uint8Array = header,
): number {
  const buf = records;
  const count = readU32(header, at + COUNT_AT);
  // The batch timestamp, read once: every record's is compared with it as two u32 halves.
  const batchTsHigh = readU32(header, at + TIMESTAMP_AT);
  const batchTsLow = readU32(header, at + TIMESTAMP_AT + 4);
  // Extended records: all-ones sizes are null (no bytes), and the count field is the headers size.
  const attributes = readU16(header, at + ATTRIBUTES_AT);
  const extended = (attributes & EXTENDED_RECORDS) !== 0;
  // A partitioned batch's records hold their partition, any u32, where the delta would be.
  const partitioned = (attributes & PARTITIONED_RECORDS) !== 0;
  let sawMaxTimestamp = false;
  for (let i = 0; i < count; i++) {
    if (payloadEnd - p < HEADER_SIZE) return BatchStatus.BAD_COUNT;
    const innerCount = readU32(buf, p + COUNT_AT);
    if (
      buf[p] !== MAGIC ||
      (!extended && innerCount !== 1) ||
      readU32(buf, p + OFFSET_AT) !== 0 ||
      (!partitioned && readU32(buf, p + OFFSET_AT + 4) !== i)
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
  return 0;
}

/**
 * The rules for a batch whose payload is a Kafka RecordBatch v2 (attribute bit 4, and no other
 * bit: the Kafka batch names its own codec), after the shared rules 1-7 (docs/format.md, rules
 * K1-K5): the payload is exactly one valid Kafka batch (its own CRC32C, and for an uncompressed one
 * every record's framing; a compressed one's records were checked when it was stored), numbering
 * the same records from the same base offset, with the producer fields the envelope repeats, and
 * last the envelope CRC (kafka-envelope.ts: the bytes Kafka's CRC leaves out).
 */
function checkKafkaPayload(
  buf: Uint8Array,
  at: number,
  size: number,
  count: number,
  baseOffset: number,
): number {
  const k = at + BATCH_RECORDS_AT;
  const payloadSize = size - BATCH_RECORDS_AT;
  const kafkaSize = checkRecordBatch(buf, k, at + size, payloadSize);
  if (kafkaSize === RecordBatchStatus.BAD_CRC) return BatchStatus.BAD_CRC;
  if (kafkaSize !== payloadSize) return BatchStatus.BAD_RECORD;
  // K6's deltas, from K1's walk (module state: read before anything else walks).
  const uncompressed = (buf[k + KAFKA_ATTRIBUTES_AT + 1]! & KAFKA_COMPRESSION_MASK) === 0;
  const baseTs = uncompressed ? readInt64(buf, k + KAFKA_BASE_TIMESTAMP_AT) : 0;
  const minTs = baseTs + minTimestampDelta;
  const maxTs = baseTs + maxTimestampDelta;
  if (readU64Safe(buf, k) !== baseOffset) return BatchStatus.BAD_OFFSET;
  if (readU32(buf, k + KAFKA_RECORDS_COUNT_AT) !== count) return BatchStatus.BAD_COUNT;
  if (
    readU16(buf, at + PRODUCER_EPOCH_AT) !== readU16(buf, k + KAFKA_PRODUCER_EPOCH_AT) ||
    readU32(buf, at + PRODUCER_ID_AT) !== readU32(buf, k + KAFKA_PRODUCER_ID_AT) ||
    readU32(buf, at + PRODUCER_ID_AT + 4) !== readU32(buf, k + KAFKA_PRODUCER_ID_AT + 4) ||
    readU32(buf, at + BASE_SEQUENCE_AT) !== readU32(buf, k + KAFKA_BASE_SEQUENCE_AT)
  ) {
    return BatchStatus.BAD_METADATA;
  }
  if (readU32(buf, at + CRC_AT) !== kafkaEnvelopeCrc(buf, at)) return BatchStatus.BAD_CRC;
  // K6: the envelope's timestamp is the largest record timestamp, none before 1970. It is what the
  // listener took from the header's max_timestamp without walking the records; this is the walk.
  if (uncompressed) {
    if (minTs < 0) return BatchStatus.BAD_TIMESTAMP;
    if (maxTs !== readTimestampMs(buf, at + TIMESTAMP_AT)) {
      walkedMaxTimestamp = maxTs;
      return BatchStatus.KAFKA_MAX_TIMESTAMP;
    }
  }
  return size;
}

/** The largest record timestamp of the last batch found KAFKA_MAX_TIMESTAMP, for validateBatches. */
let walkedMaxTimestamp = 0;

/**
 * Whether the batch at buf[at, end) is a stored Kafka batch whose one fault is that its two base
 * offsets disagree (rule K2): both are outside every CRC, so this is the flagged batch's form of
 * "only the base offset is wrong", which recovery quarantines with the offsets its count says it
 * held rather than cutting. Checks with the envelope's base in the Kafka header, then puts the
 * header's bytes back: `buf` is unchanged on return.
 */
export function onlyKafkaBaseOffsetDiffers(buf: Uint8Array, at: number, end: number): boolean {
  if (end - at < BATCH_RECORDS_AT + 8 || readU16(buf, at + ATTRIBUTES_AT) !== KAFKA_RECORD_BATCH_PAYLOAD) {
    return false;
  }
  const k = at + BATCH_RECORDS_AT;
  const saved = baseScratch;
  saved.set(buf.subarray(k, k + 8));
  buf.copyWithin(k, at + OFFSET_AT, at + OFFSET_AT + 8);
  const size = checkBatch(buf, at, end, end - at);
  buf.set(saved, k);
  return size === end - at;
}

const baseScratch = new Uint8Array(8);

/** What `validateBatches` found. */
export interface BatchesSummary {
  batches: number;
  records: number;
}

/**
 * Validates a buffer holding one or more whole batches (a produce request's records), throwing a
 * `ConchError` (CORRUPT_BATCH, BATCH_TOO_LARGE or INVALID_BATCH) at the first problem. Nothing is
 * modified. With `repairs` (a produce's append), a stored Kafka batch whose only fault is a
 * max_timestamp that is not its largest record timestamp (KAFKA_MAX_TIMESTAMP: every other rule
 * passed) is not refused but noted in `repairs`, with the largest timestamp this same walk found,
 * for the caller to set right in its copy; `repairs` is cleared first.
 */
export function validateBatches(
  buf: Uint8Array,
  maxBatchBytes: number,
  repairs: MaxTimestampRepairs | null = null,
): BatchesSummary {
  if (buf.length === 0) throw new ConchError(ErrorCode.INVALID_BATCH, "no batches in the request");
  repairs?.clear();
  let at = 0;
  let batches = 0;
  let records = 0;
  while (at < buf.length) {
    let size = checkBatch(buf, at, buf.length, maxBatchBytes);
    if (size === BatchStatus.KAFKA_MAX_TIMESTAMP && repairs !== null) {
      // The records' largest may be past what the header said and past the stored format's range.
      if (walkedMaxTimestamp > MAX_TIMESTAMP_MS) {
        throw new ConchError(
          ErrorCode.INVALID_BATCH,
          `batch ${batches}: a record timestamp is past 2^42 - 1 ms`,
        );
      }
      repairs.add(at, walkedMaxTimestamp);
      size = HEADER_SIZE + BATCH_META_SIZE + readU32(buf, at + PAYLOAD_SIZE_AT);
    }
    if (size < 0) throw batchError(size, batches);
    if ((readU16(buf, at + ATTRIBUTES_AT) & COMPRESSION_MASK) !== COMPRESSION_NONE) {
      checkCompressedRecords(buf, at, size, maxBatchBytes, batches);
    }
    records += readU32(buf, at + COUNT_AT);
    batches++;
    at += size;
  }
  return { batches, records };
}

/**
 * The records inside a compressed batch (which passed `checkBatch`): decompressed with the output
 * bounded so that the batch uncompressed stays within `maxBatchBytes`, then the same rules as an
 * uncompressed payload. Throws the decompression's ConchError, or the rule's, naming the batch.
 */
function checkCompressedRecords(
  buf: Uint8Array,
  at: number,
  size: number,
  maxBatchBytes: number,
  batchIndex: number,
): void {
  const codec = (readU16(buf, at + ATTRIBUTES_AT) & COMPRESSION_MASK) as CodecId;
  let records: Buffer;
  try {
    records = decompress(
      codec,
      buf.subarray(at + BATCH_RECORDS_AT, at + size),
      maxBatchBytes - BATCH_RECORDS_AT,
    );
  } catch (err) {
    if (!(err instanceof ConchError)) throw err;
    throw new ConchError(err.code, `batch ${batchIndex}: ${err.message}`);
  }
  const status = checkRecords(buf, at, 0, records.length, records);
  if (status < 0) throw batchError(status, batchIndex);
}

/** The typed error for a negative `checkBatch` status. */
export function batchError(status: number, batchIndex: number): ConchError {
  const code =
    status === BatchStatus.BAD_CRC
      ? ErrorCode.CORRUPT_BATCH
      : status === BatchStatus.TOO_LARGE
        ? ErrorCode.BATCH_TOO_LARGE
        : status === BatchStatus.UNSUPPORTED_COMPRESSION
          ? ErrorCode.UNSUPPORTED_COMPRESSION
          : ErrorCode.INVALID_BATCH;
  return new ConchError(code, `batch ${batchIndex}: ${batchStatusMessage(status)}`);
}
