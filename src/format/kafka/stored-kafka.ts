/**
 * Stored batches as a native reader needs them: every batch of Conch inner records as it is, and
 * every stored Kafka batch (attribute bit 4) converted into a Conch batch with the same base offset,
 * records, keys, values, headers and timestamps (a compressed one decompressed first). Only mixed
 * topics pay: a read with no Kafka batch in it is returned as it came, after a walk of the batch
 * headers, and a Kafka read of Kafka batches never comes here.
 *
 * The native fetch paths (server/), the HTTP message browser and compaction's key walk read through
 * this, so that RecordCursor, the clients and every reader of inner records see one layout.
 */
import { BatchBuilder } from "../batch-builder.js";
import { recordSize, stampBaseOffset } from "../batch-header.js";
import { ConchError, ErrorCode } from "../errors.js";
import {
  ATTRIBUTES_AT,
  BATCH_RECORDS_AT,
  HEADER_SIZE,
  KAFKA_RECORD_BATCH_PAYLOAD,
  KEY_SIZE_AT,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
} from "../layout.js";
import { readU16, readU32, readU64 } from "../u64.js";
import { inflateKafkaBatch } from "./inflate-batch.js";
import { KafkaRecordsToConch } from "./kafka-records-to-conch.js";
import { COMPRESSION_MASK, ATTRIBUTES_AT as KAFKA_ATTRIBUTES_AT } from "./record-batch.js";
import { RecordBatchCursor } from "./record-batch-cursor.js";

/**
 * How far a stored compressed Kafka batch may inflate when read. It was bounded by the broker's
 * maxBatchBytes when stored; the reader does not know that setting (it may have changed since), so
 * it takes the largest the broker accepts.
 */
export const MAX_STORED_INFLATE_BYTES = 256 * 1024 * 1024;

/** Whether the stored batch at `at` holds a Kafka batch. */
export function isStoredKafkaBatch(buf: Uint8Array, at: number): boolean {
  return readU16(buf, at + ATTRIBUTES_AT) === KAFKA_RECORD_BATCH_PAYLOAD;
}

/** The stored Kafka batch at `at` (whole): where its Kafka bytes start; they end where it does. */
export function storedKafkaStart(at: number): number {
  return at + BATCH_RECORDS_AT;
}

/** Whether the stored Kafka batch at `at` is compressed. */
export function storedKafkaCompressed(buf: Uint8Array, at: number): boolean {
  return (buf[at + BATCH_RECORDS_AT + KAFKA_ATTRIBUTES_AT + 1]! & COMPRESSION_MASK) !== 0;
}

export class StoredKafkaToConch {
  readonly #cursor = new RecordBatchCursor();
  readonly #records = new KafkaRecordsToConch(this.#cursor);
  readonly #builder = new BatchBuilder();
  readonly #parts: Buffer[] = [];

  /**
   * `stored`: whole stored batches (a trailing partial one is passed on as it is, as a read may end
   * in one). Returns `stored` itself when it holds no Kafka batch, else a new buffer.
   */
  convert(stored: Buffer): Buffer {
    if (!hasKafkaBatch(stored)) return stored;
    const parts = this.#parts;
    parts.length = 0;
    let copyFrom = 0;
    let at = 0;
    while (stored.length - at >= BATCH_RECORDS_AT) {
      const end =
        at + HEADER_SIZE + readU32(stored, at + KEY_SIZE_AT) + readU32(stored, at + PAYLOAD_SIZE_AT);
      if (end > stored.length) break;
      if (isStoredKafkaBatch(stored, at)) {
        if (at > copyFrom) parts.push(stored.subarray(copyFrom, at));
        parts.push(this.#convertBatch(stored, at, end));
        copyFrom = end;
      }
      at = end;
    }
    if (copyFrom < stored.length) parts.push(stored.subarray(copyFrom));
    const out = Buffer.concat(parts);
    parts.length = 0;
    return out;
  }

  #convertBatch(stored: Buffer, at: number, end: number): Buffer {
    const kafka = storedKafkaCompressed(stored, at)
      ? inflateKafkaBatch(stored, storedKafkaStart(at), end, MAX_STORED_INFLATE_BYTES)
      : stored.subarray(storedKafkaStart(at), end);
    const c = this.#cursor.reset(kafka);
    const b = this.#builder;
    // Stored batches were checked whole when stored; a failure here is damage, not a bad request.
    if (!c.nextBatch() || !this.#records.addBatch(b, 0)) {
      b.clear();
      throw new ConchError(ErrorCode.CORRUPT_DATA, `a stored Kafka batch at byte ${at} does not convert`);
    }
    const batch = b.finish();
    stampBaseOffset(batch, 0, readU64(stored, at + OFFSET_AT));
    return batch;
  }
}

/** Whether any whole batch in `stored` is a Kafka one: a walk of the headers only. */
function hasKafkaBatch(stored: Buffer): boolean {
  let at = 0;
  while (stored.length - at >= BATCH_RECORDS_AT) {
    if (isStoredKafkaBatch(stored, at)) return true;
    at += recordSize(stored, at);
  }
  return false;
}
