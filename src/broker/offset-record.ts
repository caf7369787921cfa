/**
 * The records of the `__consumer_offsets` topic (docs/groups.md): one per committed offset, keyed
 * by group, topic and partition, so that compaction keeps only the latest commit of each.
 *
 *   key   = version u16 (1) | group string | topic string | partition u32
 *   value = version u16 (1) | offset u64 | commitTimestampMs u64
 *
 * `string` is a u16 byte length and UTF-8 bytes, as on the wire. An empty value is a tombstone: the
 * group's offset for that partition was deleted.
 */
import { readU16, readU32, readU64Safe, writeU16, writeU32, writeU64 } from "../format/u64.js";

export const OFFSET_RECORD_VERSION = 1;
const VALUE_BYTES = 2 + 8 + 8;

export interface OffsetKey {
  group: string;
  topic: string;
  partition: number;
}

export interface CommittedOffset {
  /** The next offset the group will read: the last processed offset + 1. */
  offset: number;
  /** When it was committed, ms since the epoch. */
  timestampMs: number;
}

export function encodeOffsetKey(group: string, topic: string, partition: number): Buffer {
  const g = Buffer.byteLength(group);
  const t = Buffer.byteLength(topic);
  const buf = Buffer.allocUnsafe(2 + 2 + g + 2 + t + 4);
  writeU16(buf, 0, OFFSET_RECORD_VERSION);
  writeU16(buf, 2, g);
  buf.write(group, 4, "utf8");
  writeU16(buf, 4 + g, t);
  buf.write(topic, 6 + g, "utf8");
  writeU32(buf, 6 + g + t, partition);
  return buf;
}

export function encodeOffsetValue(offset: number, timestampMs: number): Buffer {
  const buf = Buffer.allocUnsafe(VALUE_BYTES);
  writeU16(buf, 0, OFFSET_RECORD_VERSION);
  writeU64(buf, 2, offset);
  writeU64(buf, 10, timestampMs);
  return buf;
}

/** The key, or null when it is not one this version writes (a newer version, or damage). */
export function decodeOffsetKey(key: Buffer): OffsetKey | null {
  if (key.length < 2 + 2 || readU16(key, 0) !== OFFSET_RECORD_VERSION) return null;
  const g = readU16(key, 2);
  if (key.length < 4 + g + 2) return null;
  const group = key.toString("utf8", 4, 4 + g);
  const t = readU16(key, 4 + g);
  if (key.length !== 6 + g + t + 4) return null;
  const topic = key.toString("utf8", 6 + g, 6 + g + t);
  return { group, topic, partition: readU32(key, 6 + g + t) };
}

/** The value, or null when it is not one this version writes. Tombstones are the caller's to spot. */
export function decodeOffsetValue(value: Buffer): CommittedOffset | null {
  if (value.length !== VALUE_BYTES || readU16(value, 0) !== OFFSET_RECORD_VERSION) return null;
  const offset = readU64Safe(value, 2);
  const timestampMs = readU64Safe(value, 10);
  if (offset < 0 || timestampMs < 0) return null;
  return { offset, timestampMs };
}
