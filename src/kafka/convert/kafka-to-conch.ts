/**
 * A produce's Kafka batches as Conch batches (batch-conversion.ts): each Kafka batch is walked in
 * place (RecordBatchCursor, which checks all of it, CRC32C included, as it enters) and its records
 * are copied from the cursor's positions into one Conch batch (BatchBuilder.addRanges): no object
 * per record. Null and empty keys and values and headers (re-encoded in place, KafkaHeadersBlock)
 * are kept byte for byte: a batch with any of them is stored in the extended layout
 * (docs/format.md), one without stays in the v1 layout.
 *
 * The Kafka listener stores batches as they came (storing-batches.ts) and comes here only for a
 * produce with records without a timestamp, which the envelope cannot place in time. What this
 * cannot convert is refused, never altered: compressed batches, and transactional or control
 * batches (their markers take offsets of their own).
 *
 * An idempotent producer's id, epoch and base sequence go into the stored batch's envelope, where
 * the partition log checks them (docs/design.md, "Idempotent producers").
 */
import { BatchBuilder } from "../../format/batch-builder.js";
import { CODEC_NAMES } from "../../format/codecs/index.js";
import { KafkaRecordsToConch } from "../../format/kafka/kafka-records-to-conch.js";
import { Compression } from "../../format/kafka/record-batch.js";
import { RecordBatchCursor } from "../../format/kafka/record-batch-cursor.js";
import { KafkaErrorCode } from "../protocol/error-codes.js";
import { KafkaRefusal } from "./kafka-refusal.js";

/** A Kafka batch's "no producer id". */
const NO_PRODUCER_ID = -1;

export class KafkaToConch {
  readonly #cursor = new RecordBatchCursor();
  readonly #builder = new BatchBuilder();
  readonly #records = new KafkaRecordsToConch(this.#cursor);
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
        if (!this.#records.addBatch(b, nowMs)) {
          throw new KafkaRefusal(
            KafkaErrorCode.INVALID_TIMESTAMP,
            `record timestamp ${c.timestamp} is outside 0..2^42-1 ms`,
          );
        }
        // Conch's headers take more bytes than Kafka's (fixed-width sizes): check what is stored.
        checkSize(b.sizeBytes, maxBatchBytes);
        if (c.producerId !== NO_PRODUCER_ID) b.setProducer(c.producerId, c.producerEpoch, c.baseSequence);
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

function checkSize(bytes: number, maxBatchBytes: number): void {
  if (bytes > maxBatchBytes) {
    throw new KafkaRefusal(
      KafkaErrorCode.MESSAGE_TOO_LARGE,
      `a ${bytes}-byte record batch is over the broker's maxBatchBytes (${maxBatchBytes})`,
    );
  }
}

function checkBatch(c: RecordBatchCursor, maxBatchBytes: number): void {
  checkSize(c.batchEnd - c.batchStart, maxBatchBytes);
  if (
    c.producerId !== NO_PRODUCER_ID &&
    (c.producerId < 0 || c.producerEpoch < 0 || c.baseSequence < 0 || c.recordCount < 1)
  ) {
    throw new KafkaRefusal(
      KafkaErrorCode.INVALID_RECORD,
      `producer id ${c.producerId} with epoch ${c.producerEpoch} and base sequence ${c.baseSequence} is out of range`,
    );
  }
  if (c.compression !== Compression.NONE) {
    throw new KafkaRefusal(
      KafkaErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
      `a compressed record batch (${CODEC_NAMES[c.compression]}) beside records without a timestamp: such a produce is converted, and only uncompressed batches convert`,
    );
  }
  if (c.isTransactional || c.isControl) {
    throw new KafkaRefusal(
      KafkaErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
      "transactional and control record batches are not supported",
    );
  }
}
