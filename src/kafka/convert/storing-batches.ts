/**
 * The BatchConversion that stores Kafka batches as they came (docs/kafka.md, "The data path"):
 * each produced RecordBatch v2 is checked whole (its CRC32C, and every record's framing and
 * timestamp, a compressed batch's after decompressing it within maxBatchBytes) and appended inside
 * Conch's batch envelope with attribute bit 4 (format/kafka/kafka-envelope.ts); a fetch serves
 * stored Kafka batches as views past the envelope, with no work per record. Batches of Conch inner
 * records (written by native producers) are converted on the way out, as before: only mixed topics
 * pay.
 *
 * Records without a timestamp (-1) cannot be placed in time as they are: a produce with one in an
 * uncompressed batch is converted as before (ConvertingBatches), taking the broker's time.
 */

import { recordSize } from "../../format/batch-header.js";
import { ConchError, ErrorCode } from "../../format/errors.js";
import { inflateKafkaBatch } from "../../format/kafka/inflate-batch.js";
import { envelopedSize, envelopeKafkaBatch } from "../../format/kafka/kafka-envelope.js";
import {
  ATTRIBUTES_AT,
  BASE_TIMESTAMP_AT,
  BATCH_LENGTH_AT,
  COMPRESSION_MASK,
  CONTROL_BIT,
  CRC_AT,
  checkRecordBatch,
  checkRecordBatchHeader,
  LOG_OVERHEAD,
  MAX_TIMESTAMP_AT,
  maxTimestampDelta,
  minTimestampDelta,
  RecordBatchStatus,
  readInt64,
  recordBatchCrc,
  recordBatchStatusMessage,
  TRANSACTIONAL_BIT,
} from "../../format/kafka/record-batch.js";
import { isStoredKafkaBatch, storedKafkaStart } from "../../format/kafka/stored-kafka.js";
import { HEADER_SIZE, MAX_TIMESTAMP_MS } from "../../format/layout.js";
import { readU32 } from "../../format/u64.js";
import { KafkaErrorCode } from "../protocol/error-codes.js";
import type { BatchConversion } from "./batch-conversion.js";
import { ConchToKafka } from "./conch-to-kafka.js";
import { KafkaRefusal } from "./kafka-refusal.js";
import { KafkaToConch } from "./kafka-to-conch.js";

export class StoringBatches implements BatchConversion {
  readonly #in = new KafkaToConch();
  readonly #out = new ConchToKafka();
  /** Reused for the enveloped batches of one partition; the broker copies what it appends. */
  #scratch = Buffer.allocUnsafe(64 * 1024);
  /** Each batch's largest record timestamp, from the checking pass to the writing one. */
  readonly #maxTimestamps: number[] = [];

  fromKafka(records: Buffer, maxBatchBytes: number, nowMs: number): Buffer {
    // First pass: check every batch and size the result; nothing is written until all are good.
    const maxTimestamps = this.#maxTimestamps;
    let batches = 0;
    let total = 0;
    let at = 0;
    while (at < records.length) {
      // The header only: an uncompressed batch's CRC32C and records are left to the log's
      // checkBatch, which checks the stored batch whole before anything is appended (rules K1 and
      // K6), so each byte is checksummed and each record walked once.
      const size = checkRecordBatchHeader(records, at, records.length, maxBatchBytes);
      if (size < 0) throw refusal(size, records, at, maxBatchBytes);
      refuseTransactional(records, at);
      const maxTs = envelopeTimestamp(records, at, size, maxBatchBytes);
      if (maxTs === NO_TIMESTAMP) return this.#in.convert(records, maxBatchBytes, nowMs);
      if (envelopedSize(size) > maxBatchBytes) throw tooLarge(envelopedSize(size), maxBatchBytes);
      maxTimestamps[batches++] = maxTs;
      total += envelopedSize(size);
      at += size;
    }
    if (total === 0) throw new KafkaRefusal(KafkaErrorCode.CORRUPT_MESSAGE, "a produce with no record batch");
    if (this.#scratch.length < total)
      this.#scratch = Buffer.allocUnsafe(Math.max(total, this.#scratch.length * 2));
    const out = this.#scratch;
    let p = 0;
    at = 0;
    for (let i = 0; i < batches; i++) {
      const size = kafkaBatchSize(records, at);
      p = envelopeKafkaBatch(out, p, records, at, size, maxTimestamps[i]!);
      at += size;
    }
    return out.subarray(0, p);
  }

  toKafka(stored: Buffer): Buffer | Buffer[] {
    if (stored.length === 0) return stored;
    // A new array each time: the fetch response holds it until every partition is read.
    const parts: Buffer[] = [];
    let nativeFrom = -1;
    let at = 0;
    while (stored.length - at >= HEADER_SIZE) {
      const end = at + recordSize(stored, at);
      if (end > stored.length) break;
      if (isStoredKafkaBatch(stored, at)) {
        if (nativeFrom >= 0) parts.push(this.#out.convert(stored.subarray(nativeFrom, at)));
        nativeFrom = -1;
        parts.push(stored.subarray(storedKafkaStart(at), end));
      } else if (nativeFrom < 0) {
        nativeFrom = at;
      }
      at = end;
    }
    if (nativeFrom >= 0) parts.push(this.#out.convert(stored.subarray(nativeFrom, at)));
    return parts.length === 1 ? parts[0]! : parts;
  }
}

/** envelopeTimestamp's answer for an uncompressed batch whose header has no timestamp (-1). */
const NO_TIMESTAMP = -1;

/** A checked batch's size, from its header. */
function kafkaBatchSize(buf: Buffer, at: number): number {
  return LOG_OVERHEAD + (readU32(buf, at + BATCH_LENGTH_AT) | 0);
}

/**
 * The envelope timestamp (ms) of the batch at `at`, whose header was checked: its largest record
 * timestamp, in the stored format's range 0..2^42 - 1 ms. An uncompressed batch's is its header's
 * max_timestamp, read without walking the records: the log's check of the stored batch (rule K6)
 * walks them once, refuses a record before 1970, and sets a max_timestamp that is not their largest
 * right in its copy (validateBatches with MaxTimestampRepairs), as Kafka's broker does. NO_TIMESTAMP
 * when the header has none (-1): the converting path takes the broker's time for those records.
 * A compressed batch's CRC32C is checked before it is decompressed (within maxBatchBytes); its
 * records are checked here, as the log cannot read them, and its timestamp is theirs.
 */
function envelopeTimestamp(buf: Buffer, at: number, size: number, maxBatchBytes: number): number {
  if ((buf[at + ATTRIBUTES_AT + 1]! & COMPRESSION_MASK) === 0) {
    const first = readInt64(buf, at + BASE_TIMESTAMP_AT);
    const max = readInt64(buf, at + MAX_TIMESTAMP_AT);
    if (first < 0 || max < 0) return NO_TIMESTAMP;
    if (max > MAX_TIMESTAMP_MS) throw outOfRange(first, max);
    return max;
  }
  if (readU32(buf, at + CRC_AT) !== recordBatchCrc(buf, at, at + size)) {
    throw refusal(RecordBatchStatus.BAD_CRC, buf, at, maxBatchBytes);
  }
  const inflated = inflate(buf, at, size, maxBatchBytes);
  const status = checkRecordBatch(inflated, 0, inflated.length, maxBatchBytes);
  if (status < 0) throw refusal(status, inflated, 0, maxBatchBytes);
  // Set by the walk of the records that checkRecordBatch has just made.
  const base = readInt64(inflated, BASE_TIMESTAMP_AT);
  const min = base + minTimestampDelta;
  const max = base + maxTimestampDelta;
  if (min < 0 || max > MAX_TIMESTAMP_MS) throw outOfRange(min, max);
  return max;
}

function outOfRange(min: number, max: number): KafkaRefusal {
  return new KafkaRefusal(
    KafkaErrorCode.INVALID_TIMESTAMP,
    `record timestamps ${min}..${max} are outside 0..2^42-1 ms`,
  );
}

function inflate(buf: Buffer, at: number, size: number, maxBatchBytes: number): Buffer {
  try {
    return inflateKafkaBatch(buf, at, at + size, maxBatchBytes);
  } catch (err) {
    if (err instanceof ConchError && err.code === ErrorCode.CORRUPT_BATCH) {
      throw new KafkaRefusal(KafkaErrorCode.CORRUPT_MESSAGE, `batch at byte ${at}: ${err.message}`);
    }
    throw err;
  }
}

function refuseTransactional(buf: Buffer, at: number): void {
  if ((buf[at + ATTRIBUTES_AT + 1]! & (TRANSACTIONAL_BIT | CONTROL_BIT)) !== 0) {
    throw new KafkaRefusal(
      KafkaErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
      "transactional and control record batches are not supported",
    );
  }
}

function tooLarge(bytes: number, maxBatchBytes: number): KafkaRefusal {
  return new KafkaRefusal(
    KafkaErrorCode.MESSAGE_TOO_LARGE,
    `a ${bytes}-byte record batch is over the broker's maxBatchBytes (${maxBatchBytes})`,
  );
}

function refusal(status: number, buf: Buffer, at: number, maxBatchBytes: number): ConchError {
  if (status === RecordBatchStatus.TOO_LARGE) return tooLarge(kafkaBatchSize(buf, at), maxBatchBytes);
  const code = status === RecordBatchStatus.BAD_CRC ? ErrorCode.CORRUPT_BATCH : ErrorCode.INVALID_BATCH;
  return new ConchError(code, `record batch at byte ${at}: ${recordBatchStatusMessage(status)}`);
}
