/**
 * The read path: find the segment (binary search over base offsets), the index entry at or before
 * the offset (binary search), then walk batch headers forward to the batch holding the offset, and
 * return whole stored batches, never decoded. Bytes still in the tail cache are served from memory;
 * the rest come from the file, each batch's CRCs checked on the way (storedBatchIntact): damage
 * found there is quarantined by the log, and quarantined ranges are answered with CORRUPT_DATA or
 * skipped (damaged-range.ts).
 */

import { DIRECT_ALIGN } from "../format/aligned-buffers.js";
import {
  batchBaseOffset,
  batchLastOffset,
  offsetAfter,
  recordSize,
  walkableBatchSize,
} from "../format/batch-header.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { isStoredKafkaBatch, StoredKafkaToConch } from "../format/kafka/stored-kafka.js";
import { HEADER_SIZE, MIN_BATCH_SIZE, TIMESTAMP_AT } from "../format/layout.js";
import { releaseReadBuffer, takeAlignedReadBuffer, takeReadBuffer } from "../format/read-buffers.js";
import { RecordCursor } from "../format/record-cursor.js";
import { storedBatchIntact } from "../format/stored-batch-intact.js";
import { compareTimestamps, writeTimestampMs } from "../format/timestamp.js";
import type { DirectReads } from "./config.js";
import { corruptData, DamageFound, rangeAt, rangeStartingAt, readLimitFrom } from "./damaged-range.js";
import { diskReadBytes } from "./disk-read-bytes.js";
import { startReadAhead, takeReadAhead } from "./read-ahead.js";
import type { Segment } from "./segment.js";
import type { SegmentList } from "./segment-list.js";
import type { CachedRun, TailCache } from "./tail-cache.js";

export const EMPTY = Buffer.alloc(0);
/** Read beyond the index entry's distance so that one file read usually finds the batches. */
const READ_SLACK = 64 * 1024;
/**
 * A read through the page cache faster than this (bytes per ms: 1 GB/s) found its pages cached; a
 * slower one went to the disk. Copies from the cache run at several GB/s even on a small machine,
 * and a disk that reads faster than 1 GB/s costs little to read through the cache anyway.
 */
const CACHED_BYTES_PER_MS = 1_000_000;
/** Reads smaller than this are not timed: too short to tell the cache from the disk. */
const COLD_PROBE_BYTES = 256 * 1024;
/** Chunk size of a timestamp lookup's forward scan. */
const SCAN_BYTES = 256 * 1024;
/** Timestamps are written from whole milliseconds below 2^42. */
const MAX_TIMESTAMP_MS = 2 ** 42 - 1;

export interface ReaderOptions {
  indexInterval: () => number;
  directReads: () => DirectReads;
  /** Whether a read of a quarantined range skips past it (corrupt.data=skip) rather than failing. */
  skipDamaged: () => boolean;
  /** Quarantines what a read found damaged in `seg`'s file; the read is then answered again. */
  damageFound: (seg: Segment, damage: DamageFound) => Promise<void>;
}

export class LogReader {
  readonly #segments: SegmentList;
  readonly #tail: TailCache;
  readonly #indexInterval: () => number;
  readonly #o: ReaderOptions;

  constructor(segments: SegmentList, tail: TailCache, options: ReaderOptions) {
    this.#segments = segments;
    this.#tail = tail;
    this.#indexInterval = options.indexInterval;
    this.#o = options;
  }

  /**
   * Whole batches from the one holding `offset` (which must be in [logStartOffset, hw)), at least
   * one, then more while they fit in `maxBytes`, none at or past `hw`. A quarantined range fails
   * the read, or is skipped when `skipDamaged` (by default the topic's corrupt.data setting).
   */
  async read(
    offset: number,
    maxBytes: number,
    hw: number,
    skipDamaged = this.#o.skipDamaged(),
    rechecked = false,
  ): Promise<Buffer> {
    let seg = this.#segments.find(offset);
    if (seg === undefined) throw outOfRange(offset);
    let from = offset;
    for (;;) {
      const bad = seg.damaged.length === 0 ? undefined : rangeAt(seg.damaged, from);
      if (bad !== undefined) {
        if (!skipDamaged) throw corruptData(seg.walPath, bad);
        from = bad.lastOffset + 1;
        if (from >= hw) return EMPTY;
      }
      // Compaction may have removed a segment's last records: an offset past its last batch (or in
      // an emptied segment) is read from the segments after it.
      if (!(seg.nextOffset <= from || seg.isEmpty)) break;
      seg = this.#segments.next(seg);
      if (seg === undefined) return EMPTY;
    }
    let position = seg.index.positionFor(from - seg.baseOffset);
    // The active segment's index has no entry after a range found while it was written: step over.
    for (const r of seg.damaged) {
      if (r.position >= position && r.lastOffset < from) position = r.position + r.length;
    }
    try {
      return await this.#batchesFrom(seg, position, from, maxBytes, hw);
    } catch (err) {
      if (err instanceof DamageFound && !rechecked && !seg.deleted) {
        await this.#o.damageFound(seg, err);
        return this.read(offset, maxBytes, hw, skipDamaged, true);
      }
      if (!seg.deleted) throw err;
      // Compaction replaced the segment (its offsets are still covered): read the new one.
      if (this.#segments.find(seg.baseOffset) !== undefined)
        return this.read(offset, maxBytes, hw, skipDamaged);
      throw outOfRange(offset);
    }
  }

  /**
   * What `read` returns, when the batch holding `offset` is in the tail cache: no file read and no
   * promise, which is every read of a consumer keeping up with the producers. Undefined when the
   * file must be read, or anything unusual needs `read`'s handling.
   */
  readCached(offset: number, maxBytes: number, hw: number): Buffer | undefined {
    const seg = this.#segments.find(offset);
    if (seg === undefined || seg.deleted || seg.isEmpty || seg.nextOffset <= offset) return undefined;
    const found = this.#fromCache(seg, seg.index.positionFor(offset - seg.baseOffset), offset, maxBytes, hw);
    return typeof found === "number" ? undefined : found;
  }

  /** The first offset below `hw` whose record timestamp is >= `timestampMs`, or null. */
  async offsetForTimestamp(timestampMs: number, hw: number, rechecked = false): Promise<number | null> {
    const ts = Buffer.alloc(8);
    writeTimestampMs(ts, 0, Math.min(MAX_TIMESTAMP_MS, Math.max(0, Math.ceil(timestampMs))));
    for (const seg of [...this.#segments.all]) {
      if (seg.baseOffset >= hw) break;
      if (seg.isEmpty || compareTimestamps(seg.maxTimestamp, 0, ts, 0) < 0) continue;
      try {
        const found = await this.#scanForTimestamp(seg, ts, hw);
        if (found !== -1) return found < 0 ? null : found;
      } catch (err) {
        if (err instanceof DamageFound && !rechecked && !seg.deleted) {
          await this.#o.damageFound(seg, err);
          return this.offsetForTimestamp(timestampMs, hw, true);
        }
        if (!seg.deleted) throw err;
        // Replaced by compaction rather than deleted by retention: look again over the new list.
        if (this.#segments.find(seg.baseOffset) !== undefined)
          return this.offsetForTimestamp(timestampMs, hw);
      }
    }
    return null;
  }

  /** An offset, -1 when the segment has none (look further), -2 when hw was reached (stop). */
  async #scanForTimestamp(seg: Segment, ts: Buffer, hw: number): Promise<number> {
    const index = seg.index;
    const i = index.firstAtOrAfterTimestamp(ts, 0);
    // Entry i - 1's batch and everything before it are older than ts.
    let pos = i === 0 ? 0 : index.position(i - 1);
    while (pos < seg.size) {
      const bad = seg.damaged.length === 0 ? undefined : rangeStartingAt(seg.damaged, pos);
      if (bad !== undefined) {
        pos += bad.length;
        continue;
      }
      const buf = await this.#batchesFrom(seg, pos, -1, SCAN_BYTES, Number.MAX_SAFE_INTEGER);
      try {
        for (let at = 0; at < buf.length; at += recordSize(buf, at)) {
          if (batchBaseOffset(buf, at) >= hw) return -2;
          if (compareTimestamps(buf, at + TIMESTAMP_AT, ts, 0) >= 0) return firstRecordAtOrAfter(buf, at, ts);
        }
        pos += buf.length;
      } finally {
        // Scanned, and kept by nobody (a stored Kafka batch is looked at through a copy).
        releaseReadBuffer(buf);
      }
    }
    return -1;
  }

  /** Whole batches of `seg` starting at the first batch at or after `position` whose last offset is >= `offset`. */
  async #batchesFrom(
    seg: Segment,
    position: number,
    offset: number,
    maxBytes: number,
    hw: number,
  ): Promise<Buffer> {
    const found = this.#fromCache(seg, position, offset, maxBytes, hw);
    return typeof found === "number" ? this.#readFile(seg, found, offset, maxBytes, hw) : found;
  }

  /**
   * The batches `#batchesFrom` wants when the tail cache holds the first of them; otherwise the
   * file position to read them from (after the cached runs that end before them).
   */
  #fromCache(seg: Segment, position: number, offset: number, maxBytes: number, hw: number): Buffer | number {
    const tail = this.#tail;
    let run = tail.find(seg, position);
    let at = run === undefined ? 0 : position - run.position;
    if (run === undefined) {
      const first = tail.first(seg);
      if (
        first !== undefined &&
        first.position > position &&
        batchBaseOffset(first.chunk.buf, first.start) <= offset
      ) {
        run = first;
      }
    }
    let filePos = position;
    while (run !== undefined) {
      const buf = run.chunk.buf;
      const end = run.start + run.length;
      for (at += run.start; at < end; at += recordSize(buf, at)) {
        if (batchLastOffset(buf, at) >= offset) return this.#copyRuns(seg, run, at, maxBytes, hw) ?? position;
      }
      filePos = run.end;
      run = tail.find(seg, filePos);
      at = 0;
    }
    return filePos;
  }

  /**
   * Copies whole batches out of the cache, from chunk position `at` of `run` on, continuing into
   * the runs that follow it in the file while maxBytes allows. Null when the cached runs end short
   * of what the segment holds (a stretch after them is not cached: a spill of deferred records
   * nobody had read, partition-log.ts): the file then serves the read whole, not cut at the gap.
   */
  #copyRuns(seg: Segment, first: CachedRun, at: number, maxBytes: number, hw: number): Buffer | null {
    const firstEnd = first.start + first.length;
    const firstTo = take(first.chunk.buf, at, firstEnd, maxBytes, hw, true);
    if (firstTo === at) return EMPTY;
    let total = firstTo - at;
    // Most reads end in their first run: the runs after it are listed only when one is needed.
    let runs: CachedRun[] | null = null;
    let ends: number[] | null = null;
    let last = first;
    let run = firstTo === firstEnd ? this.#tail.find(seg, first.end) : undefined;
    let whole = firstTo === firstEnd;
    while (run !== undefined) {
      const end = run.start + run.length;
      const to = take(run.chunk.buf, run.start, end, maxBytes - total, hw, false);
      whole = to === end;
      if (to === run.start) break;
      (runs ??= []).push(run);
      (ends ??= []).push(to);
      total += to - run.start;
      last = run;
      if (to < end) break;
      run = this.#tail.find(seg, run.end);
    }
    if (whole && last.end < seg.size) return null;
    const out = Buffer.allocUnsafe(total);
    let p = first.chunk.buf.copy(out, 0, at, firstTo);
    if (runs !== null && ends !== null) {
      for (let i = 0; i < runs.length; i++) {
        const r = runs[i]!;
        p += r.chunk.buf.copy(out, p, r.start, ends[i]!);
      }
    }
    return out;
  }

  async #readFile(
    seg: Segment,
    position: number,
    offset: number,
    maxBytes: number,
    hw: number,
  ): Promise<Buffer> {
    const limit = seg.damaged.length === 0 ? seg.size : readLimitFrom(seg.damaged, position, seg.size);
    // The smallest base offset the next batch may have.
    let lowest = seg.baseOffset;
    let pos = position;
    const firstWant = maxBytes + this.#indexInterval() + READ_SLACK;
    let want = firstWant;
    // A direct read that goes on where the last one of this segment left off: read ahead of the next.
    const direct = this.#readsDirect(seg);
    const sequential = direct && alignedSpan(pos, 0).from === seg.directNextFrom;
    for (;;) {
      const len = Math.min(want, limit - pos);
      if (len < MIN_BATCH_SIZE) throw corrupt(seg, pos);
      // Lent: the batches returned are views of it, and whoever sends them hands it back.
      const buf = await this.#readAt(seg, len, pos);
      const n = buf.length;
      let returned = false;
      try {
        let at = 0;
        let need = 0;
        while (at + HEADER_SIZE <= n) {
          const size = walkableBatchSize(buf, at);
          if (size < 0 || pos + at + size > limit) throw corrupt(seg, pos + at);
          if (at + size > n) {
            need = size;
            break;
          }
          // Offsets out of line with the segment: a damaged base offset, which the CRC does not
          // cover. Served, it would read as empty (past hw) for ever, or skip records.
          const base = batchBaseOffset(buf, at);
          const last = batchLastOffset(buf, at);
          if (base < lowest || last >= seg.nextOffset)
            throw corrupt(seg, pos + at, "a base offset out of line");
          lowest = last + 1;
          if (last >= offset) {
            const to = take(buf, at, n, maxBytes, hw, true);
            // Before the batches are checked and sent: the disk reads on meanwhile.
            if (direct)
              this.#readNext(seg, offsetAfter(buf, at, to), hw, limit, firstWant, sequential, buf, pos);
            const found = checked(seg, buf, at, to, pos);
            returned = true;
            return found;
          }
          at += size;
        }
        if (at === 0 && need === 0) throw corrupt(seg, pos);
        pos += at;
        want = Math.max(need, maxBytes + READ_SLACK);
      } finally {
        // Nothing refers to a buffer that is read past or that failed: the next read takes it.
        if (!returned) releaseReadBuffer(buf);
      }
    }
  }

  /**
   * Up to `len` bytes of `seg` from file position `pos`, in a lent read buffer: the view returned
   * starts at `pos` and is as long as what was read. A closed segment found cold (a read through
   * the page cache slower than CACHED_BYTES_PER_MS) is read with direct I/O from then on
   * (`directReads` "auto"; "on": every closed segment; "off": never); the active segment, whose
   * pages the producers just wrote, is always read through the cache.
   */
  async #readAt(seg: Segment, len: number, pos: number): Promise<Buffer> {
    if (this.#readsDirect(seg)) {
      const direct = await this.#readDirect(seg, len, pos);
      if (direct !== null) return direct;
    }
    const buf = takeReadBuffer(len);
    try {
      const probe =
        seg !== this.#segments.active &&
        this.#o.directReads() === "auto" &&
        seg.readMode === "cached" &&
        len >= COLD_PROBE_BYTES;
      const started = probe ? performance.now() : 0;
      const diskBefore = probe ? diskReadBytes() : -1;
      const n = await seg.read(buf, len, pos);
      if (probe && n >= COLD_PROBE_BYTES && foundCold(n, performance.now() - started, diskBefore)) {
        seg.readMode = "direct";
      }
      return buf.subarray(0, n);
    } catch (err) {
      releaseReadBuffer(buf);
      throw err;
    }
  }

  /** Whether `#readAt` reads `seg` with direct I/O (a closed segment, found cold or always so). */
  #readsDirect(seg: Segment): boolean {
    const mode = this.#o.directReads();
    return (
      seg !== this.#segments.active &&
      mode !== "off" &&
      (seg.readMode === "direct" || (mode === "on" && seg.readMode !== "unsupported"))
    );
  }

  /**
   * After a direct read whose batches end before offset `next` (-1: it returned none): notes where
   * the reader's next read starts (the index entry at or before `next`), and when this read itself
   * went on from the last one, starts that next read now (read-ahead.ts), as long as `want`, with
   * what this read holds of it (`read`, from file position `at`) copied rather than read again.
   */
  #readNext(
    seg: Segment,
    next: number,
    hw: number,
    limit: number,
    want: number,
    sequential: boolean,
    read: Buffer,
    at: number,
  ): void {
    if (next < 0) return;
    const pos = next < seg.nextOffset ? seg.index.positionFor(next - seg.baseOffset) : limit;
    if (next >= hw || pos >= limit) {
      seg.directNextFrom = -1;
      return;
    }
    const span = alignedSpan(pos, Math.min(want, limit - pos));
    seg.directNextFrom = span.from;
    if (sequential) startReadAhead(seg, span.from, span.span, { bytes: read, at });
  }

  /**
   * `#readAt` with direct I/O: the aligned span around [pos, pos + len) into an aligned buffer.
   * Null when no aligned buffer is free or the span is larger than one (read through the cache
   * instead), or when the file system refuses direct I/O (then never tried again for `seg`).
   */
  async #readDirect(seg: Segment, len: number, pos: number): Promise<Buffer | null> {
    const { from, head, span } = alignedSpan(pos, len);
    const ahead = takeReadAhead(seg, from);
    if (ahead !== null) {
      const n = await ahead.done;
      if (n >= 0) return ahead.buf.subarray(head, head + Math.max(0, Math.min(n - head, len)));
      // Its read failed: read again, and meet the error (if it lasts) as the reader's own.
      releaseReadBuffer(ahead.buf);
    }
    const buf = takeAlignedReadBuffer(span);
    if (buf === null) return null;
    try {
      const n = await seg.readDirect(buf, span, from);
      return buf.subarray(head, head + Math.max(0, Math.min(n - head, len)));
    } catch (err) {
      releaseReadBuffer(buf);
      if ((err as NodeJS.ErrnoException | null)?.code !== "EINVAL") throw err;
      seg.readMode = "unsupported";
      return null;
    }
  }
}

/**
 * Whether a read through the page cache of `bytes` that took `ms` went to the disk: slower than
 * the cache serves, and, where the process's disk reads are counted (disk-read-bytes.ts), with at
 * least half its bytes read from the disk meanwhile (a cached read answered late by a busy process
 * is not cold). Reads running at the same time count too: a read found cold wrongly is still read
 * right, directly.
 */
function foundCold(bytes: number, ms: number, diskBefore: number): boolean {
  if (ms * CACHED_BYTES_PER_MS <= bytes) return false;
  if (diskBefore < 0) return true;
  const diskAfter = diskReadBytes();
  return diskAfter < 0 || diskAfter - diskBefore >= bytes / 2;
}

/** The aligned span a direct read of [pos, pos + len) covers, and where pos falls in it. */
function alignedSpan(pos: number, len: number): { from: number; head: number; span: number } {
  const from = pos - (pos % DIRECT_ALIGN);
  const head = pos - from;
  return { from, head, span: Math.ceil((head + len) / DIRECT_ALIGN) * DIRECT_ALIGN };
}

/**
 * The end of the batches to return from buf[from]: whole batches below `end` while the total stays
 * within maxBytes (the first one regardless when `takeFirst`) and their offsets stay below hw.
 * Returns `from` when there are none. It stops before a header it cannot walk or whose offsets go
 * back: the next read starts there, and `#readFile` reports it.
 */
function take(
  buf: Buffer,
  from: number,
  end: number,
  maxBytes: number,
  hw: number,
  takeFirst: boolean,
): number {
  let to = from;
  let lowest = 0;
  while (to + HEADER_SIZE <= end) {
    const size = walkableBatchSize(buf, to);
    if (size < 0 || to + size > end) break;
    const base = batchBaseOffset(buf, to);
    if (base >= hw || base < lowest) break;
    if (to + size - from > maxBytes && !(takeFirst && to === from)) break;
    lowest = batchLastOffset(buf, to) + 1;
    to += size;
  }
  return to;
}

/**
 * The offset of the first record of the batch at `at` whose timestamp is >= ts (the batch's max is).
 * Walked with RecordCursor, which reads both layouts (an extended record's null sizes and headers
 * block); a stored Kafka batch is read from a Conch copy.
 */
function firstRecordAtOrAfter(buf: Buffer, at: number, ts: Buffer): number {
  const end = at + recordSize(buf, at);
  if (isStoredKafkaBatch(buf, at))
    return firstRecordAtOrAfter(kafkaToConch.convert(buf.subarray(at, end)), 0, ts);
  const c = timeCursor.reset(buf, at, end);
  while (c.next()) {
    if (compareTimestamps(buf, c.recordStart + TIMESTAMP_AT, ts, 0) >= 0) return c.offset;
  }
  return batchLastOffset(buf, at);
}

const timeCursor = new RecordCursor();
const kafkaToConch = new StoredKafkaToConch();

export function outOfRange(offset: number): ConchError {
  return new ConchError(ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${offset} is not in the log`);
}

function corrupt(seg: Segment, position: number, what = "a batch header that cannot be walked"): ConchError {
  return new DamageFound(seg.walPath, position, what);
}

/**
 * buf[from, to) (read from file position `filePos` + from) after checking every batch in it: bytes
 * from disk are checked once more on the way out, so damage a closed segment took since it was
 * written is found rather than served. Their CRCs only (storedBatchIntact): each batch was checked
 * whole when it was appended, and its records are not walked again on every read.
 */
function checked(seg: Segment, buf: Buffer, from: number, to: number, filePos: number): Buffer {
  for (let at = from; at < to; ) {
    const size = recordSize(buf, at);
    if (!storedBatchIntact(buf, at, size)) throw new DamageFound(seg.walPath, filePos + at, "a CRC mismatch");
    at += size;
  }
  return buf.subarray(from, to);
}
