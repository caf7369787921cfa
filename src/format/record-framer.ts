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

/** One group's records of one index. */
export interface RecordRun {
  readonly index: PartitionIndex;
  readonly group: number;
}

/** The bytes of the ordinary batch `frameRuns` makes of `runs`. */
export function framedBytes(runs: readonly RecordRun[]): number {
  let bytes = BATCH_RECORDS_AT;
  for (const r of runs) bytes += r.index.bytes[r.group]!;
  return bytes;
}

/**
 * Frames `runs` (at least one, all of one layout) into one ordinary batch (base offset 0) at
 * `out[at..]`, which must hold `framedBytes(runs)`; returns the batch's end.
 */
export function frameRuns(runs: readonly RecordRun[], out: Buffer, at: number): number {
  const extended = runs[0]!.index.extended;
  let high = 0;
  let low = 0;
  let count = 0;
  let q = at + BATCH_RECORDS_AT;
  for (const { index, group } of runs) {
    if (index.extended !== extended) throw new Error("frameRuns: runs of two layouts");
    const h = index.tsHigh[group]!;
    const l = index.tsLow[group]!;
    if (count === 0 || h > high || (h === high && l > low)) {
      high = h;
      low = l;
    }
    const buf = index.buf;
    const from = index.at;
    for (let i = index.first[group]!; i >= 0; i = index.next[i]!) {
      const p = from + index.starts[i]!;
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
