/**
 * A compacted log keeps the newest record of each key, so a record without a key has nothing to be
 * kept by: appends to a compacted log that carry one are refused with INVALID_BATCH (as Kafka
 * does), before anything is written. The walk reads only the framing it needs and stops quietly at
 * anything malformed, leaving the full checks (validateBatches) to report that. A compressed batch
 * is walked decompressed (bounded like validateBatches); one that does not decompress is left to
 * those checks too.
 */
import { batchCodec, decompressBatch } from "../../format/compressed-batch.js";
import { ConchError, ErrorCode } from "../../format/errors.js";
import { isStoredKafkaBatch, StoredKafkaToConch } from "../../format/kafka/stored-kafka.js";
import {
  ATTRIBUTES_AT,
  BATCH_RECORDS_AT,
  COMPRESSION_NONE,
  COUNT_AT,
  EXTENDED_RECORDS,
  HEADER_SIZE,
  KEY_SIZE_AT,
  NULL_SIZE,
  PAYLOAD_SIZE_AT,
} from "../../format/layout.js";
import { RecordCursor } from "../../format/record-cursor.js";
import { readU16, readU32 } from "../../format/u64.js";

/** Throws INVALID_BATCH if an inner record of the batches in `batches` has no key. */
export function rejectKeylessRecords(batches: Uint8Array, maxBatchBytes: number): void {
  let at = 0;
  let batch = 0;
  while (at + HEADER_SIZE <= batches.length) {
    const stored =
      at + HEADER_SIZE + readU32(batches, at + KEY_SIZE_AT) + readU32(batches, at + PAYLOAD_SIZE_AT);
    if (stored > batches.length) return;
    if (isStoredKafkaBatch(batches, at)) {
      rejectKeylessKafka(batches, at, stored, batch);
      at = stored;
      batch++;
      continue;
    }
    const buf = plainBatch(batches, at, stored, maxBatchBytes);
    if (buf === null) return;
    // The batch's records, in `buf` from `p` to `end`.
    const end = buf === batches ? stored : buf.length;
    const count = readU32(batches, at + COUNT_AT);
    // v1: key size 0 is no key. Extended: all ones is no key (0 is an empty key, still a key), and
    // a null value takes no bytes and the headers block follows it.
    const extended = (readU16(batches, at + ATTRIBUTES_AT) & EXTENDED_RECORDS) !== 0;
    const noKey = extended ? NULL_SIZE : 0;
    let p = (buf === batches ? at : 0) + BATCH_RECORDS_AT;
    for (let i = 0; i < count && p + HEADER_SIZE <= end; i++) {
      const keySize = readU32(buf, p + KEY_SIZE_AT);
      if (keySize === noKey) throw keyless(i, batch);
      const valueSize = readU32(buf, p + PAYLOAD_SIZE_AT);
      const headersSize = extended ? readU32(buf, p + COUNT_AT) : 0;
      p += HEADER_SIZE + keySize + (extended && valueSize === NULL_SIZE ? 0 : valueSize) + headersSize;
    }
    at = stored;
    batch++;
  }
}

/** The batch at `at` of `batches` itself when uncompressed, else decompressed; null when it does not. */
function plainBatch(batches: Uint8Array, at: number, end: number, maxBatchBytes: number): Uint8Array | null {
  if (batchCodec(batches, at) === COMPRESSION_NONE) return batches;
  if (end - at > maxBatchBytes) return null;
  try {
    return decompressBatch(batches, at, maxBatchBytes);
  } catch (err) {
    if (err instanceof ConchError) return null;
    throw err;
  }
}

const toConch = new StoredKafkaToConch();
const cursor = new RecordCursor();

/** The same for a Kafka batch stored as it came: its keys read from a Conch copy. */
function rejectKeylessKafka(buf: Uint8Array, at: number, end: number, batch: number): void {
  try {
    cursor.reset(toConch.convert(Buffer.from(buf.buffer, buf.byteOffset + at, end - at)));
  } catch {
    return; // malformed: validateBatches reports it
  }
  for (let i = 0; cursor.next(); i++) {
    if (cursor.keyNull) throw keyless(i, batch);
  }
}

function keyless(record: number, batch: number): ConchError {
  return new ConchError(
    ErrorCode.INVALID_BATCH,
    `record ${record} of batch ${batch} has no key; records of a compacted topic need a key`,
  );
}
