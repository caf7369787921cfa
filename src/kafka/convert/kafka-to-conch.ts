/**
 * A produce's Kafka batches as Conch batches (batch-conversion.ts): each Kafka batch is walked in
 * place (RecordBatchCursor, which checks all of it, CRC32C included, as it enters) and its records
 * are copied from the cursor's positions into one Conch batch (BatchBuilder.addFrom): no object
 * per record.
 *
 * What Conch's format cannot keep yet is refused, never altered: record headers, null values,
 * empty keys (Conch's "no key" is a zero-length key, so an empty key would come back null),
 * compressed batches, and transactional or control batches (their markers take offsets of their
 * own). A null key is stored as no key, and read back as null.
 */
import { BatchBuilder } from "../../format/batch-builder.js";
import { MAX_TIMESTAMP_MS } from "../../format/layout.js";
import { KafkaErrorCode } from "../protocol/error-codes.js";
import { Compression } from "../protocol/record-batch.js";
import { RecordBatchCursor } from "../protocol/record-batch-cursor.js";
import { KafkaRefusal } from "./kafka-refusal.js";

const CODEC_NAMES = ["none", "gzip", "snappy", "lz4", "zstd"];
/** A producer's "no timestamp". */
const NO_TIMESTAMP = -1;

export class KafkaToConch {
  readonly #cursor = new RecordBatchCursor();
  readonly #builder = new BatchBuilder();
  /** The produce's batches converted so far, joined when there are several. */
  readonly #batches: Buffer[] = [];

  convert(records: Buffer, maxBatchBytes: number, nowMs: number): Buffer {
    const c = this.#cursor.reset(records);
    const b = this.#builder;
    const batches = this.#batches;
    batches.length = 0;
    try {
      while (c.nextBatch()) {
        checkBatch(c, maxBatchBytes);
        const buf = c.buffer;
        while (c.nextRecord()) {
          checkRecord(c);
          // A null key (start -1) is an empty range: no key.
          const keyStart = Math.max(c.keyStart, 0);
          const keyEnd = c.keyStart < 0 ? 0 : c.keyEnd;
          const ts = c.timestamp === NO_TIMESTAMP ? nowMs : c.timestamp;
          if (ts < 0 || ts > MAX_TIMESTAMP_MS) {
            throw new KafkaRefusal(
              KafkaErrorCode.INVALID_TIMESTAMP,
              `record timestamp ${c.timestamp} is outside 0..2^42-1 ms`,
            );
          }
          b.addFrom(buf, keyStart, keyEnd, c.valueStart, c.valueEnd, ts);
        }
        batches.push(b.finish());
      }
    } catch (err) {
      b.clear();
      throw err;
    }
    if (batches.length === 0) {
      throw new KafkaRefusal(KafkaErrorCode.CORRUPT_MESSAGE, "a produce with no record batch");
    }
    return batches.length === 1 ? batches[0]! : Buffer.concat(batches);
  }
}

function checkBatch(c: RecordBatchCursor, maxBatchBytes: number): void {
  if (c.batchEnd - c.batchStart > maxBatchBytes) {
    throw new KafkaRefusal(
      KafkaErrorCode.MESSAGE_TOO_LARGE,
      `a ${c.batchEnd - c.batchStart}-byte record batch is over the broker's maxBatchBytes (${maxBatchBytes})`,
    );
  }
  if (c.compression !== Compression.NONE) {
    throw new KafkaRefusal(
      KafkaErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
      `compressed record batches (${CODEC_NAMES[c.compression]}) are not supported yet: produce uncompressed`,
    );
  }
  if (c.isTransactional || c.isControl) {
    throw new KafkaRefusal(
      KafkaErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
      "transactional and control record batches are not supported",
    );
  }
}

function checkRecord(c: RecordBatchCursor): void {
  let what: string | null = null;
  if (c.headerCount > 0) what = "record headers are";
  else if (c.valueStart < 0) what = "null values (tombstones) are";
  else if (c.keyStart >= 0 && c.keyEnd === c.keyStart) what = "empty keys (as distinct from a null key) are";
  if (what !== null) {
    throw new KafkaRefusal(
      KafkaErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
      `${what} not supported yet (record at offset delta ${c.offset - c.baseOffset})`,
    );
  }
}
