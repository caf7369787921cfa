/**
 * Compaction of one partition log (docs/compaction.md). A pass:
 *
 * 1. picks the closed segments it may rewrite: from the oldest on, while each is sealed, below the
 *    high watermark and older than minCompactionLagMs;
 * 2. builds the key map (key digest -> newest offset) from the first segment not yet compacted
 *    (the "dirty" part; the part before it already holds at most one record per key) up to the high
 *    watermark, the active segment included, stopping early if the map fills;
 * 3. rewrites each segment that loses a record (a dry run first finds out, without writing): a
 *    record is kept if no newer record has its key, unless it is a tombstone older than
 *    deleteRetentionMs; records without a key are dropped;
 * 4. swaps the new files in atomically (swap.ts) and the new segments into the list in one
 *    synchronous step, so readers see either the old segments or the new ones.
 *
 * All disk work is in chunks of at most a few hundred KiB with the event loop free in between, and
 * goes through the I/O throttle. Retention runs inside `exclusive` so that it never deletes a
 * segment while a swap is replacing it.
 */
import type { Logger } from "pino";
import { batchLastOffset, recordSize } from "../../format/batch-header.js";
import { expandBatches } from "../../format/compressed-batch.js";
import { ConchError, ErrorCode } from "../../format/errors.js";
import { StoredKafkaToConch } from "../../format/kafka/stored-kafka.js";
import { RecordCursor } from "../../format/record-cursor.js";
import type { LogConfig } from "../config.js";
import { DamageFound } from "../damaged-range.js";
import type { FileOps } from "../file-ops.js";
import type { LogStats } from "../log-stats.js";
import type { Segment } from "../segment.js";
import type { SegmentList } from "../segment-list.js";
import type { TailCache } from "../tail-cache.js";
import { coarseDue, type Ticker, TickTask } from "../ticker.js";
import { CleanedSegmentWriter } from "./cleaned-segment.js";
import { acquireCleanerSlot } from "./cleaner-slots.js";
import { IoThrottle } from "./io-throttle.js";
import { DIGEST_BYTES, KeyOffsetMap, keyDigest, slotsFor } from "./key-map.js";
import { SegmentFilter } from "./segment-filter.js";
import { completeSwap, removeSwapMarker, type SwapPlan, writeCheckpoint, writeSwapMarker } from "./swap.js";

/** Default cap on the distinct keys one pass maps: 2^20 slots, 24 MiB. */
export const DEFAULT_MAX_KEYS = 786_432;
/** Bytes read per step. */
const CHUNK_BYTES = 128 * 1024;

export interface CleanerContext {
  dir: string;
  segments: SegmentList;
  tail: TailCache;
  ops: FileOps;
  config: () => LogConfig;
  highWatermark: () => number;
  /** The log's read: whole batches from the one holding `offset`, skipping quarantined ranges. */
  read: (offset: number, maxBytes: number) => Promise<{ records: Buffer }>;
  /** Quarantines what a rescan of `seg` finds (a batch in it failed its check). */
  damageFound: (seg: Segment, damage: DamageFound) => Promise<void>;
  logger: Logger | undefined;
  /** From the checkpoint: segments starting below it were compacted. */
  cleanedEnd: number;
  /** Cap on the distinct keys a pass maps (memory: ~32 bytes each); undefined for the default. */
  maxKeys: number | undefined;
  /** Counted per committed pass (src/storage/log-stats.ts). */
  stats: LogStats;
  /** Runs the background checks (one timer for every log, ticker.ts). */
  ticker: Ticker;
}

export interface CompactionResult {
  /** Segments whose files were replaced (including ones left empty). */
  segmentsRewritten: number;
  /** Segments removed because nothing in them survived. */
  segmentsDropped: number;
  recordsRemoved: number;
  /** Bytes of the rewritten and dropped segments before and after. */
  bytesBefore: number;
  bytesAfter: number;
  /** Segments starting below this offset are compacted. */
  cleanedEnd: number;
}

/** Why a closing log's compaction pass stops (made once: LogCleaner.close). */
let closingReason: ConchError | null = null;

/** Whether the policy asks for compaction. */
export function compacts(config: Pick<LogConfig, "cleanupPolicy">): boolean {
  return config.cleanupPolicy !== "delete";
}

export class LogCleaner {
  readonly #ctx: CleanerContext;
  readonly #maxKeys: number;
  // What only a pass uses is made by the first pass: most logs never compact, and every open log
  // has a cleaner (a broker opens 10,000 logs at once, and each object is garbage-collector work).
  #throttle: IoThrottle | null = null;
  /** Aborted by close; made by the first pass, which `#closed` stops if close came first. */
  #abort: AbortController | null = null;
  #closed = false;
  #digest: Buffer | null = null;
  #cursor: RecordCursor | null = null;
  /** Made on the first pass that needs it: it holds a 1 MiB slab, and most logs never compact. */
  #toConch: StoredKafkaToConch | null = null;
  /** Made at the first compaction: most logs never compact, and 10,000 logs open at once. */
  #filter: SegmentFilter | null = null;
  #cleanedEnd: number;
  /** When the oldest kept tombstone expires; 0 = not known (a pass will find out). */
  #tombstoneDueMs = 0;
  /**
   * The background check, every #timerMs while the policy compacts and the log has a closed
   * segment (the active one is never compacted: a log of one segment has nothing to check).
   */
  #task: TickTask | null = null;
  #timerMs = 0;
  #passes: Promise<unknown> = Promise.resolve();
  #busy = false;
  #lock: Promise<unknown> = Promise.resolve();
  /** A committed swap whose file steps failed; finished before anything else. */
  #unfinished: SwapPlan | null = null;
  #warnedMapFull = false;
  #deleteRetentionMs: number;

  constructor(ctx: CleanerContext) {
    this.#ctx = ctx;
    this.#maxKeys = Math.max(1, ctx.maxKeys ?? DEFAULT_MAX_KEYS);
    // The active segment is never compacted: anything from it on was truncated and written anew.
    this.#cleanedEnd = Math.min(ctx.cleanedEnd, ctx.segments.active.baseOffset);
    this.#deleteRetentionMs = ctx.config().deleteRetentionMs;
    this.configure(ctx.config());
  }

  #segmentFilter(): SegmentFilter {
    this.#filter ??= new SegmentFilter(this.#ioThrottle());
    return this.#filter;
  }

  #ioThrottle(): IoThrottle {
    const ctx = this.#ctx;
    this.#throttle ??= new IoThrottle(() => ctx.config().compactionBytesPerSec);
    return this.#throttle;
  }

  /** The signal of this pass: aborted by close (already, when the log closed before any pass). */
  #signal(): AbortSignal {
    if (this.#abort === null) {
      this.#abort = new AbortController();
      if (this.#closed) this.#abort.abort(closingReason);
    }
    return this.#abort.signal;
  }

  #backgroundTask(): TickTask {
    this.#task ??= new TickTask((now) => this.#tick(now));
    return this.#task;
  }

  get cleanedEnd(): number {
    return this.#cleanedEnd;
  }

  /** Starts, restarts or stops the background checks for `config` (the log's current config). */
  configure(config: LogConfig): void {
    if (config.deleteRetentionMs !== this.#deleteRetentionMs) {
      this.#deleteRetentionMs = config.deleteRetentionMs;
      this.#tombstoneDueMs = 0;
    }
    const want = compacts(config) && !this.#closed ? config.compactionDelayMs : 0;
    if (want === this.#timerMs) return;
    if (this.#task !== null) this.#ctx.ticker.cancel(this.#task);
    this.#timerMs = want;
    this.segmentClosed();
  }

  /** A segment closed (or may have): the background checks start if they are on and stopped. */
  segmentClosed(): void {
    if (this.#timerMs > 0 && this.#task?.scheduled !== true && this.#ctx.segments.all.length > 1) {
      this.#ctx.ticker.schedule(this.#backgroundTask(), coarseDue(performance.now(), this.#timerMs));
    }
  }

  /**
   * Runs a pass now, after any running one; resolves with what it did. Unlike the background
   * checks, it looks at the compacted segments again even when no new segment has closed, so
   * records that newer data in the active segment supersedes go too.
   */
  compact(nowMs: number = Date.now(), force = true): Promise<CompactionResult> {
    const run = this.#passes.then(() => this.#pass(nowMs, force));
    this.#passes = run.catch(() => {});
    return run;
  }

  /** Runs `fn` while no swap is in progress (retention uses it), and keeps swaps out until it ends. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn);
    this.#lock = run.catch(() => {});
    return run;
  }

  /** Stops the checks, abandons a pass that has not committed, waits for one that has. */
  async close(): Promise<void> {
    // One reason for every log: an error made per log (its stack captured) was a few percent of
    // the event loop in a stop of 10,000 logs.
    closingReason ??= new ConchError(ErrorCode.SHUTTING_DOWN, "the partition log is closing");
    this.#closed = true;
    this.#abort?.abort(closingReason);
    if (this.#task !== null) this.#ctx.ticker.cancel(this.#task);
    await this.#passes;
    await this.#lock;
  }

  #tick(now: number): void {
    // Stops once retention or a truncation left only the active segment; the next roll restarts it.
    if (this.#timerMs > 0 && this.#ctx.segments.all.length > 1)
      this.#ctx.ticker.schedule(this.#backgroundTask(), coarseDue(now, this.#timerMs));
    if (this.#busy || !this.#needsPass(Date.now())) return;
    this.compact(Date.now(), false).catch((err: unknown) =>
      this.#ctx.logger?.warn({ err }, "compaction failed"),
    );
  }

  /** A cheap look at whether a pass would have work. */
  #needsPass(nowMs: number): boolean {
    const config = this.#ctx.config();
    if (!compacts(config)) return false;
    const all = this.#ctx.segments.all;
    const { cleanable, dirtyFrom } = this.#scope(all, nowMs, this.#ctx.highWatermark(), config);
    return cleanable > dirtyFrom || (dirtyFrom > 0 && this.#tombstoneDueMs < nowMs);
  }

  /** How many segments from the oldest may be rewritten, and the first not yet compacted. */
  #scope(
    all: readonly Segment[],
    nowMs: number,
    hw: number,
    config: LogConfig,
  ): { cleanable: number; dirtyFrom: number } {
    const closed = all.length - 1;
    const lagLimit = nowMs - config.minCompactionLagMs;
    let cleanable = 0;
    while (cleanable < closed) {
      const seg = all[cleanable]!;
      // Producer timestamps are only consulted for a lag: one far in the future must not hold
      // every later segment back when none was asked for.
      if (seg.nextOffset > hw) break;
      if (config.minCompactionLagMs > 0 && !seg.isEmpty && seg.maxTimestampMs > lagLimit) break;
      cleanable++;
    }
    let dirtyFrom = 0;
    while (dirtyFrom < closed && all[dirtyFrom]!.baseOffset < this.#cleanedEnd) dirtyFrom++;
    return { cleanable, dirtyFrom };
  }

  async #pass(nowMs: number, force: boolean): Promise<CompactionResult> {
    const result: CompactionResult = {
      segmentsRewritten: 0,
      segmentsDropped: 0,
      recordsRemoved: 0,
      bytesBefore: 0,
      bytesAfter: 0,
      cleanedEnd: this.#cleanedEnd,
    };
    const signal = this.#signal();
    if (signal.aborted || !compacts(this.#ctx.config())) return result;
    this.#busy = true;
    let release: (() => void) | null = null;
    const writers: { index: number; writer: CleanedSegmentWriter }[] = [];
    const state = { committed: false };
    let snapshot: readonly Segment[] = [];
    try {
      release = await acquireCleanerSlot(signal);
      if (this.#unfinished !== null) {
        const plan = this.#unfinished;
        await this.exclusive(() => completeSwap(this.#ctx.dir, plan));
        this.#unfinished = null;
      }
      await Promise.all(this.#ctx.segments.all.slice(0, -1).map((seg) => seg.sealing));
      const all = [...this.#ctx.segments.all];
      snapshot = all;
      const config = this.#ctx.config();
      const hw = this.#ctx.highWatermark();
      const { cleanable, dirtyFrom } = this.#scope(all, nowMs, hw, config);
      const dirty = cleanable > dirtyFrom;
      if (!force && !dirty && !(dirtyFrom > 0 && this.#tombstoneDueMs < nowMs)) return result;
      if (cleanable === 0) return result;

      const from = all[dirtyFrom]!.baseOffset;
      const map = new KeyOffsetMap(slotsFor(Math.max(1, hw - from), this.#maxKeys), this.#maxKeys);
      const covered = await this.#buildMap(map, all, dirtyFrom, hw, signal);
      const end = Math.min(Math.max(covered, dirtyFrom), cleanable);
      if (dirty && covered <= dirtyFrom && !this.#warnedMapFull) {
        this.#warnedMapFull = true;
        this.#ctx.logger?.warn(
          { segment: all[dirtyFrom]!.walPath, maxKeys: this.#maxKeys },
          "compaction key map cannot hold the keys of one segment; the segment stays uncompacted",
        );
      }
      const cleanedEnd = end > dirtyFrom ? all[end]!.baseOffset : this.#cleanedEnd;

      let due = Number.POSITIVE_INFINITY;
      for (let i = 0; i < end; i++) {
        const seg = all[i]!;
        if (seg.isEmpty || this.#keepsDamaged(seg)) continue;
        let writer: CleanedSegmentWriter | null = null;
        try {
          const dry = await this.#segmentFilter().filterSegment(seg, map, nowMs, config, null, signal);
          if (dry.removed === 0) {
            due = Math.min(due, dry.due);
            continue;
          }
          writer = new CleanedSegmentWriter(
            this.#ctx.dir,
            seg.baseOffset,
            this.#ctx.ops,
            config.indexIntervalBytes,
            this.#ioThrottle(),
            signal,
          );
          writers.push({ index: i, writer });
          await writer.open();
          const wet = await this.#segmentFilter().filterSegment(seg, map, nowMs, config, writer, signal);
          due = Math.min(due, wet.due);
          result.recordsRemoved += wet.removed;
          await writer.finish();
        } catch (err) {
          if (!(err instanceof DamageFound)) throw err;
          // Damage no scan had found yet: quarantine it, leave this segment as it is, go on.
          if (writer !== null) {
            writers.pop();
            await writer.discard();
          }
          await this.#ctx.damageFound(seg, err);
          this.#keepsDamaged(seg);
        }
      }

      if (writers.length === 0) {
        if (cleanedEnd !== this.#cleanedEnd) {
          await this.exclusive(() => writeCheckpoint(this.#ctx.dir, cleanedEnd));
          this.#cleanedEnd = cleanedEnd;
        }
      } else {
        await this.exclusive(() => this.#swap(all.slice(0, end), writers, cleanedEnd, result, state));
        if (!state.committed) return result;
      }
      this.#tombstoneDueMs = due;
      result.cleanedEnd = this.#cleanedEnd;
      const stats = this.#ctx.stats;
      stats.compactionPasses++;
      stats.compactionRecordsRemoved += result.recordsRemoved;
      stats.compactionBytesRemoved += result.bytesBefore - result.bytesAfter;
      if (result.segmentsRewritten > 0) {
        this.#ctx.logger?.info(
          {
            segmentsRewritten: result.segmentsRewritten,
            segmentsDropped: result.segmentsDropped,
            recordsRemoved: result.recordsRemoved,
            bytesBefore: result.bytesBefore,
            bytesAfter: result.bytesAfter,
          },
          "compacted segments",
        );
      }
      return result;
    } catch (err) {
      // Retention deleting a segment under the pass, or the log closing, just ends it.
      if (!state.committed && (signal.aborted || snapshot.some((seg) => seg.deleted))) return result;
      throw err;
    } finally {
      if (!state.committed) await Promise.all(writers.map(({ writer }) => writer.discard()));
      release?.();
      this.#busy = false;
    }
  }

  /**
   * Whether `seg` holds a quarantined range, and so stays as it is: its bad bytes are never
   * copied into a clean segment as if good, nor dropped.
   */
  #keepsDamaged(seg: Segment): boolean {
    if (seg.damaged.length === 0) return false;
    this.#ctx.logger?.warn(
      { segment: seg.walPath, quarantined: seg.damaged.length },
      "compaction leaves a segment with quarantined data as it is",
    );
    return true;
  }

  /**
   * Adds the keys of every record from the first dirty segment up to `hw`, newest offset winning.
   * Returns the index (in `all`) of the first segment not wholly in the map.
   */
  async #buildMap(
    map: KeyOffsetMap,
    all: readonly Segment[],
    dirtyFrom: number,
    hw: number,
    signal: AbortSignal,
  ): Promise<number> {
    this.#cursor ??= new RecordCursor();
    this.#digest ??= Buffer.allocUnsafe(DIGEST_BYTES);
    const cursor = this.#cursor;
    const digest = this.#digest;
    const throttle = this.#ioThrottle();
    let offset = all[dirtyFrom]!.baseOffset;
    let seg = dirtyFrom;
    while (offset < hw) {
      signal.throwIfAborted();
      const { records } = await this.#ctx.read(offset, CHUNK_BYTES);
      if (records.length === 0) break;
      await throttle.take(records.length, signal);
      // Kafka batches stored as they came are read as Conch copies, and compressed batches
      // decompressed: their keys supersede older records too.
      const keyed = (this.#toConch ??= new StoredKafkaToConch()).convert(records);
      const plain = expandBatches(keyed, 0, keyed.length, this.#ctx.config().maxBatchBytes);
      cursor.reset(plain);
      while (cursor.next()) {
        const o = cursor.offset;
        if (o >= hw) break;
        while (seg + 1 < all.length && all[seg + 1]!.baseOffset <= o) seg++;
        if (cursor.keyNull) continue;
        keyDigest(plain, cursor.keyStart, cursor.keyEnd, digest, 0);
        if (!map.put(digest, 0, o)) return seg;
      }
      let last = offset;
      for (let at = 0; at < records.length; at += recordSize(records, at))
        last = batchLastOffset(records, at);
      offset = last + 1;
    }
    return all.length - 1;
  }

  /**
   * The swap, run inside `exclusive`: checks that the segments are still there, commits (marker),
   * swaps the list, retires the old segments, then finishes the file steps. Returns false, having
   * changed nothing (`state.committed` stays false), when the segments changed meanwhile or the
   * log is closing.
   */
  async #swap(
    old: readonly Segment[],
    writers: readonly { index: number; writer: CleanedSegmentWriter }[],
    cleanedEnd: number,
    result: CompactionResult,
    state: { committed: boolean },
  ): Promise<void> {
    const list = this.#ctx.segments.all;
    if (this.#closed || list.length <= old.length) return;
    for (let i = 0; i < old.length; i++) if (list[i] !== old[i] || old[i]!.deleted) return;

    const plan: SwapPlan = { replace: [], drop: [], cleanedEnd };
    const fresh: Segment[] = [...old];
    const retired: Segment[] = [];
    // Back to front, so that removing an entry leaves the indexes still to visit in place.
    for (let w = writers.length - 1; w >= 0; w--) {
      const { index, writer } = writers[w]!;
      const before = old[index]!;
      const after = writer.segment;
      retired.push(before);
      result.bytesBefore += before.size;
      result.bytesAfter += after.size;
      // The first segment stays even when empty, so that the log start does not move.
      if (after.isEmpty && index > 0) {
        plan.drop.push(before.baseOffset);
        fresh.splice(index, 1);
        result.segmentsDropped++;
      } else {
        plan.replace.push({ base: before.baseOffset, index: writer.hasIndex });
        fresh[index] = after;
        result.segmentsRewritten++;
      }
    }
    try {
      await writeSwapMarker(this.#ctx.dir, plan);
    } catch (err) {
      await removeSwapMarker(this.#ctx.dir).catch(() => {});
      throw err;
    }
    // Committed: from here on a crash finishes the swap at the next open.
    state.committed = true;
    if (!this.#ctx.segments.replace(old, fresh)) throw new Error("compaction swap: the segment list changed");
    for (const seg of retired) {
      // Readers holding an old segment read on from its open file, or retry on the new list.
      seg.deleted = true;
      this.#ctx.tail.forget(seg);
    }
    for (const { writer } of writers) {
      if (writer.segment.isEmpty && plan.drop.includes(writer.base)) await writer.segment.closeFile();
    }
    await Promise.all(retired.map((seg) => seg.closeFile().catch(() => {})));
    try {
      await completeSwap(this.#ctx.dir, plan);
    } catch (err) {
      this.#unfinished = plan;
      this.#cleanedEnd = cleanedEnd;
      throw err;
    }
    this.#cleanedEnd = cleanedEnd;
  }
}
