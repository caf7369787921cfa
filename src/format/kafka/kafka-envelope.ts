/**
 * A Kafka RecordBatch v2 stored as it came, inside Conch's 49-byte batch envelope with attribute
 * bit 4 set (docs/format.md, "Kafka batches stored as is"). The envelope keeps its meaning for
 * storage, so segments, the offset and time indexes, recovery and retention read it like any batch:
 *
 *   timestamp      the largest record timestamp, ns (the time index works unchanged)
 *   offset         the base offset, stamped in both the envelope and the Kafka header
 *   key size       20
 *   payload size   the Kafka batch's size
 *   count          records_count (last offset = base + count - 1 holds)
 *   attributes     0x0010 exactly (the Kafka batch names its own codec)
 *   reserved u16   producer_epoch; producer id and base sequence: Kafka's, byte for byte
 *
 * The envelope CRC covers the envelope's own bytes (all but the base offset and the CRC, as for
 * every batch) and the Kafka header's bytes 8-20 (batch_length, partition_leader_epoch, magic, crc):
 * exactly the bytes Kafka's CRC32C (bytes 21 to the end) leaves out, except the Kafka base offset,
 * which checkBatch requires to equal the envelope's. So every stored byte is covered by one CRC, and
 * none by two: produce and recovery checksum each byte once.
 */
import { crc32c } from "@node-rs/crc32";
import {
  ATTRIBUTES_AT,
  BASE_SEQUENCE_AT,
  BATCH_META_SIZE,
  BATCH_RECORDS_AT,
  COUNT_AT,
  CRC_AT,
  KAFKA_RECORD_BATCH_PAYLOAD,
  KEY_SIZE_AT,
  MAGIC,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
  PRODUCER_EPOCH_AT,
  PRODUCER_ID_AT,
  TIMESTAMP_AT,
} from "../layout.js";
import { writeTimestampMs } from "../timestamp.js";
import { readU32, writeU16, writeU32, writeU64 } from "../u64.js";
import {
  BASE_SEQUENCE_AT as KAFKA_BASE_SEQUENCE_AT,
  BATCH_LENGTH_AT as KAFKA_BATCH_LENGTH_AT,
  CRC_AT as KAFKA_CRC_AT,
  ATTRIBUTES_AT as KAFKA_CRC_END,
  MAX_TIMESTAMP_AT as KAFKA_MAX_TIMESTAMP_AT,
  PRODUCER_EPOCH_AT as KAFKA_PRODUCER_EPOCH_AT,
  PRODUCER_ID_AT as KAFKA_PRODUCER_ID_AT,
  RECORDS_COUNT_AT as KAFKA_RECORDS_COUNT_AT,
  recordBatchCrc,
} from "./record-batch.js";

/** The envelope's bytes the CRC covers, then the Kafka header's bytes 8-20, in one scratch. */
const ENVELOPE_HEAD = OFFSET_AT - TIMESTAMP_AT + 1; // magic and timestamp: [0, 9)
const ENVELOPE_SIZES = CRC_AT - KEY_SIZE_AT; // key size, payload size, count: [17, 29)
const ENVELOPE_META = BATCH_RECORDS_AT - ATTRIBUTES_AT; // attributes to base sequence: [33, 49)
const KAFKA_HEAD = KAFKA_CRC_END - KAFKA_BATCH_LENGTH_AT; // [8, 21) of the Kafka batch
const scratch = Buffer.alloc(ENVELOPE_HEAD + ENVELOPE_SIZES + ENVELOPE_META + KAFKA_HEAD);

/** The envelope CRC of the flagged batch at `at` (its envelope and Kafka header must be present). */
export function kafkaEnvelopeCrc(buf: Uint8Array, at: number): number {
  let n = 0;
  for (let i = 0; i < ENVELOPE_HEAD; i++) scratch[n++] = buf[at + i]!;
  for (let i = KEY_SIZE_AT; i < CRC_AT; i++) scratch[n++] = buf[at + i]!;
  for (let i = ATTRIBUTES_AT; i < BATCH_RECORDS_AT; i++) scratch[n++] = buf[at + i]!;
  const k = at + BATCH_RECORDS_AT;
  for (let i = KAFKA_BATCH_LENGTH_AT; i < KAFKA_CRC_END; i++) scratch[n++] = buf[k + i]!;
  return crc32c(scratch);
}

/** The size of a Kafka batch once enveloped. */
export function envelopedSize(kafkaBatchSize: number): number {
  return BATCH_RECORDS_AT + kafkaBatchSize;
}

/**
 * Writes the Kafka batch src[srcAt, srcAt + size) (checked: checkRecordBatch) enveloped at
 * out[outAt], base offset 0 in both headers (the log stamps them), the envelope timestamp
 * `maxTimestampMs` (the records' largest, in 0..2^42 - 1). Returns the position after it.
 */
export function envelopeKafkaBatch(
  out: Buffer,
  outAt: number,
  src: Uint8Array,
  srcAt: number,
  size: number,
  maxTimestampMs: number,
): number {
  out[outAt] = MAGIC;
  writeTimestampMs(out, outAt + TIMESTAMP_AT, maxTimestampMs);
  out.fill(0, outAt + OFFSET_AT, outAt + KEY_SIZE_AT);
  writeU32(out, outAt + KEY_SIZE_AT, BATCH_META_SIZE);
  writeU32(out, outAt + PAYLOAD_SIZE_AT, size);
  writeU32(out, outAt + COUNT_AT, readU32(src, srcAt + KAFKA_RECORDS_COUNT_AT));
  writeU16(out, outAt + ATTRIBUTES_AT, KAFKA_RECORD_BATCH_PAYLOAD);
  // Producer epoch, id and sequence where the envelope keeps them for every batch.
  out[outAt + PRODUCER_EPOCH_AT] = src[srcAt + KAFKA_PRODUCER_EPOCH_AT]!;
  out[outAt + PRODUCER_EPOCH_AT + 1] = src[srcAt + KAFKA_PRODUCER_EPOCH_AT + 1]!;
  out.set(
    src.subarray(srcAt + KAFKA_PRODUCER_ID_AT, srcAt + KAFKA_PRODUCER_ID_AT + 8),
    outAt + PRODUCER_ID_AT,
  );
  out.set(
    src.subarray(srcAt + KAFKA_BASE_SEQUENCE_AT, srcAt + KAFKA_BASE_SEQUENCE_AT + 4),
    outAt + BASE_SEQUENCE_AT,
  );
  const k = outAt + BATCH_RECORDS_AT;
  out.set(src.subarray(srcAt, srcAt + size), k);
  out.fill(0, k, k + 8); // the Kafka base offset, outside Kafka's CRC
  writeU32(out, outAt + CRC_AT, kafkaEnvelopeCrc(out, outAt));
  return k + size;
}

/**
 * What Kafka's broker does to a v2 batch whose max_timestamp is not its largest record timestamp
 * (LogValidator's setMaxTimestamp), for the enveloped batch at buf[at]: `maxTimestampMs` (the
 * records' largest, in 0..2^42 - 1) becomes its header's max_timestamp and the envelope's
 * timestamp, and its Kafka CRC32C and then its envelope CRC (which covers the Kafka CRC) are
 * recomputed.
 */
export function setKafkaMaxTimestamp(buf: Uint8Array, at: number, maxTimestampMs: number): void {
  const k = at + BATCH_RECORDS_AT;
  writeTimestampMs(buf, at + TIMESTAMP_AT, maxTimestampMs);
  writeU64(buf, k + KAFKA_MAX_TIMESTAMP_AT, maxTimestampMs);
  writeU32(buf, k + KAFKA_CRC_AT, recordBatchCrc(buf, k, k + readU32(buf, at + PAYLOAD_SIZE_AT)));
  writeU32(buf, at + CRC_AT, kafkaEnvelopeCrc(buf, at));
}
