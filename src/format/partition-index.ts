/**
 * Where each partition's records are in a partitioned batch (attribute bit 5, docs/format.md),
 * found by one walk and nothing copied: the partitions in the order each first appears, each
 * one's record count, bytes and largest timestamp, and a chain through its records. What a split
 * (partitioned-batch.ts) and a deferred append (storage, docs/shared-log.md) frame from.
 */
import {
  ATTRIBUTES_AT,
  BATCH_RECORDS_AT,
  COUNT_AT,
  EXTENDED_RECORDS,
  HEADER_SIZE,
  KEY_SIZE_AT,
  NULL_SIZE,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
  TIMESTAMP_AT,
} from "./layout.js";
import { readU16, readU32 } from "./u64.js";

export class PartitionIndex {
  /** The buffer the batch is in (kept, not copied), and where in it the batch starts. */
  buf: Buffer;
  at: number;
  /** Whether its records have the extended layout. */
  readonly extended: boolean;
  /** Each group's partition, in the order each first appears. */
  readonly partitions: number[] = [];
  /** Each group's record count. */
  readonly counts: number[] = [];
  /** Each group's record bytes. */
  readonly bytes: number[] = [];
  /** Each group's largest record timestamp, its high and low halves. */
  readonly tsHigh: number[] = [];
  readonly tsLow: number[] = [];
  /** Each group's first record, an index into `starts`. */
  readonly first: number[] = [];
  /** Each record's position in the batch (from `at`). */
  readonly starts: Uint32Array;
  /** Each record's size. */
  readonly sizes: Uint32Array;
  /** The next record of the same group, or -1. */
  readonly next: Int32Array;

  /**
   * Indexes the partitioned batch `buf[at, at + size)`, which `checkPartitionedBatch` has found
   * whole and valid (this relies on its framing and checks nothing).
   */
  constructor(buf: Buffer, at: number) {
    this.buf = buf;
    this.at = at;
    const count = readU32(buf, at + COUNT_AT);
    const extended = (readU16(buf, at + ATTRIBUTES_AT) & EXTENDED_RECORDS) !== 0;
    this.extended = extended;
    this.starts = new Uint32Array(count);
    this.sizes = new Uint32Array(count);
    this.next = new Int32Array(count);
    const groupOf = new Map<number, number>();
    const last: number[] = [];
    for (let i = 0, p = at + BATCH_RECORDS_AT; i < count; i++) {
      const partition = readU32(buf, p + OFFSET_AT + 4);
      const n = innerRecordSize(buf, p, extended);
      const high = readU32(buf, p + TIMESTAMP_AT);
      const low = readU32(buf, p + TIMESTAMP_AT + 4);
      this.starts[i] = p - at;
      this.sizes[i] = n;
      this.next[i] = -1;
      let g = groupOf.get(partition);
      if (g === undefined) {
        g = this.partitions.length;
        groupOf.set(partition, g);
        this.partitions.push(partition);
        this.counts.push(1);
        this.bytes.push(n);
        this.tsHigh.push(high);
        this.tsLow.push(low);
        this.first.push(i);
      } else {
        this.next[last[g]!] = i;
        this.counts[g]!++;
        this.bytes[g]! += n;
        if (high > this.tsHigh[g]! || (high === this.tsHigh[g] && low > this.tsLow[g]!)) {
          this.tsHigh[g] = high;
          this.tsLow[g] = low;
        }
      }
      last[g] = i;
      p += n;
    }
  }

  /** The same batch, byte for byte, is now at `buf[at..]` (a copy the index's user keeps). */
  moveTo(buf: Buffer, at: number): void {
    this.buf = buf;
    this.at = at;
  }

  /** The number of partitions the batch holds records for. */
  get groups(): number {
    return this.partitions.length;
  }
}

/** The size of the inner record at `p`: header, key, value and (extended) headers block. */
function innerRecordSize(buf: Uint8Array, p: number, extended: boolean): number {
  let keySize = readU32(buf, p + KEY_SIZE_AT);
  let valueSize = readU32(buf, p + PAYLOAD_SIZE_AT);
  if (!extended) return HEADER_SIZE + keySize + valueSize;
  if (keySize === NULL_SIZE) keySize = 0;
  if (valueSize === NULL_SIZE) valueSize = 0;
  return HEADER_SIZE + keySize + valueSize + readU32(buf, p + COUNT_AT);
}
