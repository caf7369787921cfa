/**
 * The broker's shared log (docs/shared-log.md, "Step 2, designed"): entries of many partitions'
 * records, appended in one file at a time and written once a write pass, made durable by one group
 * commit for the whole broker, and deleted a segment at a time once every partition has its
 * records in its own files, durably.
 *
 * An entry's records are *deferred* for each partition it names until they are *spilled* into
 * that partition's log (the caller's part): `addSpans` counts them against the entry's segment,
 * `spilled` counts one off once the spilled batch is written to the partition's file. `retire`
 * deletes the oldest segments whose every span was spilled, after a sync of the file system (one
 * syncfs for every partition) that started after the last of those spills.
 *
 * Positions are byte positions across the segments: an entry's is where its length field starts.
 */
import { fdatasync, unlinkSync, writevSync } from "node:fs";
import type { Logger } from "pino";
import { GroupCommit } from "../flusher.js";
import { type AppendListener, PendingAppend } from "../pending-append.js";
import { syncDirShared } from "../shared-dir-sync.js";
import { type SyncFs, syncFileSystemOrAll } from "../syncfs.js";
import { joinWritePass } from "../write-pass.js";
import { ENTRY_PREFIX_BYTES } from "./entry.js";
import { type ReplayEntry, readBack } from "./read-back.js";
import { SharedSegment } from "./segment.js";

export interface SharedLogOptions {
  /** A segment is rolled before an entry would take it past this (64 MiB). */
  segmentBytes?: number;
  /** The largest entry appended or read back (64 MiB). */
  maxEntryBytes?: number;
  /** The sync of the partitions' files before a segment is retired (syncfs of `dataDir`, or sync). */
  syncFs?: SyncFs;
  /** What `syncFs` is given: a directory on the partitions' file system (the shared log's own). */
  dataDir?: string;
  logger?: Logger;
}

export interface OpenedSharedLog {
  readonly log: SharedLog;
  /** The entries found, to replay (each partition's records past its recovered end). */
  readonly entries: ReplayEntry[];
}

export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_ENTRY_BYTES = 64 * 1024 * 1024;

/** An entry given a position and waiting for the write pass. */
interface Queued {
  readonly bytes: Uint8Array;
  readonly segment: SharedSegment;
  readonly pending: PendingAppend;
}

export class SharedLog {
  readonly dir: string;
  readonly #segmentBytes: number;
  readonly #maxEntryBytes: number;
  readonly #syncFs: SyncFs;
  readonly #dataDir: string;
  readonly #logger: Logger | undefined;
  /** Oldest first; the last is the one appended to. */
  readonly #segments: SharedSegment[];
  /** Segments made since the directory's last fsync: their entries are not durable before one. */
  #newSegments: SharedSegment[] = [];
  #queued: Queued[] = [];
  #pumpJoined = false;
  readonly #pump = () => this.#write();
  /** The position after the last byte written to a file. */
  #written: number;
  readonly #commit: GroupCommit;
  #failure: Error | null = null;
  #closed = false;
  #retiring: Promise<number> | null = null;
  /** Entries appended since the last retirement began: the active segment is rolled only when none were. */
  #appendedSinceRetire = 0;

  private constructor(dir: string, segments: SharedSegment[], options: SharedLogOptions) {
    this.dir = dir;
    this.#segments = segments;
    this.#segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.#maxEntryBytes = options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
    this.#syncFs = options.syncFs ?? syncFileSystemOrAll;
    this.#dataDir = options.dataDir ?? dir;
    this.#logger = options.logger;
    this.#written = segments.at(-1)!.end;
    // What the open found is in the page cache at least; it counts as written, and is fsynced by
    // the first sync (of every segment written since its last).
    for (const s of segments) s.synced = 0;
    this.#commit = new GroupCommit(
      0,
      () => this.#written,
      (done) => this.#sync(done),
      () => {},
      (err) => this.#fail(err),
    );
  }

  /** Opens the shared log in `dir`, reading back what it holds (docs/shared-log.md). */
  static async open(dir: string, options: SharedLogOptions = {}): Promise<OpenedSharedLog> {
    const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    const maxEntryBytes = options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
    if (!(Number.isSafeInteger(segmentBytes) && segmentBytes >= 1024))
      throw new RangeError("segmentBytes must be an integer of at least 1024");
    if (!(Number.isSafeInteger(maxEntryBytes) && maxEntryBytes >= 64))
      throw new RangeError("maxEntryBytes must be an integer of at least 64");
    // A segment holds entries up to segmentBytes, or one entry larger than that alone.
    const read = await readBack(dir, maxEntryBytes, Math.max(segmentBytes, maxEntryBytes), options.logger);
    return { log: new SharedLog(dir, read.segments, options), entries: read.entries };
  }

  /** The position the next entry gets. */
  get endPosition(): number {
    return this.#segments.at(-1)!.end;
  }

  /** The position after the last byte written to a file. */
  get writtenPosition(): number {
    return this.#written;
  }

  /** The position up to which an ended fsync covers everything. */
  get flushedPosition(): number {
    return this.#commit.flushedOffset;
  }

  get segmentCount(): number {
    return this.#segments.length;
  }

  /** Whether a write or fsync failed: no entry is taken any more. */
  get failed(): boolean {
    return this.#failure !== null;
  }

  /** Whether any entry is still kept (retirement would have something to do, or to wait for). */
  get holdsEntries(): boolean {
    return this.#segments.length > 1 || this.#segments[0]!.size > 0;
  }

  /**
   * Gives `entry` (an encoded entry, entry.ts; kept, not copied, until written: the caller must not
   * change it) the next position and queues it for the write pass. The listener is told once it is
   * written (`durable` false) or once an fsync covers it, with its position as `baseOffset`.
   * Returns the position. Throws when the entry is too large or the log has failed or is closed.
   */
  append(entry: Uint8Array, durable: boolean, listener: AppendListener): number {
    if (this.#closed) throw new Error("the shared log is closed");
    if (this.#failure !== null) throw this.#failure;
    if (entry.length < ENTRY_PREFIX_BYTES || entry.length > this.#maxEntryBytes) {
      throw new RangeError(`a shared log entry is 8 to ${this.#maxEntryBytes} bytes, not ${entry.length}`);
    }
    let segment = this.#segments.at(-1)!;
    if (segment.size > 0 && segment.size + entry.length > this.#segmentBytes) segment = this.#roll();
    const position = segment.end;
    segment.size += entry.length;
    this.#appendedSinceRetire++;
    const pending = new PendingAppend(position, position, null, 0, 0, durable, listener);
    this.#queued.push({ bytes: entry, segment, pending });
    if (!this.#pumpJoined) {
      this.#pumpJoined = true;
      joinWritePass(this.#pump);
    }
    return position;
  }

  /** Asks for an fsync of everything written (the interval's): one starts now or when one ends. */
  requestSync(): void {
    this.#commit.request();
  }

  /** `n` deferred spans of the entry at `position` now wait to be spilled. */
  addSpans(position: number, n: number): void {
    this.#segmentOf(position).unspilled += n;
  }

  /** One deferred span of the entry at `position` is spilled and written to its partition's file. */
  spilled(position: number): void {
    const segment = this.#segmentOf(position);
    if (segment.unspilled <= 0) throw new Error(`shared log: more spills than spans at ${position}`);
    segment.unspilled--;
  }

  /**
   * Deletes the oldest segments whose every span is spilled, after a sync of the partitions'
   * file system that started now (after those spills). The active segment is rolled first when
   * all of it is spilled and nothing was appended since the last retirement began, so a log gone
   * idle keeps no entry, and a busy one is not rolled (nor synced) at every call. Resolves with the
   * segments deleted; one retirement runs at a time (a call while one runs gets its result).
   * `stopping` rolls the active segment whenever all of it is spilled (a clean stop).
   */
  retire(stopping = false): Promise<number> {
    this.#retiring ??= this.#retire(stopping).finally(() => {
      this.#retiring = null;
    });
    return this.#retiring;
  }

  async #retire(stopping: boolean): Promise<number> {
    const active = this.#segments.at(-1)!;
    const quiet = stopping || this.#appendedSinceRetire === 0;
    this.#appendedSinceRetire = 0;
    if (quiet && active.size > 0 && active.unspilled === 0 && this.#queued.length === 0 && !this.#closed)
      this.#roll();
    let n = 0;
    while (n < this.#segments.length - 1 && this.#segments[n]!.unspilled === 0) n++;
    if (n === 0) return 0;
    await this.#syncFs(this.#dataDir);
    let deleted = 0;
    // Spans are never added to a segment that is not the active one, so the counts stay at zero;
    // a segment an fsync still runs on waits for the next retirement.
    while (deleted < n && this.#segments[0]!.syncsRunning === 0) {
      const segment = this.#segments.shift()!;
      segment.close();
      unlinkSync(segment.path);
      deleted++;
    }
    return deleted;
  }

  /** Waits for what is queued to be written and every running fsync, then closes the files. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#queued.length > 0) this.#write();
    await this.#commit.idle();
    for (const s of this.#segments) s.close();
  }

  #segmentOf(position: number): SharedSegment {
    const segments = this.#segments;
    for (let i = segments.length - 1; i >= 0; i--) {
      const s = segments[i]!;
      if (position >= s.base) {
        if (position >= s.end) break;
        return s;
      }
    }
    throw new RangeError(`shared log: no segment holds position ${position}`);
  }

  #roll(): SharedSegment {
    const segment = SharedSegment.create(this.dir, this.endPosition);
    this.#segments.push(segment);
    this.#newSegments.push(segment);
    return segment;
  }

  /** The write pass: every queued entry written, a segment's run with one writev. */
  #write(): void {
    this.#pumpJoined = false;
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    let failure: Error | null = this.#failure;
    let i = 0;
    while (i < queued.length && failure === null) {
      const segment = queued[i]!.segment;
      const buffers: Uint8Array[] = [];
      let bytes = 0;
      let j = i;
      for (; j < queued.length && queued[j]!.segment === segment; j++) {
        buffers.push(queued[j]!.bytes);
        bytes += queued[j]!.bytes.length;
      }
      try {
        writeAll(segment, buffers, bytes);
        segment.written += bytes;
        this.#written = segment.base + segment.written;
      } catch (err) {
        failure = err instanceof Error ? err : new Error(String(err));
        this.#fail(failure);
        break;
      }
      for (let k = i; k < j; k++) {
        const p = queued[k]!.pending;
        if (p.durable) this.#commit.add(p, p.baseOffset + queued[k]!.bytes.length);
        else p.acknowledge();
      }
      i = j;
    }
    for (; i < queued.length; i++) queued[i]!.pending.fail(failure!);
  }

  /**
   * One fsync of what is written: an fdatasync of each segment written since its last, and of the
   * directory when a segment was made since its last, all done before `done` is told.
   */
  #sync(done: (err: unknown) => void): void {
    const segments = this.#segments.filter((s) => s.written > s.synced);
    const newSegments = this.#newSegments;
    this.#newSegments = [];
    let left = segments.length + 1;
    let failure: unknown = null;
    const ended = (err: unknown) => {
      if (err !== null && err !== undefined && failure === null) failure = err;
      if (--left === 0) done(failure);
    };
    for (const s of segments) {
      const target = s.written;
      s.syncsRunning++;
      fdatasync(s.fd, (err) => {
        s.syncsRunning--;
        if (err === null && target > s.synced) s.synced = target;
        ended(err);
      });
    }
    if (newSegments.length === 0) queueMicrotask(() => ended(null));
    else
      syncDirShared(this.dir).then(
        () => ended(null),
        (err) => {
          this.#newSegments.push(...newSegments);
          ended(err);
        },
      );
  }

  #fail(err: unknown): void {
    const failure = err instanceof Error ? err : new Error(String(err));
    if (this.#failure !== null) return;
    this.#failure = failure;
    this.#logger?.error({ err: failure, dir: this.dir }, "shared log failed: no more entries are taken");
    this.#commit.failAll(failure);
  }
}

/** Writes `buffers` (`bytes` in all) at the segment's written end, all of them. */
function writeAll(segment: SharedSegment, buffers: Uint8Array[], bytes: number): void {
  let done = writevSync(segment.fd, buffers, segment.written);
  while (done < bytes) {
    // A short write (a full disk answers with one before its error): the rest, from where it ended.
    let skip = done;
    const rest: Uint8Array[] = [];
    for (const b of buffers) {
      if (skip >= b.length) skip -= b.length;
      else {
        rest.push(skip === 0 ? b : b.subarray(skip));
        skip = 0;
      }
    }
    const n = writevSync(segment.fd, rest, segment.written + done);
    if (n === 0) throw new Error(`${segment.path}: a write wrote nothing`);
    done += n;
  }
}
