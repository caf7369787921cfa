/**
 * The write path of one partition log. The event loop is the only writer: `append` checks the
 * batches, copies them into the append buffer and stamps their base offsets in the same tick (the
 * only serialized step, so call order is offset order). One write runs at a time; everything
 * appended while it runs goes out in the next single writev. The written end advances only when a
 * write has completed in full; a failed or short write fails every append it carried and every
 * append queued behind it, and the file is cut back to the last good position, so memory never
 * runs ahead of the file.
 */
import type { Logger } from "pino";
import {
  batchBaseOffset,
  batchCount,
  batchLastOffset,
  recordSize,
  stampBaseOffset,
} from "../format/batch-header.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { MaxTimestampRepairs } from "../format/kafka/max-timestamp-repairs.js";
import { MAX_OFFSET } from "../format/layout.js";
import { batchProducerId, NO_PRODUCER_ID } from "../format/producer-fields.js";
import { validateBatches } from "../format/validate.js";
import type { AppendBuffer, Chunk } from "./append-buffer.js";
import { extendReserve } from "./block-reserve.js";
import type { LogConfig } from "./config.js";
import type { Spill } from "./deferred-records.js";
import type { FileOps } from "./file-ops.js";
import { GroupCommit, type SyncDone } from "./flusher.js";
import { IdleWaiters } from "./idle-waiters.js";
import { storageLogLimiter } from "./log-limiter.js";
import type { LogStats } from "./log-stats.js";
import { type AppendListener, PendingAppend } from "./pending-append.js";
import { idempotentAppend } from "./producers/idempotent-append.js";
import { ProducerCheck, type ProducerTable } from "./producers/producer-table.js";
import type { Segment } from "./segment.js";
import type { SegmentList } from "./segment-list.js";
import type { SegmentPreparer } from "./segment-preparer.js";
import { SegmentRoller } from "./segment-roller.js";
import { storageError } from "./storage-error.js";
import type { TailCache } from "./tail-cache.js";
import { joinWritePass } from "./write-pass.js";

/** What requestSync returns when there is nothing to wait for. */
const SETTLED: Promise<void> = Promise.resolve();

/**
 * The Kafka batches of the append being validated whose max_timestamp is set right in the copy:
 * one list for every writer, as an append is validated and copied within one synchronous call.
 */
const repairs = new MaxTimestampRepairs();

/** What the writer tells the log. */
export interface WriterEvents {
  /** The written log end moved (whole batches are in the OS). */
  written(writtenOffset: number): void;
  /** An fsync completed, covering the log up to `flushedOffset`. */
  flushed(flushedOffset: number): void;
  /** A new active segment was started. */
  rolled(): void;
}

export interface WriterOptions {
  dir: string;
  segments: SegmentList;
  tail: TailCache;
  chunks: AppendBuffer;
  /** Where spills are framed: shared by the logs of the process (spill-chunks.ts). */
  spillChunks: AppendBuffer;
  preparer: SegmentPreparer;
  ops: FileOps;
  config: () => LogConfig;
  events: WriterEvents;
  logger: Logger | undefined;
  stats: LogStats;
  /** The partition's idempotent producers, checked and updated as offsets are assigned. */
  producers: ProducerTable;
  /** Where the flushed end starts, when below the log end (recovered data not fsynced yet). */
  flushedOffset?: number;
  /**
   * fsyncs of directories that the log's first open made entries in (its own directory, its first
   * segment) and left to the first fsync: nothing written can count as durable before they end.
   */
  owedDirSync?: (() => Promise<void>) | null;
}

export class LogWriter {
  readonly #o: WriterOptions;
  readonly #buffer: AppendBuffer;
  readonly #commit: GroupCommit;
  /**
   * Appends queued and not yet written are queue[head, end). The array is reused: emptied, it
   * starts over at 0 instead of being replaced (an emptied JS array gives up its backing store,
   * and the next push would allocate another, every pass). Entries are cleared once settled.
   */
  #queue: Array<PendingAppend | null> = [];
  #head = 0;
  #end = 0;
  #nextOffset: number;
  #writtenOffset: number;
  #writing = false;
  /** Whether the spills queued last are to be cached once written (appendSpill). */
  #cacheSpills = true;
  /** Queue index after the last append carried by the write running now (0 when none runs). */
  #inFlightEnd = 0;
  /** The write vector of the pass running now: runs of contiguous chunk bytes, reused. */
  readonly #iov: Buffer[] = [];
  readonly #runChunks: Chunk[] = [];
  readonly #runStarts: number[] = [];
  /** Runs in this pass: the run arrays keep their length between passes, for the same reason. */
  #runCount = 0;
  #iovBytes = 0;
  /** Settled when the pump stops (for idle()). */
  readonly #idle = new IdleWaiters();
  readonly #roller: SegmentRoller;
  #failure: ConchError | null = null;
  /** fdatasyncs of closed segments that an fsync has taken and that have not ended (never reject). */
  #closing: Promise<unknown> | null = null;
  /** What requestSync's callers wait on until an fsync covers #syncTarget, else null. */
  #syncWait: Promise<void> | null = null;
  #synced: (() => void) | null = null;
  #syncTarget = 0;
  /** The directory fsyncs the open left to the first fsync, not started yet (WriterOptions). */
  #owedDirSync: (() => Promise<void>) | null;
  /** Those fsyncs, once started and until they succeed: every fsync waits for them first. */
  #dirSync: Promise<void> | null = null;

  constructor(options: WriterOptions) {
    this.#o = options;
    this.#owedDirSync = options.owedDirSync ?? null;
    this.#buffer = options.chunks;
    this.#nextOffset = options.segments.active.nextOffset;
    this.#writtenOffset = this.#nextOffset;
    this.#roller = new SegmentRoller({
      dir: options.dir,
      segments: options.segments,
      preparer: options.preparer,
      ops: options.ops,
      logger: options.logger,
      fatal: (error) => this.#fatal(error),
      failed: () => this.#failure !== null,
    });
    this.#commit = new GroupCommit(
      Math.min(options.flushedOffset ?? this.#writtenOffset, this.#writtenOffset),
      () => this.#writtenOffset,
      (done) => this.#syncWritten(done),
      (offset) => {
        if (offset >= this.#syncTarget) this.#settleSync();
        options.events.flushed(offset);
      },
      (err) => this.#fatal(storageError("fsync failed", err)),
      options.stats.counting ? options.stats : null,
    );
  }

  /** The next offset to assign. */
  get nextOffset(): number {
    return this.#nextOffset;
  }

  /** The end of what has been written to the file. */
  get writtenOffset(): number {
    return this.#writtenOffset;
  }

  get flushedOffset(): number {
    return this.#commit.flushedOffset;
  }

  /** Set once the log can no longer write (a failed fsync, or a file that could not be cut back). */
  get failure(): ConchError | null {
    return this.#failure;
  }

  /**
   * Validates `batches` (throwing before anything changes), copies and stamps them, and queues the
   * write. Returns the pending append; it tells `listener`, or settles its promise, per the flush
   * policy.
   */
  append(batches: Uint8Array, durable: boolean, listener: AppendListener | null = null): PendingAppend {
    const config = this.#o.config();
    const { records } = validateBatches(batches, config.maxBatchBytes, repairs);
    const base = this.#baseFor(records);
    // The producer check runs here, where offsets are assigned: of two retries of one batch, the
    // second finds the first recorded.
    const producers = this.#o.producers;
    const idempotent = idempotentAppend(batches);
    if (idempotent && producers.check(batches, 0) === ProducerCheck.DUPLICATE) {
      // Stored already: nothing is written, and the answer waits for the original's write.
      const dup = new PendingAppend(
        producers.duplicateBaseOffset,
        producers.duplicateLastOffset,
        null,
        0,
        0,
        durable,
        listener,
        this.#o.stats,
      );
      dup.duplicate = true;
      this.#enqueue(dup);
      return dup;
    }
    const buffer = this.#buffer;
    buffer.copyIn(batches);
    const chunk = buffer.chunk;
    const start = buffer.start;
    const end = start + batches.length;
    const buf = chunk.buf;
    if (repairs.count > 0) repairs.applyTo(buf, start);
    const offset = stampOffsets(buf, start, end, base);
    if (idempotent) producers.record(batches, 0, base, Date.now());
    return this.#queueCopy(base, offset, chunk, start, end, durable, listener);
  }

  /**
   * `append` of deferred records' spill (deferred-records.ts): framed straight into the spills'
   * append buffer, shared by every log (spill-chunks.ts), then stamped with the next offsets and
   * queued like any append. No check of the batches: this process framed them from records checked
   * on arrival and computed their CRCs. `cached`: once written, the spill goes into the tail cache
   * (else readers find it in the file, and its chunk can be reused at once).
   */
  appendSpill(spill: Spill, listener: AppendListener, cached: boolean): PendingAppend {
    this.#cacheSpills = cached;
    const base = this.#baseFor(spill.records);
    const buffer = this.#o.spillChunks;
    buffer.reserve(spill.bytes);
    const chunk = buffer.chunk;
    const start = buffer.start;
    const end = start + spill.bytes;
    const buf = chunk.buf;
    spill.frameInto(buf, start);
    const next = stampOffsets(buf, start, end, base);
    return this.#queueCopy(base, next, chunk, start, end, false, listener);
  }

  /**
   * `append` for a follower: the batches keep the offsets their leader stamped, which must carry on
   * from the log end (further on only where compaction removed records, with `allowGaps`).
   */
  appendStamped(
    batches: Uint8Array,
    durable: boolean,
    listener: AppendListener | null,
    allowGaps: boolean,
  ): PendingAppend {
    validateBatches(batches, this.#o.config().maxBatchBytes);
    if (this.#failure !== null) throw this.#failure;
    let next = this.#nextOffset;
    const base = batches.length > 0 ? batchBaseOffset(batches, 0) : next;
    for (let at = 0; at < batches.length; at += recordSize(batches, at)) {
      const batchBase = batchBaseOffset(batches, at);
      if (batchBase < next || (!allowGaps && batchBase !== next)) {
        throw new ConchError(
          ErrorCode.INVALID_BATCH,
          `a replicated batch at offset ${batchBase} does not follow the log end ${next}`,
        );
      }
      next = batchLastOffset(batches, at) + 1;
    }
    // A follower keeps its leader's producer state too, so that it can take over the checks.
    const producers = this.#o.producers;
    const now = Date.now();
    for (let at = 0; at < batches.length; at += recordSize(batches, at)) {
      if (batchProducerId(batches, at) !== NO_PRODUCER_ID) {
        producers.record(batches, at, batchBaseOffset(batches, at), now);
      }
    }
    const buffer = this.#buffer;
    buffer.copyIn(batches);
    const start = buffer.start;
    return this.#queueCopy(base, next, buffer.chunk, start, start + batches.length, durable, listener);
  }

  /** The offset `records` new records would start at; throws if the log failed or they would not fit. */
  #baseFor(records: number): number {
    if (this.#failure !== null) throw this.#failure;
    const base = this.#nextOffset;
    if (base + records - 1 > MAX_OFFSET) {
      throw new ConchError(ErrorCode.STORAGE_ERROR, "the log has reached the largest offset");
    }
    return base;
  }

  #queueCopy(
    base: number,
    next: number,
    chunk: Chunk,
    start: number,
    end: number,
    durable: boolean,
    listener: AppendListener | null,
  ): PendingAppend {
    const pending = new PendingAppend(base, next - 1, chunk, start, end, durable, listener, this.#o.stats);
    this.#nextOffset = next;
    this.#enqueue(pending);
    return pending;
  }

  /** The log was cut back to `offset` (truncation; the write path is idle): the ends follow. */
  rewind(offset: number): void {
    this.#nextOffset = offset;
    this.#writtenOffset = offset;
    this.#commit.rewind(offset);
    if (offset <= this.#syncTarget) this.#settleSync();
  }

  /** Resolves once an fsync covers everything appended before the call. */
  flush(): Promise<unknown> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    const marker = new PendingAppend(this.#nextOffset, this.#nextOffset - 1, null, 0, 0, true);
    this.#enqueue(marker);
    return marker.promise;
  }

  /**
   * Asks for an fsync of what is written (the interval flush, flush-queue.ts). The promise settles
   * when an fsync covers it, at once if nothing needs one; it never rejects (a failed fsync fails
   * the log, which reports that itself). The commit's own waiters are not involved: an interval
   * fsync is no group commit of appends.
   */
  requestSync(): Promise<void> {
    const target = this.#writtenOffset;
    if (this.#failure !== null || target <= this.#commit.flushedOffset) return SETTLED;
    this.#commit.request();
    // A second caller (a config change during the queue's fsync) waits with the first, for all
    // that is written now: the fsync just requested covers it.
    this.#syncTarget = target;
    this.#syncWait ??= new Promise<void>((resolve) => {
      this.#synced = resolve;
    });
    return this.#syncWait;
  }

  /**
   * What the log had written up to `target` was made durable by a syncfs of its file system
   * (flush-queue.ts, the bulk path), directory entries included: the directory fsyncs the open
   * left owed are no longer needed, and the flushed end moves as after an fsync of the log.
   */
  syncedBy(target: number): void {
    if (this.#failure !== null) return;
    this.#owedDirSync = null;
    this.#commit.covered(Math.min(target, this.#writtenOffset));
  }

  #settleSync(): void {
    const synced = this.#synced;
    if (synced === null) return;
    this.#synced = null;
    this.#syncWait = null;
    this.#syncTarget = 0;
    synced();
  }

  /** Resolves when the queue is empty, every roll's segment is sealed and no fsync runs. */
  async idle(): Promise<void> {
    if (this.#writing) await this.#idle.wait();
    await Promise.all(this.#o.segments.all.map((seg) => seg.sealing));
    await this.#commit.idle();
  }

  #enqueue(pending: PendingAppend): void {
    const queue = this.#queue;
    if (this.#end < queue.length) queue[this.#end] = pending;
    else queue.push(pending);
    this.#end++;
    if (!this.#writing) {
      this.#writing = true;
      // Appends made in the same pass of the event loop as the first one (every connection's data
      // read in this poll phase) join its write: the write starts in the check phase right after,
      // in one pass with every other log's (write-pass.ts).
      joinWritePass(this.#pump);
    }
  }

  /**
   * Writes until the queue is empty. A pass that completes on the event loop (the common case: a
   * synchronous write, no roll, no fsync to wait for) loops on without a promise; a pass that must
   * wait hands back its promise, and the pump resumes when it settles.
   */
  readonly #pump = (): void => {
    try {
      while (this.#head < this.#end && this.#failure === null) {
        const waiting = this.#writeSome();
        if (waiting !== null) {
          waiting.then(this.#pump, this.#pumpFailed);
          return;
        }
      }
    } catch (err) {
      this.#pumpFailed(err);
      return;
    }
    this.#stopped();
  };

  readonly #pumpFailed = (err: unknown): void => {
    this.#fatal(storageError("unexpected write path failure", err));
    this.#stopped();
  };

  #stopped(): void {
    this.#writing = false;
    this.#idle.wake();
  }

  /**
   * One pass: waits for a running fsync or rolls first when it must (returning the promise to wait
   * for; the next pass starts over), else writes all queued appends that fit the active segment.
   * Returns null when the pass completed on the event loop.
   */
  #writeSome(): Promise<unknown> | null {
    const o = this.#o;
    const config = o.config();
    const seg = o.segments.active;
    const first = this.#queue[this.#head]!;
    if (
      first.byteLength > 0 &&
      !seg.isEmpty &&
      (seg.size + first.byteLength > config.segmentBytes || Date.now() - seg.rollStartMs >= config.segmentMs)
    ) {
      return this.#roll(config.segmentBytes);
    }

    const queue = this.#queue;
    const from = this.#head;
    const to = this.#gather(seg.size, config.segmentBytes);
    if (this.#iovBytes === 0) {
      this.#written(seg, config, from, to);
      return null;
    }
    const file = seg.openFile!;
    this.#inFlightEnd = to;
    if (o.ops.writevSync !== undefined) {
      // Written on the event loop, also while an fsync of this log runs: a write into the page
      // cache costs less than handing it to the thread pool and back (docs/performance/hot-path.md, "Hot
      // path, first round"), and one made during an fsync lets the next fsync start at once
      // (durable.md, "Hot path, eighth round": such a write rarely waits for the running fsync).
      let written = 0;
      let error: unknown = null;
      try {
        written = o.ops.writevSync(file, this.#writeVector(), seg.size);
      } catch (err) {
        error = err;
      }
      return this.#afterWrite(queue, seg, config, from, to, written, error);
    }
    return o.ops.writev(file, this.#writeVector(), seg.size).then(
      (written) => this.#afterWrite(queue, seg, config, from, to, written, null),
      (err: unknown) => this.#afterWrite(queue, seg, config, from, to, 0, err ?? new Error("write failed")),
    );
  }

  async #roll(segmentBytes: number): Promise<void> {
    try {
      await this.#roller.roll(segmentBytes);
      this.#o.stats.segmentsRolled++;
      this.#o.events.rolled();
    } catch (err) {
      // A full disk fails every roll: one line per interval (log-limiter.ts).
      storageLogLimiter.log(
        this.#o.logger,
        "error",
        "segment roll failed",
        { err },
        "segment roll failed; appends failed",
      );
      this.#failQueue(storageError("segment roll failed", err));
    }
  }

  /**
   * Collects queue[head, to) into the reused write vector as runs of contiguous chunk bytes,
   * stopping before the first append that would overflow the segment; returns `to`.
   */
  #gather(size: number, segmentBytes: number): number {
    const queue = this.#queue;
    let bytes = 0;
    let runChunk: Chunk | null = null;
    let runStart = 0;
    let runEnd = 0;
    let to = this.#head;
    const end = this.#end;
    for (; to < end; to++) {
      const p = queue[to]!;
      if (p.chunk === null) continue;
      const n = p.byteLength;
      if (size + bytes > 0 && size + bytes + n > segmentBytes) break;
      if (p.chunk === runChunk && p.start === runEnd) {
        runEnd = p.end;
      } else {
        if (runChunk !== null) this.#addRun(runChunk, runStart, runEnd);
        runChunk = p.chunk;
        runStart = p.start;
        runEnd = p.end;
      }
      bytes += n;
    }
    if (runChunk !== null) this.#addRun(runChunk, runStart, runEnd);
    this.#iovBytes = bytes;
    return to;
  }

  #addRun(chunk: Chunk, start: number, end: number): void {
    const n = this.#runCount++;
    const run = chunk.buf.subarray(start, end);
    if (n < this.#runChunks.length) {
      this.#iov[n] = run;
      this.#runChunks[n] = chunk;
      this.#runStarts[n] = start;
    } else {
      this.#iov.push(run);
      this.#runChunks.push(chunk);
      this.#runStarts.push(start);
    }
  }

  /** The write vector of this pass: exactly its runs (shortening an array to 1 or more keeps its store). */
  #writeVector(): Buffer[] {
    const iov = this.#iov;
    if (iov.length !== this.#runCount) iov.length = this.#runCount;
    return iov;
  }

  #clearRuns(): void {
    this.#runCount = 0;
  }

  /** A write of queue[from, to) ended: `written` bytes, or `error` (null when none was thrown). */
  #afterWrite(
    queue: Array<PendingAppend | null>,
    seg: Segment,
    config: LogConfig,
    from: number,
    to: number,
    written: number,
    error: unknown,
  ): Promise<void> | null {
    this.#inFlightEnd = 0;
    if (this.#queue !== queue || this.#failure !== null) {
      // A failed fsync meanwhile already failed these appends and everything after them.
      this.#clearRuns();
      this.#release(queue, from, to);
      return null;
    }
    const bytes = this.#iovBytes;
    if (error === null && written !== bytes) {
      error = new Error(`short write: ${written} of ${bytes} bytes (disk full?)`);
    }
    if (error !== null) {
      this.#clearRuns();
      const failure = storageError(`write to ${seg.walPath} failed`, error);
      const failed = queue.slice(from, to) as PendingAppend[];
      this.#release(queue, from, to);
      this.#head = to;
      return this.#writeFailed(seg, failure, failed);
    }
    this.#written(seg, config, from, to);
    return null;
  }

  /** queue[from, to) is in the file: index it, cache it, advance the written end, acknowledge. */
  #written(seg: Segment, config: LogConfig, from: number, to: number): void {
    const o = this.#o;
    const iov = this.#iov;
    let pos = seg.size;
    for (let r = 0; r < this.#runCount; r++) {
      const chunk = this.#runChunks[r]!;
      const start = this.#runStarts[r]!;
      const length = iov[r]!.length;
      const end = start + length;
      for (let at = start; at < end; at += recordSize(chunk.buf, at)) {
        seg.noteBatch(chunk.buf, at, pos + at - start, config.indexIntervalBytes);
      }
      if (!chunk.spills || this.#cacheSpills) o.tail.add(seg, pos, chunk, start, length);
      pos += length;
    }
    this.#clearRuns();
    seg.size = pos;
    if (pos > seg.fileSize) seg.fileSize = pos;
    const queue = this.#queue;
    this.#writtenOffset = seg.nextOffset;
    this.#head = to;
    this.#release(queue, from, to);
    o.events.written(this.#writtenOffset);

    const sync = config.flush === "sync";
    for (let i = from; i < to; i++) {
      const p = queue[i]!;
      queue[i] = null;
      if (sync || p.durable) this.#commit.add(p, this.#writtenOffset);
      else p.acknowledge();
    }
    this.#compactQueue();
    if (seg.size >= config.segmentBytes / 2) o.preparer.prepare(config.segmentBytes);
    extendReserve(seg, o.ops, config.segmentBytes);
  }

  #compactQueue(): void {
    if (this.#head === this.#end) {
      this.#head = 0;
      this.#end = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#end) {
      this.#queue = this.#queue.slice(this.#head, this.#end);
      this.#end -= this.#head;
      this.#head = 0;
    }
  }

  /**
   * After a failed write: drops everything queued behind it (their offsets assumed it), cuts the
   * file back, then fails the write's appends and those behind it, so that a caller who sees the
   * failure finds the log consistent again.
   */
  async #writeFailed(seg: Segment, error: ConchError, failed: PendingAppend[]): Promise<void> {
    const behind = this.#dropQueue();
    // A full disk fails every write: one line per interval (log-limiter.ts).
    storageLogLimiter.log(
      this.#o.logger,
      "error",
      "write failed",
      { err: error.cause ?? error, segment: seg.walPath, position: seg.size },
      "write failed; appends failed",
    );
    try {
      await this.#o.ops.truncate(seg.openFile!, seg.size);
      seg.fileSize = seg.size;
    } catch (truncateErr) {
      this.#fatal(
        storageError(`cannot cut ${seg.walPath} back to ${seg.size} bytes after a failed write`, truncateErr),
      );
    } finally {
      for (const p of failed) p.fail(error);
      for (const p of behind) p.fail(error);
    }
  }

  /** The writer is done with the chunks of queue[from, to). */
  #release(queue: Array<PendingAppend | null>, from: number, to: number): void {
    for (let i = from; i < to; i++) {
      const chunk = queue[i]!.chunk;
      if (chunk === null) continue;
      chunk.outstanding--;
      this.#buffer.release(chunk);
    }
  }

  /** Rejects every queued append and rewinds offset assignment to the written end. */
  #failQueue(error: ConchError): void {
    for (const p of this.#dropQueue()) p.fail(error);
  }

  /**
   * Empties the queue and rewinds offset assignment to the written end; returns the appends taken
   * out, for the caller to fail. The chunks of a write still running stay referenced until it
   * completes.
   */
  #dropQueue(): PendingAppend[] {
    const queue = this.#queue;
    const dropped = queue.slice(this.#head, this.#end) as PendingAppend[];
    this.#release(queue, Math.max(this.#head, this.#inFlightEnd), this.#end);
    this.#queue = [];
    this.#head = 0;
    this.#end = 0;
    this.#nextOffset = this.#writtenOffset;
    // The dropped appends are not stored: their producers' retries must be appended, not matched.
    this.#o.producers.truncate(this.#writtenOffset);
    return dropped;
  }

  /**
   * The group commit's fsync of everything written: the active file, and the segments closed
   * since an earlier fsync took their fdatasyncs. Those stay in `#closing` until they end, so that
   * an fsync running beside the one that took them cannot end first and acknowledge their data.
   * The first one also starts the directory fsyncs the open left owed, and none ends before they do.
   */
  #syncWritten(done: SyncDone): void {
    const owed = this.#owedDirSync;
    if (owed !== null) {
      this.#owedDirSync = null;
      const dirSync = owed();
      this.#dirSync = dirSync;
      dirSync.then(
        () => {
          if (this.#dirSync === dirSync) this.#dirSync = null;
        },
        () => {}, // failed: every fsync that waits for it fails, and so the log (#fatal)
      );
    }
    const dirSync = this.#dirSync;
    if (dirSync === null) {
      this.#syncData(done);
      return;
    }
    // Both at once; `done` once both ended, with the first failure.
    let left = 2;
    let failure: unknown = null;
    const ended = (err: unknown) => {
      if (err !== null && err !== undefined && failure === null) failure = err;
      if (--left === 0) done(failure);
    };
    dirSync.then(
      () => ended(null),
      (err: unknown) => ended(err ?? new Error("directory fsync failed")),
    );
    try {
      this.#syncData(ended);
    } catch (err) {
      ended(err ?? new Error("fsync failed"));
    }
  }

  /** The fsync of the data: the active segment, and the closed segments' fdatasyncs taken now. */
  #syncData(done: SyncDone): void {
    const ops = this.#o.ops;
    const seg = this.#o.segments.active;
    const unsynced = this.#roller.takeUnsynced();
    if (unsynced.length > 0) {
      const closing = Promise.all(this.#closing === null ? unsynced : [this.#closing, ...unsynced]);
      this.#closing = closing;
      void closing.then(() => {
        if (this.#closing === closing) this.#closing = null;
      });
    }
    if (this.#closing === null && ops.datasyncFd !== undefined) {
      // On the bare descriptor: the file handle's promise cost more per fsync (docs/performance/durable.md,
      // "tenth round"). The segment's close waits for it (Segment.syncStarted): a roll and a
      // retention delete may close this file before it ends.
      seg.syncStarted();
      try {
        ops.datasyncFd(seg.openFile!.fd, (err) => {
          seg.syncEnded();
          done(err);
        });
      } catch (err) {
        seg.syncEnded();
        throw err;
      }
      return;
    }
    const datasync = ops.datasync(seg.openFile!);
    (this.#closing === null ? datasync : Promise.all([datasync, this.#closing])).then(
      () => done(null),
      (err: unknown) => done(err ?? new Error("fsync failed")),
    );
  }

  /** The log cannot keep its promises any more: fail everything waiting, refuse new appends. */
  #fatal(error: ConchError): void {
    if (this.#failure !== null) return;
    this.#failure = error;
    this.#settleSync();
    this.#o.logger?.error({ err: error.cause ?? error }, `partition log failed: ${error.message}`);
    this.#failQueue(error);
    this.#commit.failAll(error);
  }
}

/** Gives the batches at `buf[start..end)` offsets from `base` on; returns the offset after them. */
function stampOffsets(buf: Buffer, start: number, end: number, base: number): number {
  let offset = base;
  for (let at = start; at < end; at += recordSize(buf, at)) {
    stampBaseOffset(buf, at, offset);
    offset += batchCount(buf, at);
  }
  return offset;
}
