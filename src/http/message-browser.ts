/**
 * Reads up to `limit` messages of a partition from an offset, for people looking at a topic: keys
 * and values as text when they are valid UTF-8, else base64, each cut to MAX_SHOWN_BYTES (the full
 * size is given). Reads stop at the high watermark or after MAX_READ_BYTES of batches.
 *
 * With a key, only records with exactly that key are returned, and the scan is bounded: at most
 * MAX_KEY_SCAN records and MAX_KEY_SCAN_BYTES of batches are examined per call, and the answer says
 * how many were and whether the scan reached the high watermark, so a caller continues from
 * `nextOffset` rather than one request reading a whole partition.
 */
import type { Broker } from "../broker/broker.js";
import { expandBatches } from "../format/compressed-batch.js";
import { StoredKafkaToConch } from "../format/kafka/stored-kafka.js";
import { RecordCursor } from "../format/record-cursor.js";

export const MAX_MESSAGES = 1000;
export const MAX_SHOWN_BYTES = 16 * 1024;
const MAX_READ_BYTES = 8 * 1024 * 1024;
const READ_STEP_BYTES = 1024 * 1024;
export const MAX_KEY_SCAN = 100_000;
const MAX_KEY_SCAN_BYTES = 32 * 1024 * 1024;

export interface ShownBytes {
  encoding: "utf8" | "base64";
  data: string;
  size: number;
  truncated: boolean;
}

export interface BrowsedMessage {
  offset: number;
  timestampMs: number;
  key: ShownBytes | null;
  value: ShownBytes | null;
}

export interface BrowseResult {
  messages: BrowsedMessage[];
  /** Where the next page starts. */
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
  /** With a key filter: records examined, the bound on them, and whether the high watermark was reached. */
  scan?: { key: string; examined: number; limit: number; complete: boolean };
}

const decoder = new TextDecoder("utf-8", { fatal: true });

export function showBytes(bytes: Buffer): ShownBytes {
  const size = bytes.length;
  const shown = size > MAX_SHOWN_BYTES ? bytes.subarray(0, MAX_SHOWN_BYTES) : bytes;
  const truncated = shown.length < size;
  try {
    // A cut may split a character: the text check is made on the whole when it is short enough.
    decoder.decode(truncated ? bytes.subarray(0, MAX_SHOWN_BYTES + 3) : bytes);
    return { encoding: "utf8", data: shown.toString("utf8"), size, truncated };
  } catch {
    return { encoding: "base64", data: shown.toString("base64"), size, truncated };
  }
}

export async function browse(
  broker: Broker,
  topic: string,
  partition: number,
  fromOffset: number,
  limit: number,
  key: string | null = null,
): Promise<BrowseResult> {
  const log = await broker.openPartition(topic, partition);
  const wanted = key === null ? null : Buffer.from(key, "utf8");
  const maxRead = wanted === null ? MAX_READ_BYTES : MAX_KEY_SCAN_BYTES;
  const messages: BrowsedMessage[] = [];
  const start = Math.max(fromOffset, log.logStartOffset);
  let offset = Math.min(start, log.highWatermark);
  let read = 0;
  let examined = 0;
  const cursor = new RecordCursor();
  // Kafka batches stored as they came are read as Conch batches (format/kafka/stored-kafka.ts).
  const toConch = new StoredKafkaToConch();
  let scanFull = false;
  while (!scanFull && messages.length < limit && offset < log.highWatermark && read < maxRead) {
    const result = await log.read(offset, READ_STEP_BYTES);
    if (result.records.length === 0) break;
    read += result.records.length;
    const stored = toConch.convert(result.records);
    cursor.reset(expandBatches(stored, 0, stored.length, log.config.maxBatchBytes));
    let last = offset - 1;
    while (cursor.next()) {
      if (cursor.offset < offset) continue;
      if (wanted !== null && examined === MAX_KEY_SCAN) {
        scanFull = true;
        break;
      }
      last = cursor.offset;
      const recordKey = cursor.key();
      if (wanted !== null) {
        examined++;
        if (recordKey === null || !recordKey.equals(wanted)) continue;
      }
      messages.push({
        offset: cursor.offset,
        timestampMs: cursor.timestampMs,
        key: recordKey === null ? null : showBytes(recordKey),
        value: cursor.isTombstone ? null : showBytes(cursor.value()),
      });
      if (messages.length === limit) break;
    }
    if (last < offset) break;
    offset = last + 1;
  }
  const highWatermark = log.highWatermark;
  const result: BrowseResult = {
    messages,
    nextOffset: offset,
    highWatermark,
    logStartOffset: log.logStartOffset,
  };
  if (key !== null) {
    result.scan = { key, examined, limit: MAX_KEY_SCAN, complete: offset >= highWatermark };
  }
  return result;
}
