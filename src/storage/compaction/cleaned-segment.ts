/**
 * Writes one compacted segment: `<base>.wal.cleaned` with the surviving records and, when it holds
 * any, `<base>.idx.cleaned`, both fsynced, and the in-memory Segment that will stand in for the
 * original (its file handle already open on the new file, so renaming it later changes nothing for
 * readers). Offsets are kept: a batch whose records all survive is copied byte for byte; otherwise
 * each run of consecutive surviving offsets becomes a new batch (inner offset deltas 0..n-1 must be
 * contiguous), with the original's metadata, the run's largest timestamp and a fresh CRC.
 */

import type { FileHandle } from "node:fs/promises";
import { open, unlink } from "node:fs/promises";
import { batchBaseOffset } from "../../format/batch-header.js";
import { batchCrc } from "../../format/crc.js";
import {
  BASE_SEQUENCE_AT,
  BATCH_RECORDS_AT,
  COUNT_AT,
  CRC_AT,
  HEADER_SIZE,
  KEY_SIZE_AT,
  NO_PRODUCER_ID_HALF,
  OFFSET_AT,
  PAYLOAD_SIZE_AT,
  PRODUCER_ID_AT,
  TIMESTAMP_AT,
} from "../../format/layout.js";
import { sequenceAfter } from "../../format/producer-fields.js";
import { compareTimestamps } from "../../format/timestamp.js";
import { readU32, writeU32, writeU64 } from "../../format/u64.js";
import type { FileOps } from "../file-ops.js";
import { Segment } from "../segment.js";
import { indexPath, walPath } from "../segment-name.js";
import type { IoThrottle } from "./io-throttle.js";

export const CLEANED_SUFFIX = ".cleaned";
/** Output is written to the file once this much has gathered. */
const FLUSH_BYTES = 256 * 1024;

export function cleanedWalPath(dir: string, base: number): string {
  return walPath(dir, base) + CLEANED_SUFFIX;
}

export function cleanedIndexPath(dir: string, base: number): string {
  return indexPath(dir, base) + CLEANED_SUFFIX;
}

export class CleanedSegmentWriter {
  readonly segment: Segment;
  readonly #dir: string;
  readonly #ops: FileOps;
  readonly #interval: number;
  readonly #throttle: IoThrottle;
  readonly #signal: AbortSignal;
  #file: FileHandle | null = null;
  #out = Buffer.allocUnsafe(FLUSH_BYTES * 2);
  #outLen = 0;
  /** File position of #out[0]. */
  #written = 0;
  #hasIndex = false;

  constructor(
    dir: string,
    base: number,
    ops: FileOps,
    indexIntervalBytes: number,
    throttle: IoThrottle,
    signal: AbortSignal,
  ) {
    this.segment = new Segment(dir, base, Date.now());
    this.#dir = dir;
    this.#ops = ops;
    this.#interval = indexIntervalBytes;
    this.#throttle = throttle;
    this.#signal = signal;
  }

  get base(): number {
    return this.segment.baseOffset;
  }

  /** Whether `finish` wrote an index file (the segment kept at least one record). */
  get hasIndex(): boolean {
    return this.#hasIndex;
  }

  async open(): Promise<void> {
    this.#file = await open(cleanedWalPath(this.#dir, this.base), "w+");
  }

  /** Copies the whole stored batch src[at, end) unchanged. */
  copyBatch(src: Buffer, at: number, end: number): void {
    const start = this.#reserve(end - at);
    src.copy(this.#out, start, at, end);
    this.#note(start);
  }

  /**
   * Writes the records src[positions[from]..] .. positions[to - 1] of the stored batch at `batchAt`
   * (consecutive offsets, from delta `from`) as one new batch.
   */
  writeRun(
    src: Buffer,
    batchAt: number,
    positions: Int32Array,
    ends: Int32Array,
    from: number,
    to: number,
  ): void {
    let payload = 0;
    for (let i = from; i < to; i++) payload += ends[i]! - positions[i]!;
    const size = BATCH_RECORDS_AT + payload;
    const start = this.#reserve(size);
    const out = this.#out;
    // Header and metadata as the original had them, then the fields that differ.
    src.copy(out, start, batchAt, batchAt + BATCH_RECORDS_AT);
    writeU64(out, start + OFFSET_AT, batchBaseOffset(src, batchAt) + from);
    writeU32(out, start + PAYLOAD_SIZE_AT, payload);
    writeU32(out, start + COUNT_AT, to - from);
    if (
      readU32(src, batchAt + PRODUCER_ID_AT) !== NO_PRODUCER_ID_HALF ||
      readU32(src, batchAt + PRODUCER_ID_AT + 4) !== NO_PRODUCER_ID_HALF
    ) {
      // Sequence numbers follow the records: the run's first record had this one.
      writeU32(out, start + BASE_SEQUENCE_AT, sequenceAfter(readU32(src, batchAt + BASE_SEQUENCE_AT), from));
    }
    let p = start + BATCH_RECORDS_AT;
    let maxTsAt = -1;
    for (let i = from; i < to; i++) {
      const rec = positions[i]!;
      src.copy(out, p, rec, ends[i]!);
      writeU32(out, p + OFFSET_AT, 0);
      writeU32(out, p + OFFSET_AT + 4, i - from);
      if (maxTsAt < 0 || compareTimestamps(out, p + TIMESTAMP_AT, out, maxTsAt) > 0)
        maxTsAt = p + TIMESTAMP_AT;
      p += ends[i]! - rec;
    }
    out.copy(out, start + TIMESTAMP_AT, maxTsAt, maxTsAt + 8);
    writeU32(out, start + CRC_AT, batchCrc(out, start, start + size));
    this.#note(start);
  }

  /** Writes out what has gathered once it is large enough. */
  async maybeFlush(): Promise<void> {
    if (this.#outLen >= FLUSH_BYTES) await this.#flush();
  }

  /**
   * Writes the rest, fsyncs the data, writes and fsyncs the index. The segment keeps the file open
   * (it reads from it); `discard` closes it.
   */
  async finish(): Promise<Segment> {
    await this.#flush();
    const file = this.#file!;
    await this.#ops.datasync(file);
    const seg = this.segment;
    seg.size = this.#written;
    seg.fileSize = this.#written;
    if (seg.size > 0) {
      const index = await open(cleanedIndexPath(this.#dir, this.base), "w");
      try {
        await index.writeFile(seg.index.bytes());
        await index.sync();
      } finally {
        await index.close();
      }
      this.#hasIndex = true;
    }
    seg.setFile(file);
    return seg;
  }

  /** Closes and removes whatever was written. */
  async discard(): Promise<void> {
    const file = this.#file;
    this.#file = null;
    if (file !== null) await file.close().catch(() => {});
    await unlink(cleanedWalPath(this.#dir, this.base)).catch(() => {});
    await unlink(cleanedIndexPath(this.#dir, this.base)).catch(() => {});
  }

  /** Room for `n` more bytes in #out; returns where they go. */
  #reserve(n: number): number {
    if (this.#outLen + n > this.#out.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.#out.length * 2, this.#outLen + n));
      this.#out.copy(grown, 0, 0, this.#outLen);
      this.#out = grown;
    }
    const at = this.#outLen;
    this.#outLen += n;
    return at;
  }

  #note(start: number): void {
    this.segment.noteBatch(this.#out, start, this.#written + start, this.#interval);
  }

  async #flush(): Promise<void> {
    if (this.#outLen === 0) return;
    const len = this.#outLen;
    await this.#throttle.take(len, this.#signal);
    const n = await this.#ops.writev(this.#file!, [this.#out.subarray(0, len)], this.#written);
    if (n !== len)
      throw new Error(`short write to ${cleanedWalPath(this.#dir, this.base)}: ${n} of ${len} bytes`);
    this.#written += len;
    this.#outLen = 0;
  }
}

/** Record bounds of an inner record starting at `p`: where it ends. */
export function innerRecordEnd(buf: Buffer, p: number): number {
  return p + HEADER_SIZE + readU32(buf, p + KEY_SIZE_AT) + readU32(buf, p + PAYLOAD_SIZE_AT);
}
