/**
 * A partitioned batch (attribute bit 5, docs/format.md) split into one ordinary batch per
 * partition: what the broker does with Produce version 3, whose one batch holds the records of a
 * send spread over many partitions. The producer checksums and the broker checks one batch per
 * request instead of one per partition; each partition's log then takes an ordinary batch of its
 * records, as from any other produce.
 *
 * Each output batch holds its partition's records in the order they came, with offset deltas
 * 0..n-1, the largest of their timestamps, no producer fields, the extended layout when the input
 * had it (its records keep their layout byte for byte) and a CRC of its own. All of them are views
 * of one buffer.
 */
import { batchCrc } from "./crc.js";
import {
  ATTRIBUTES_AT,
  BATCH_META_SIZE,
  BATCH_RECORDS_AT,
  COUNT_AT,
  CRC_AT,
  EXTENDED_RECORDS,
  HEADER_SIZE,
  KEY_SIZE_AT,
  MAGIC,
  NULL_SIZE,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
  TIMESTAMP_AT,
} from "./layout.js";
import { NO_PRODUCER_ID, writeProducerFields } from "./producer-fields.js";
import { readU16, readU32, writeU16, writeU32 } from "./u64.js";

/** One partition's share of a partitioned batch. */
export interface PartitionBatch {
  readonly partition: number;
  /** An ordinary batch (base offset 0) of the partition's records. */
  readonly records: Buffer;
}

/**
 * Splits the partitioned batch `buf[at, at + size)`, which `checkPartitionedBatch` has found
 * whole and valid (this function relies on its framing and checks nothing): one entry per
 * partition, in the order each first appears in the batch.
 */
export function splitPartitionedBatch(buf: Buffer, at: number, size: number): PartitionBatch[] {
  const count = readU32(buf, at + COUNT_AT);
  const extended = (readU16(buf, at + ATTRIBUTES_AT) & EXTENDED_RECORDS) !== 0;
  const end = at + size;
  const groupOf = new Map<number, number>();
  const partitions: number[] = [];
  const counts: number[] = [];
  const bytes: number[] = [];
  const tsHigh: number[] = [];
  const tsLow: number[] = [];
  const recordGroup = new Uint32Array(count);
  // First walk: each record's partition, and each partition's count, bytes and largest timestamp.
  for (let i = 0, p = at + BATCH_RECORDS_AT; i < count; i++) {
    const partition = readU32(buf, p + OFFSET_AT + 4);
    let g = groupOf.get(partition);
    if (g === undefined) {
      g = partitions.length;
      groupOf.set(partition, g);
      partitions.push(partition);
      counts.push(0);
      bytes.push(0);
      tsHigh.push(0);
      tsLow.push(0);
    }
    recordGroup[i] = g;
    const n = recordSize(buf, p, extended);
    counts[g]!++;
    bytes[g]! += n;
    const high = readU32(buf, p + TIMESTAMP_AT);
    const low = readU32(buf, p + TIMESTAMP_AT + 4);
    if (counts[g] === 1 || high > tsHigh[g]! || (high === tsHigh[g] && low > tsLow[g]!)) {
      tsHigh[g] = high;
      tsLow[g] = low;
    }
    p += n;
  }
  const groups = partitions.length;
  const out = Buffer.allocUnsafe(groups * BATCH_RECORDS_AT + (end - at - BATCH_RECORDS_AT));
  // Where each partition's batch starts, and where its next record goes.
  const starts = new Array<number>(groups);
  const next = new Array<number>(groups);
  for (let g = 0, s = 0; g < groups; g++) {
    starts[g] = s;
    next[g] = s + BATCH_RECORDS_AT;
    s += BATCH_RECORDS_AT + bytes[g]!;
  }
  // Second walk: each record copied behind its partition's others, its delta set.
  const deltas = new Array<number>(groups).fill(0);
  for (let i = 0, p = at + BATCH_RECORDS_AT; i < count; i++) {
    const g = recordGroup[i]!;
    const n = recordSize(buf, p, extended);
    const q = next[g]!;
    buf.copy(out, q, p, p + n);
    writeU32(out, q + OFFSET_AT, 0);
    writeU32(out, q + OFFSET_AT + 4, deltas[g]!++);
    next[g] = q + n;
    p += n;
  }
  const split = new Array<PartitionBatch>(groups);
  for (let g = 0; g < groups; g++) {
    const s = starts[g]!;
    const batchEnd = s + BATCH_RECORDS_AT + bytes[g]!;
    out[s] = MAGIC;
    writeU32(out, s + TIMESTAMP_AT, tsHigh[g]!);
    writeU32(out, s + TIMESTAMP_AT + 4, tsLow[g]!);
    writeU32(out, s + OFFSET_AT, 0);
    writeU32(out, s + OFFSET_AT + 4, 0);
    writeU32(out, s + KEY_SIZE_AT, BATCH_META_SIZE);
    writeU32(out, s + PAYLOAD_SIZE_AT, bytes[g]!);
    writeU32(out, s + COUNT_AT, counts[g]!);
    writeU16(out, s + ATTRIBUTES_AT, extended ? EXTENDED_RECORDS : 0);
    writeProducerFields(out, s, NO_PRODUCER_ID, 0, 0);
    writeU32(out, s + CRC_AT, batchCrc(out, s, batchEnd));
    split[g] = { partition: partitions[g]!, records: out.subarray(s, batchEnd) };
  }
  return split;
}

/** The size of the inner record at `p`: header, key, value and (extended) headers block. */
function recordSize(buf: Uint8Array, p: number, extended: boolean): number {
  let keySize = readU32(buf, p + KEY_SIZE_AT);
  let valueSize = readU32(buf, p + PAYLOAD_SIZE_AT);
  if (!extended) return HEADER_SIZE + keySize + valueSize;
  if (keySize === NULL_SIZE) keySize = 0;
  if (valueSize === NULL_SIZE) valueSize = 0;
  return HEADER_SIZE + keySize + valueSize + readU32(buf, p + COUNT_AT);
}
