/**
 * What a reader of stored bytes checks before it serves a batch read from a segment file: that the
 * batch is as it was when appended. Every batch passed `checkBatch` whole (validate.ts) before it
 * was stored, and every stored byte but the base offset is under a CRC, so the CRCs find the damage
 * a file took since (a flipped bit, a torn or overwritten block) without walking the records again:
 * on a fetch of stored Kafka batches that walk was two thirds of the check's cost.
 */
import { batchCrcMatches } from "./crc.js";
import { kafkaEnvelopeCrc } from "./kafka/kafka-envelope.js";
import {
  CRC_AT as KAFKA_CRC_AT,
  RECORDS_AT as KAFKA_RECORDS_AT,
  recordBatchCrc,
} from "./kafka/record-batch.js";
import { ATTRIBUTES_AT, BATCH_RECORDS_AT, CRC_AT, KAFKA_RECORD_BATCH_PAYLOAD, OFFSET_AT } from "./layout.js";
import { readU16, readU32 } from "./u64.js";

/**
 * Whether the stored batch at buf[at, at + size) (`size` from walkableBatchSize, all of it present)
 * carries the CRCs of its bytes: a Conch batch its CRC32C; a stored Kafka batch (attribute bit 4)
 * its envelope CRC and the Kafka batch's CRC32C, and its two base offsets agree (rule K2, the one
 * stretch no CRC covers besides the envelope's own base offset, which the reader lines up).
 */
export function storedBatchIntact(buf: Uint8Array, at: number, size: number): boolean {
  const end = at + size;
  if (readU16(buf, at + ATTRIBUTES_AT) !== KAFKA_RECORD_BATCH_PAYLOAD) return batchCrcMatches(buf, at, end);
  const k = at + BATCH_RECORDS_AT;
  if (size < BATCH_RECORDS_AT + KAFKA_RECORDS_AT) return false;
  return (
    readU32(buf, k) === readU32(buf, at + OFFSET_AT) &&
    readU32(buf, k + 4) === readU32(buf, at + OFFSET_AT + 4) &&
    readU32(buf, at + CRC_AT) === kafkaEnvelopeCrc(buf, at) &&
    readU32(buf, k + KAFKA_CRC_AT) === recordBatchCrc(buf, k, end)
  );
}
