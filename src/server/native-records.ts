/**
 * What a native client is sent of a read: Conch batches only. Stored Kafka batches (attribute
 * bit 4, written by the Kafka listener) are converted here, at the native front-end's edge, as the
 * Kafka listener converts Conch batches at its own; a read with none is passed on as it is.
 */
import { StoredKafkaToConch } from "../format/kafka/stored-kafka.js";
import { releaseUnlessSent } from "../format/read-buffers.js";
import { fetchResponseBuffers } from "../protocol/fetch.js";
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

/**
 * The fetch response (header and records) for `id` of what a read returned, as native clients are
 * sent it. The read's buffer is handed back at once when the response does not refer to it (the
 * records were converted, or copied into a small response); otherwise the transport hands it back
 * once written. `native` is nativeReadResult(stored), which throws CORRUPT_DATA.
 */
export function nativeFetchResponse(
  id: number,
  stored: ReadResult,
  native: ReadResult = nativeReadResult(stored),
): Buffer | Buffer[] {
  const response = fetchResponseBuffers(id, native);
  releaseUnlessSent(stored.records, response);
  return response;
}
