/**
 * A segment's sparse offset index, kept in memory as the exact bytes of its `.idx` file: 16-byte
 * big-endian entries `relativeOffset u32 | position u32 | maxTimestamp u64 ns`. There is an entry
 * for the segment's first batch and then one whenever at least indexIntervalBytes were appended
 * since the previous entry. maxTimestamp is the running maximum up to and including the entry's
 * batch, so it never decreases and a time lookup can binary-search it like the offsets.
 */
import { compareTimestamps } from "../format/timestamp.js";
import { readU32, writeU32 } from "../format/u64.js";

export const INDEX_ENTRY_BYTES = 16;
const POSITION_AT = 4;
const TIMESTAMP_AT = 8;
const INITIAL_ENTRIES = 64;

export class SegmentIndex {
  #buf: Buffer;
  #count: number;

  /** An index holding `entries` (whole entries, already checked), or an empty one. */
  constructor(entries?: Buffer) {
    if (entries === undefined) {
      this.#buf = Buffer.allocUnsafe(INITIAL_ENTRIES * INDEX_ENTRY_BYTES);
      this.#count = 0;
    } else {
      this.#buf = entries;
      this.#count = Math.floor(entries.length / INDEX_ENTRY_BYTES);
    }
  }

  get count(): number {
    return this.#count;
  }

  /** The entries as stored in the `.idx` file (a view; copy before the index grows again). */
  bytes(): Buffer {
    return this.#buf.subarray(0, this.#count * INDEX_ENTRY_BYTES);
  }

  relativeOffset(i: number): number {
    return readU32(this.#buf, i * INDEX_ENTRY_BYTES);
  }

  position(i: number): number {
    return readU32(this.#buf, i * INDEX_ENTRY_BYTES + POSITION_AT);
  }

  /** Copies entry i's running-maximum timestamp (8 bytes) into `out` at `at`. */
  copyTimestamp(i: number, out: Uint8Array, at: number): void {
    const from = i * INDEX_ENTRY_BYTES + TIMESTAMP_AT;
    out.set(this.#buf.subarray(from, from + 8), at);
  }

  /** Position of the last entry, or -1 when empty. */
  get lastPosition(): number {
    return this.#count === 0 ? -1 : this.position(this.#count - 1);
  }

  /** Adds an entry; `maxTs` holds the running maximum timestamp at `maxTsAt`. */
  append(relativeOffset: number, position: number, maxTs: Uint8Array, maxTsAt: number): void {
    const at = this.#count * INDEX_ENTRY_BYTES;
    if (at + INDEX_ENTRY_BYTES > this.#buf.length) {
      const grown = Buffer.allocUnsafe(this.#buf.length * 2);
      this.#buf.copy(grown, 0, 0, at);
      this.#buf = grown;
    }
    writeU32(this.#buf, at, relativeOffset);
    writeU32(this.#buf, at + POSITION_AT, position);
    writeU32(this.#buf, at + TIMESTAMP_AT, readU32(maxTs, maxTsAt));
    writeU32(this.#buf, at + TIMESTAMP_AT + 4, readU32(maxTs, maxTsAt + 4));
    this.#count++;
  }

  /**
   * The position to start scanning for `relativeOffset`: that of the last entry at or below it
   * (0 when the index is empty; the first entry is always the segment's first batch).
   */
  positionFor(relativeOffset: number): number {
    let lo = 0;
    let hi = this.#count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.relativeOffset(mid) <= relativeOffset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? 0 : this.position(found);
  }

  /**
   * The first entry whose running-maximum timestamp is >= the u64 at `ts[at]`, or `count` when
   * none is. Every batch before entry i - 1's batch (inclusive) is older than the timestamp.
   */
  firstAtOrAfterTimestamp(ts: Uint8Array, at: number): number {
    let lo = 0;
    let hi = this.#count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareTimestamps(this.#buf, mid * INDEX_ENTRY_BYTES + TIMESTAMP_AT, ts, at) >= 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /**
   * Whether loaded entries are plausible for a data file of `fileSize` bytes: the first entry is
   * (0, 0), offsets and positions strictly increase, timestamps never decrease, positions are
   * inside the file.
   */
  isWellFormed(fileSize: number): boolean {
    if (this.#count === 0) return false;
    if (this.relativeOffset(0) !== 0 || this.position(0) !== 0) return false;
    for (let i = 1; i < this.#count; i++) {
      if (this.relativeOffset(i) <= this.relativeOffset(i - 1)) return false;
      if (this.position(i) <= this.position(i - 1)) return false;
      const a = (i - 1) * INDEX_ENTRY_BYTES + TIMESTAMP_AT;
      if (compareTimestamps(this.#buf, a + INDEX_ENTRY_BYTES, this.#buf, a) < 0) return false;
    }
    return this.position(this.#count - 1) < fileSize;
  }
}
