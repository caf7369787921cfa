/**
 * A compressed Kafka batch as the uncompressed batch it stands for: the same header with codec 0,
 * its records decompressed after it, and a CRC32C of its own, so RecordBatchCursor and
 * checkRecordBatch walk it like any other. Decompression is bounded by `maxBatchBytes` (the codec
 * refuses to inflate past it), so a small batch cannot make the broker allocate more than a batch.
 */
import { type CodecId, decompress } from "../codecs/index.js";
import { ConchError, ErrorCode } from "../errors.js";
import { writeU32 } from "../u64.js";
import {
  ATTRIBUTES_AT,
  BATCH_LENGTH_AT,
  COMPRESSION_MASK,
  CRC_AT,
  LOG_OVERHEAD,
  RECORDS_AT,
  recordBatchCrc,
} from "./record-batch.js";

/** The checked Kafka batch buf[at, end), compressed, as an uncompressed one in a buffer of its own. */
export function inflateKafkaBatch(buf: Uint8Array, at: number, end: number, maxBatchBytes: number): Buffer {
  const codec = buf[at + ATTRIBUTES_AT + 1]! & COMPRESSION_MASK;
  const records = decompress(
    codec as CodecId,
    buf.subarray(at + RECORDS_AT, end),
    maxBatchBytes - RECORDS_AT,
  );
  const size = RECORDS_AT + records.length;
  if (size > maxBatchBytes) {
    throw new ConchError(
      ErrorCode.BATCH_TOO_LARGE,
      `a batch decompresses to more than ${maxBatchBytes} bytes`,
    );
  }
  const out = Buffer.allocUnsafe(size);
  out.set(buf.subarray(at, at + RECORDS_AT), 0);
  out.set(records, RECORDS_AT);
  writeU32(out, BATCH_LENGTH_AT, size - LOG_OVERHEAD);
  out[ATTRIBUTES_AT + 1] = out[ATTRIBUTES_AT + 1]! & ~COMPRESSION_MASK;
  writeU32(out, CRC_AT, recordBatchCrc(out, 0, size));
  return out;
}
