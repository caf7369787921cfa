/**
 * One segment of a partition log: a `.wal` file of whole batches starting at `baseOffset`, its
 * in-memory index, and what the log needs to know without reading the file (size, next offset,
 * newest timestamp). The active segment keeps its file open for writing; closed segments open
 * theirs for reading on first use.
 */
import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import { batchBaseOffset, batchLastOffset } from "../format/batch-header.js";
import { TIMESTAMP_AT } from "../format/layout.js";
import { compareTimestamps, readTimestampMs } from "../format/timestamp.js";
import { readU32, writeU32 } from "../format/u64.js";
import { RESERVE_AFTER_BYTES } from "./block-reserve.js";
import type { DamagedRange } from "./damaged-range.js";
import { readFully } from "./file-ops.js";
import { IdleWaiters } from "./idle-waiters.js";
import { dropReadAhead, type ReadAhead } from "./read-ahead.js";
import { SegmentIndex } from "./segment-index.js";
import { indexPath, walPath } from "./segment-name.js";

export class Segment {
  readonly baseOffset: number;
  readonly walPath: string;
  readonly indexPath: string;
  index = new SegmentIndex();
  /** Bytes of whole, written batches: the next write goes here. */
  size = 0;
  /** The offset after the last batch. */
  nextOffset: number;
  /** Running maximum of batch timestamps (u64 ns), all zero while empty. */
  readonly maxTimestamp = Buffer.alloc(8);
  /** The first batch's timestamp in ms, or -1 while empty. */
  firstTimestampMs = -1;
  /** When this segment's age for segmentMs starts counting (ms since the epoch). */
  rollStartMs: number;
  /** Bytes the file has on disk; more than `size` while preallocated. */
  fileSize = 0;
  /** Set once retention removed the segment: reads that still hold it fail as out of range. */
  deleted = false;
  /** The running `fallocate`, awaited before the file is truncated (settleReserve). */
  preallocation: Promise<unknown> | null = null;
  /**
   * While a reservation is on its way (one at a time): withdraws it while it still waits its turn
   * (block-reserve.ts).
   */
  reserveWithdraw: AbortController | null = null;
  /** Bytes from the start with disk blocks reserved (block-reserve.ts). */
  reservedTo = 0;
  /** No reservation ahead until the segment holds this many bytes (block-reserve.ts). */
  reserveAfter = RESERVE_AFTER_BYTES;
  /** After a roll: fdatasync, truncate to `size`, write the index. */
  sealing: Promise<void> | null = null;
  /** Quarantined ranges, by position (damaged-range.ts); reads stop at them. */
  damaged: DamagedRange[] = [];
  /** The next noted batch gets an index entry: the first good batch after a damaged range. */
  #entryDue = false;
  #file: FileHandle | null = null;
  #opening: Promise<FileHandle> | null = null;
  /**
   * How reads of this segment go (log-reader.ts): through the page cache, or, once a read found
   * its pages not cached (a closed segment read from the disk), with direct I/O, which neither
   * fills the page cache nor copies through it. "unsupported": the file system refused O_DIRECT.
   */
  readMode: "cached" | "direct" | "unsupported" = "cached";
  /** A direct read started ahead of the read that will want it (read-ahead.ts). */
  readAhead: ReadAhead | null = null;
  /** Where the direct read after the last one would start (aligned), if its reader goes on; -1 before any. */
  directNextFrom = -1;
  /** The file opened with O_DIRECT, on the first direct read; closed with the segment. */
  #direct: Promise<FileHandle> | null = null;
  /** fdatasyncs of the bare descriptor running now (FileHandle.close does not wait for those). */
  #syncs = 0;
  /** A close waiting for the last of them to end. */
  readonly #syncsDone = new IdleWaiters();

  constructor(dir: string, baseOffset: number, nowMs: number) {
    this.baseOffset = baseOffset;
    this.nextOffset = baseOffset;
    this.walPath = walPath(dir, baseOffset);
    this.indexPath = indexPath(dir, baseOffset);
    this.rollStartMs = nowMs;
  }

  get isEmpty(): boolean {
    return this.size === 0;
  }

  /** The newest record's timestamp in ms (0 while empty). */
  get maxTimestampMs(): number {
    return readTimestampMs(this.maxTimestamp, 0);
  }

  /**
   * Accounts for the whole, checked batch at `buf[at]`, stored at file `position`: index entry
   * (for the first batch, then once indexIntervalBytes have passed), running timestamp, next offset.
   * Does not change `size`.
   */
  noteBatch(buf: Uint8Array, at: number, position: number, indexIntervalBytes: number): void {
    const tsAt = at + TIMESTAMP_AT;
    if (this.firstTimestampMs < 0) this.firstTimestampMs = readTimestampMs(buf, tsAt);
    if (compareTimestamps(buf, tsAt, this.maxTimestamp, 0) > 0) {
      writeU32(this.maxTimestamp, 0, readU32(buf, tsAt));
      writeU32(this.maxTimestamp, 4, readU32(buf, tsAt + 4));
    }
    const last = this.index.lastPosition;
    if (last < 0 || this.#entryDue || (position > last && position - last >= indexIntervalBytes)) {
      this.#entryDue = false;
      // The first entry stands for the segment's start: after compaction its first batch may be later.
      const relative = last < 0 ? 0 : batchBaseOffset(buf, at) - this.baseOffset;
      this.index.append(relative, position, this.maxTimestamp, 0);
    }
    this.nextOffset = batchLastOffset(buf, at) + 1;
  }

  /**
   * Quarantines `range`, which ends where the next good batch starts: that batch gets an index
   * entry, so a lookup of an offset after the range never walks through it.
   */
  markDamaged(range: DamagedRange): void {
    this.damaged.push(range);
    this.#entryDue = true;
    this.nextOffset = Math.max(this.nextOffset, range.lastOffset + 1);
  }

  /** Adopts an open file handle (the active segment's, opened for writing). */
  setFile(file: FileHandle): void {
    this.#file = file;
  }

  /** The open file handle, which only the active segment is sure to have. */
  get openFile(): FileHandle | null {
    return this.#file;
  }

  /** The file for reading, opened on first use. */
  file(): Promise<FileHandle> {
    if (this.#file !== null) return Promise.resolve(this.#file);
    if (this.#opening === null) {
      this.#opening = open(this.walPath, "r").then(
        (file) => {
          this.#opening = null;
          if (this.deleted) {
            void file.close();
            throw new Error(`segment ${this.walPath} was deleted`);
          }
          this.#file = file;
          return file;
        },
        (err: unknown) => {
          this.#opening = null;
          throw err;
        },
      );
    }
    return this.#opening;
  }

  /** Reads up to `length` bytes at file `position` into `buf[0..]`; resolves with the bytes read. */
  async read(buf: Buffer, length: number, position: number): Promise<number> {
    return readFully(await this.file(), buf, length, position);
  }

  /**
   * Reads up to `length` bytes at file `position` into `buf[0..]` with direct I/O: `buf`, `length`
   * and `position` aligned to DIRECT_ALIGN (aligned-read-arena.ts). Fails with the open's error
   * (EINVAL where the file system has no O_DIRECT: the caller reads through the page cache then).
   */
  async readDirect(buf: Buffer, length: number, position: number): Promise<number> {
    let opening = this.#direct;
    if (opening === null) {
      const started = openDirect(this.walPath).catch((err: unknown) => {
        // A failed open is not kept: the next direct read (if the caller makes one) tries again.
        if (this.#direct === started) this.#direct = null;
        throw err;
      });
      opening = this.#direct = started;
    }
    const file = await opening;
    if (this.deleted) {
      // Opened after the close that went with the delete: nobody else will close it.
      if (this.#direct === opening) {
        this.#direct = null;
        void file.close().catch(() => {});
      }
      throw new Error(`segment ${this.walPath} was deleted`);
    }
    return readFully(file, buf, length, position);
  }

  /**
   * An fdatasync of `openFile`'s bare descriptor starts: a close waits for `syncEnded`, so that the
   * descriptor is never closed, and perhaps reused by another file, under it.
   */
  syncStarted(): void {
    this.#syncs++;
  }

  syncEnded(): void {
    if (--this.#syncs === 0) this.#syncsDone.wake();
  }

  /**
   * Closes the file; Node lets operations already running on its handle finish first, and this
   * waits for the fdatasyncs of its bare descriptor.
   */
  async closeFile(): Promise<void> {
    dropReadAhead(this);
    const opening = this.#opening;
    if (opening !== null) await opening.catch(() => {});
    const file = this.#file;
    this.#file = null;
    const direct = this.#direct;
    this.#direct = null;
    if (this.#syncs > 0) await this.#syncsDone.wait();
    if (file !== null) await file.close();
    // Reads running on it finish first (FileHandle.close waits for them).
    if (direct !== null) await direct.then((d) => d.close()).catch(() => {});
  }
}

/** The file opened for direct reads; EINVAL where there is no O_DIRECT (Node defines it only on Linux). */
function openDirect(path: string): Promise<FileHandle> {
  const flag = constants.O_DIRECT;
  if (flag === undefined)
    return Promise.reject(Object.assign(new Error("no O_DIRECT here"), { code: "EINVAL" }));
  return open(path, constants.O_RDONLY | flag);
}
