/**
 * Frames runs of one partition's records, taken from partitioned batches (partition-index.ts),
 * into one ordinary batch: the records byte for byte in the order given, but for their offset
 * field, which becomes the delta 0..n-1; the batch's timestamp the largest of theirs, no producer
 * fields, the runs' layout, and a CRC of its own. Every run framed together must share a layout.
 */
import { batchCrc } from "./crc.js";
import {
  ATTRIBUTES_AT,
  BATCH_META_SIZE,
  BATCH_RECORDS_AT,
  COUNT_AT,
  CRC_AT,
  EXTENDED_RECORDS,
  KEY_SIZE_AT,
  MAGIC,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
  TIMESTAMP_AT,
} from "./layout.js";
import type { PartitionIndex } from "./partition-index.js";
import { NO_PRODUCER_ID, writeProducerFields } from "./producer-fields.js";
import { writeU16, writeU32 } from "./u64.js";

/**
 * Runs of one partition's records, each one group's records of one index: run i is group
 * `groups[i]` of `indexes[i]`. Two parallel arrays rather than an object a run: a broker defers
 * hundreds of thousands of runs a second, each kept until its spill.
 */
export interface RecordRuns {
  readonly indexes: readonly (PartitionIndex | undefined)[];
  readonly groups: readonly number[];
}

/** The bytes of the ordinary batch `frameRuns` makes of runs `from` to `to` (excluded). */
export function framedBytes(runs: RecordRuns, from: number, to: number): number {
  let bytes = BATCH_RECORDS_AT;
  for (let r = from; r < to; r++) bytes += runs.indexes[r]!.bytes[runs.groups[r]!]!;
  return bytes;
}

/**
 * Frames runs `from` to `to` (excluded; at least one, all of one layout) into one ordinary batch
 * (base offset 0) at `out[at..]`, which must hold their `framedBytes`; returns the batch's end.
 */
export function frameRuns(runs: RecordRuns, from: number, to: number, out: Buffer, at: number): number {
  const extended = runs.indexes[from]!.extended;
  let high = 0;
  let low = 0;
  let count = 0;
  let q = at + BATCH_RECORDS_AT;
  for (let r = from; r < to; r++) {
    const index = runs.indexes[r]!;
    const group = runs.groups[r]!;
    if (index.extended !== extended) throw new Error("frameRuns: runs of two layouts");
    const h = index.tsHigh[group]!;
    const l = index.tsLow[group]!;
    if (count === 0 || h > high || (h === high && l > low)) {
      high = h;
      low = l;
    }
    const buf = index.buf;
    const base = index.at;
    for (let i = index.first[group]!; i >= 0; i = index.next[i]!) {
      const p = base + index.starts[i]!;
      const n = index.sizes[i]!;
      buf.copy(out, q, p, p + n);
      writeU32(out, q + OFFSET_AT, 0);
      writeU32(out, q + OFFSET_AT + 4, count++);
      q += n;
    }
  }
  out[at] = MAGIC;
  writeU32(out, at + TIMESTAMP_AT, high);
  writeU32(out, at + TIMESTAMP_AT + 4, low);
  writeU32(out, at + OFFSET_AT, 0);
  writeU32(out, at + OFFSET_AT + 4, 0);
  writeU32(out, at + KEY_SIZE_AT, BATCH_META_SIZE);
  writeU32(out, at + PAYLOAD_SIZE_AT, q - at - BATCH_RECORDS_AT);
  writeU32(out, at + COUNT_AT, count);
  writeU16(out, at + ATTRIBUTES_AT, extended ? EXTENDED_RECORDS : 0);
  writeProducerFields(out, at, NO_PRODUCER_ID, 0, 0);
  writeU32(out, at + CRC_AT, batchCrc(out, at, q));
  return q;
}
