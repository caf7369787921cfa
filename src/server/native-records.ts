/**
 * What a native client is sent of a read: Conch batches only. Stored Kafka batches (attribute
 * bit 4, written by the Kafka listener) are converted here, at the native front-end's edge, as the
 * Kafka listener converts Conch batches at its own; a read with none is passed on as it is.
 */
import { StoredKafkaToConch } from "../format/kafka/stored-kafka.js";
import type { ReadResult } from "../storage/partition-log.js";

// One for every connection: it is used synchronously, and what it returns is never written again.
const toConch = new StoredKafkaToConch();

/** `r`, or a copy whose records hold Conch batches in place of stored Kafka ones. Throws CORRUPT_DATA. */
export function nativeReadResult(r: ReadResult): ReadResult {
  const records = toConch.convert(r.records);
  return records === r.records
    ? r
    : { records, highWatermark: r.highWatermark, logStartOffset: r.logStartOffset };
}
