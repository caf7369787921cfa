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

/**
 * Arrays an index makes in one buffer: three a record, six a group (at most one group a record),
 * and each group's last record while the walk runs.
 */
const ARRAYS = 10;

export class PartitionIndex {
  /** The buffer the batch is in (kept, not copied), and where in it the batch starts. */
  buf: Buffer;
  at: number;
  /** Whether its records have the extended layout. */
  readonly extended: boolean;
  // Every array below is a view of one buffer, off the collector's heap: an index lives until its
  // records are spilled (about a second, docs/shared-log.md), and a broker of many partitions keeps
  // hundreds, whose arrays of numbers the collector copied and marked.
  /** Each group's partition, in the order each first appears. */
  readonly partitions: Uint32Array;
  /** Each group's record count. */
  readonly counts: Uint32Array;
  /** Each group's record bytes. */
  readonly bytes: Uint32Array;
  /** Each group's largest record timestamp, its high and low halves. */
  readonly tsHigh: Uint32Array;
  readonly tsLow: Uint32Array;
  /** Each group's first record, an index into `starts`. */
  readonly first: Int32Array;
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
    const memory = new ArrayBuffer(ARRAYS * 4 * count);
    let slot = 0;
    const u32 = () => new Uint32Array(memory, 4 * count * slot++, count);
    const i32 = () => new Int32Array(memory, 4 * count * slot++, count);
    const starts = u32();
    const sizes = u32();
    const next = i32();
    const partitions = u32();
    const counts = u32();
    const bytes = u32();
    const tsHigh = u32();
    const tsLow = u32();
    const first = i32();
    const last = i32();
    const table = groupTable(count);
    const { keys, values, marks, mark } = table;
    const mask = keys.length - 1;
    let groups = 0;
    for (let i = 0, p = at + BATCH_RECORDS_AT; i < count; i++) {
      const partition = readU32(buf, p + OFFSET_AT + 4);
      const n = innerRecordSize(buf, p, extended);
      const high = readU32(buf, p + TIMESTAMP_AT);
      const low = readU32(buf, p + TIMESTAMP_AT + 4);
      starts[i] = p - at;
      sizes[i] = n;
      next[i] = -1;
      let slot = Math.imul(partition, HASH_MULTIPLIER) >>> table.shift;
      while (marks[slot] === mark && keys[slot] !== partition) slot = (slot + 1) & mask;
      let g: number;
      if (marks[slot] !== mark) {
        g = groups++;
        marks[slot] = mark;
        keys[slot] = partition;
        values[slot] = g;
        partitions[g] = partition;
        counts[g] = 1;
        bytes[g] = n;
        tsHigh[g] = high;
        tsLow[g] = low;
        first[g] = i;
      } else {
        g = values[slot]!;
        next[last[g]!] = i;
        counts[g]!++;
        bytes[g]! += n;
        if (high > tsHigh[g]! || (high === tsHigh[g] && low > tsLow[g]!)) {
          tsHigh[g] = high;
          tsLow[g] = low;
        }
      }
      last[g] = i;
      p += n;
    }
    this.starts = starts;
    this.sizes = sizes;
    this.next = next;
    this.partitions = partitions.subarray(0, groups);
    this.counts = counts.subarray(0, groups);
    this.bytes = bytes.subarray(0, groups);
    this.tsHigh = tsHigh.subarray(0, groups);
    this.tsLow = tsLow.subarray(0, groups);
    this.first = first.subarray(0, groups);
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

/** Fibonacci hashing's multiplier, 2^32 over the golden ratio. */
const HASH_MULTIPLIER = 0x9e3779b9 | 0;
/** The largest table kept for the next index (slots); a larger batch gets one of its own. */
const KEPT_SLOTS = 1 << 16;

/**
 * Partition to group while an index is built: open addressing over typed arrays, reused from index
 * to index (a JavaScript Map grew a new table, tens of kilobytes, for every batch of a thousand
 * partitions). A slot is in use when its mark is this build's, so nothing is cleared between builds.
 */
interface GroupTable {
  keys: Uint32Array;
  values: Uint32Array;
  marks: Uint32Array;
  mark: number;
  /** 32 minus log2 of the slot count: a hash's top bits pick the slot. */
  shift: number;
}

let kept: GroupTable | null = null;

/** A table with room for `records` partitions at half load, marked for a new build. */
function groupTable(records: number): GroupTable {
  let bits = 6;
  while (1 << bits < 2 * records) bits++;
  const slots = 1 << bits;
  if (kept !== null && kept.keys.length >= slots && kept.mark < 0xffffffff) {
    kept.mark++;
    return kept;
  }
  const size = Math.max(slots, kept?.keys.length ?? 0);
  const table: GroupTable = {
    keys: new Uint32Array(size),
    values: new Uint32Array(size),
    marks: new Uint32Array(size),
    mark: 1,
    shift: 32 - Math.log2(size),
  };
  if (size <= KEPT_SLOTS) kept = table;
  return table;
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
