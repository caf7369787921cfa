/**
 * An entry of the shared log (docs/shared-log.md, "Step 2, designed"): one accepted partitioned
 * produce for one topic, or a topic's deletion. Little-endian, like the record format:
 *
 *   length      uint32  bytes after this field
 *   crc         uint32  CRC32C of everything after this field
 *   kind        uint8   1 = records, 2 = topic deleted
 *   topic       uint16 length, then the name's bytes (ASCII: topic-name.ts)
 *   partitions  uint32 n, then n x (partition uint32, base offset int64, records uint32)
 *   batch       the rest: the partitioned batch as received (records entries only)
 *
 * Each partition's base offset is the offset given to its first record in the batch; the rest of
 * its records follow in batch order, so a replay gives every record the offset its producer was
 * told.
 */
import { crc32c } from "@node-rs/crc32";

export const EntryKind = {
  RECORDS: 1,
  TOPIC_DELETED: 2,
} as const;
export type EntryKind = (typeof EntryKind)[keyof typeof EntryKind];

/** One partition's share of a records entry. */
export interface EntrySpan {
  readonly partition: number;
  readonly baseOffset: number;
  readonly records: number;
}

/** An entry as read back: views of the buffer it was read from. */
export interface SharedEntry {
  readonly kind: EntryKind;
  readonly topic: string;
  readonly spans: readonly EntrySpan[];
  /** The partitioned batch (empty for a topic's deletion). */
  readonly batch: Buffer;
}

/** Bytes before the CRC'd part: the length and the CRC. */
export const ENTRY_PREFIX_BYTES = 8;
const SPAN_BYTES = 16;
const TWO_32 = 0x1_0000_0000;
const MAX_TOPIC_BYTES = 0xffff;

/** Why an entry could not be read: where the shared log's good part ends. */
export const EntryStatus = {
  /** Fewer bytes left than the entry's length says (or than its length field): a torn tail. */
  SHORT: -1,
  /** A length of 0 (a file extended but not written) or one below the smallest entry. */
  NO_ENTRY: -2,
  /** A length past what the reader allows. */
  TOO_LARGE: -3,
  /** The CRC does not match. */
  CORRUPT: -4,
  /** The CRC matched but the fields do not hold together. */
  MALFORMED: -5,
} as const;

const SMALLEST = 4 + 1 + 2 + 4;

/** The bytes of an entry of these fields. */
function entrySize(topic: string, spans: number, batchBytes: number): number {
  return ENTRY_PREFIX_BYTES + 1 + 2 + topic.length + 4 + spans * SPAN_BYTES + batchBytes;
}

/** Encodes a records entry: `batch` is copied after the fields. */
export function encodeRecordsEntry(topic: string, spans: readonly EntrySpan[], batch: Uint8Array): Buffer {
  return encode(EntryKind.RECORDS, topic, spans, batch);
}

/** Encodes a topic's deletion. */
export function encodeTopicDeleted(topic: string): Buffer {
  return encode(EntryKind.TOPIC_DELETED, topic, [], new Uint8Array(0));
}

function encode(kind: EntryKind, topic: string, spans: readonly EntrySpan[], batch: Uint8Array): Buffer {
  if (topic.length === 0 || topic.length > MAX_TOPIC_BYTES) throw new RangeError("bad topic name length");
  const size = entrySize(topic, spans.length, batch.length);
  const buf = Buffer.allocUnsafe(size);
  buf.writeUInt32LE(size - 4, 0);
  let at = ENTRY_PREFIX_BYTES;
  buf[at++] = kind;
  buf.writeUInt16LE(topic.length, at);
  at += 2;
  at += buf.write(topic, at, "latin1");
  buf.writeUInt32LE(spans.length, at);
  at += 4;
  for (const span of spans) {
    const offset = span.baseOffset;
    const high = Math.floor(offset / TWO_32);
    buf.writeUInt32LE(span.partition, at);
    // The int64 as two uint32 halves, low first: a BigInt per span cost more than the rest.
    buf.writeUInt32LE(offset - high * TWO_32, at + 4);
    buf.writeUInt32LE(high, at + 8);
    buf.writeUInt32LE(span.records, at + 12);
    at += SPAN_BYTES;
  }
  buf.set(batch, at);
  buf.writeUInt32LE(crc32c(buf.subarray(ENTRY_PREFIX_BYTES)), 4);
  return buf;
}

/**
 * The size of the entry at `at` (its length field included), or a negative EntryStatus. Bounds
 * the length by `end` and `maxEntryBytes` before anything past the prefix is read, then checks
 * the CRC before any field is trusted.
 */
export function checkEntry(buf: Buffer, at: number, end: number, maxEntryBytes: number): number {
  if (end - at < 4) return EntryStatus.SHORT;
  const length = buf.readUInt32LE(at);
  if (length === 0 || length < SMALLEST) return EntryStatus.NO_ENTRY;
  if (length + 4 > maxEntryBytes) return EntryStatus.TOO_LARGE;
  if (end - at < length + 4) return EntryStatus.SHORT;
  const crc = buf.readUInt32LE(at + 4);
  if (crc32c(buf.subarray(at + ENTRY_PREFIX_BYTES, at + 4 + length)) !== crc) return EntryStatus.CORRUPT;
  return readFields(buf, at, at + 4 + length) === null ? EntryStatus.MALFORMED : length + 4;
}

/** The fields of the entry at `at`, whose size `checkEntry` returned. */
export function readEntry(buf: Buffer, at: number, size: number): SharedEntry {
  const entry = readFields(buf, at, at + size);
  if (entry === null) throw new Error("readEntry of an entry checkEntry did not pass");
  return entry;
}

function readFields(buf: Buffer, start: number, end: number): SharedEntry | null {
  let at = start + ENTRY_PREFIX_BYTES;
  const kind = buf[at++];
  if (kind !== EntryKind.RECORDS && kind !== EntryKind.TOPIC_DELETED) return null;
  if (end - at < 2) return null;
  const topicBytes = buf.readUInt16LE(at);
  at += 2;
  if (topicBytes === 0 || end - at < topicBytes + 4) return null;
  const topic = buf.toString("latin1", at, at + topicBytes);
  at += topicBytes;
  const n = buf.readUInt32LE(at);
  at += 4;
  if (n > (end - at) / SPAN_BYTES) return null;
  const spans: EntrySpan[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const baseOffset = Number(buf.readBigInt64LE(at + 4));
    const records = buf.readUInt32LE(at + 12);
    if (baseOffset < 0 || !Number.isSafeInteger(baseOffset) || records === 0) return null;
    spans[i] = { partition: buf.readUInt32LE(at), baseOffset, records };
    at += SPAN_BYTES;
  }
  const batch = buf.subarray(at, end);
  if (kind === EntryKind.TOPIC_DELETED ? n !== 0 || batch.length !== 0 : n === 0 || batch.length === 0)
    return null;
  return { kind, topic, spans, batch };
}
