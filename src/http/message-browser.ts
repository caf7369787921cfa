/**
 * Reads up to `limit` messages of a partition from an offset, for people looking at a topic: keys
 * and values as text when they are valid UTF-8, else base64, each cut to MAX_SHOWN_BYTES (the full
 * size is given). Reads stop at the high watermark or after MAX_READ_BYTES of batches.
 */
import type { Broker } from "../broker/broker.js";
import { RecordCursor } from "../format/record-cursor.js";

export const MAX_MESSAGES = 1000;
export const MAX_SHOWN_BYTES = 16 * 1024;
const MAX_READ_BYTES = 8 * 1024 * 1024;
const READ_STEP_BYTES = 1024 * 1024;

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
): Promise<BrowseResult> {
  const log = broker.partition(topic, partition);
  const messages: BrowsedMessage[] = [];
  const start = Math.max(fromOffset, log.logStartOffset);
  let offset = Math.min(start, log.highWatermark);
  let read = 0;
  const cursor = new RecordCursor();
  while (messages.length < limit && offset < log.highWatermark && read < MAX_READ_BYTES) {
    const result = await log.read(offset, READ_STEP_BYTES);
    if (result.records.length === 0) break;
    read += result.records.length;
    cursor.reset(result.records);
    let last = offset - 1;
    while (cursor.next()) {
      last = cursor.offset;
      if (cursor.offset < offset) continue;
      const key = cursor.key();
      messages.push({
        offset: cursor.offset,
        timestampMs: cursor.timestampMs,
        key: key === null ? null : showBytes(key),
        value: cursor.isTombstone ? null : showBytes(cursor.value()),
      });
      if (messages.length === limit) break;
    }
    if (last < offset) break;
    offset = last + 1;
  }
  return {
    messages,
    nextOffset: offset,
    highWatermark: log.highWatermark,
    logStartOffset: log.logStartOffset,
  };
}
