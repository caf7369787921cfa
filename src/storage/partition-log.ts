/**
 * A partition's log: the storage contract of docs/design.md. Ties together recovery on open, the
 * write path (log-writer.ts), the read path (log-reader.ts), long polling, the flush interval and
 * retention. Its timed work runs on the storage ticker (ticker.ts), scheduled only while due: an
 * idle log has no timer and costs no wake-ups.
 *
 * `append` copies the caller's batches before it returns: the buffer is neither kept nor modified,
 * so the caller may reuse it at once (a view into a socket frame is fine).
 */
import { rm, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { BATCH_RECORDS_AT, MAX_OFFSET } from "../format/layout.js";
import type { PartitionIndex } from "../format/partition-index.js";
import { AppendBuffer } from "./append-buffer.js";
import { type AppendMemory, sharedAppendMemory } from "./append-memory.js";
import { reopenedReserve, settleReserve } from "./block-reserve.js";
import { rejectKeylessRecords } from "./compaction/keyed-records.js";
import { type CompactionResult, compacts, LogCleaner } from "./compaction/log-cleaner.js";
import { recoverSwap } from "./compaction/swap.js";
import { type FlushPolicy, type LogConfig, validateLogConfig } from "./config.js";
import { type DamageFound, describeRange, type QuarantinedRange } from "./damaged-range.js";
import { type DataWaiter, DataWaiters } from "./data-waiters.js";
import { DeferredRecords, type SpillSource, type SpillWritten } from "./deferred-records.js";
import { defaultFileOps, type FileOps, type StagedFile } from "./file-ops.js";
import { type FlushEntry, type FlushQueue, storageFlushQueue } from "./flush-queue.js";
import { IndexCheckpoint } from "./index-checkpoint.js";
import { LeaderEpochs } from "./leader-epochs.js";
import { dirSync, listOrCreate } from "./log-dir.js";
import { EMPTY, LogReader, outOfRange } from "./log-reader.js";
import { LogStats } from "./log-stats.js";
import { cutLog, restartLog, type TruncationContext } from "./log-truncation.js";
import { LogWriter } from "./log-writer.js";
import type { AppendListener, AppendResult, PendingAppend } from "./pending-append.js";
import { recoverProducers } from "./producers/producer-recovery.js";
import { stageProducerSnapshot } from "./producers/producer-snapshot.js";
import { type ProducerLimits, ProducerTable } from "./producers/producer-table.js";
import { recoverSegments, rescanSegment } from "./recovery.js";
import { segmentsToDelete } from "./retention.js";
import { Segment } from "./segment.js";
import { SegmentList } from "./segment-list.js";
import { walPath } from "./segment-name.js";
import { createSegmentFile, SegmentPreparer } from "./segment-preparer.js";
import { spillChunks } from "./spill-chunks.js";
import type { StopSync } from "./stop-sync.js";
import { storageError } from "./storage-error.js";
import { TailCache } from "./tail-cache.js";
import { coarseDue, storageTicker, type Ticker, TickTask } from "./ticker.js";

export type { AppendListener, AppendResult, CompactionResult, FlushPolicy, LogConfig, QuarantinedRange };

export interface ReadResult {
  /** Whole stored batches; empty when none. */
  records: Buffer;
  /** The next offset that will be visible. */
  highWatermark: number;
  logStartOffset: number;
}

/** Knobs beyond LogConfig, for tests and tuning; every one has a sensible default. */
export interface LogOptions {
  /** File operations to use (tests inject failures and count fsyncs). */
  fileOps?: FileOps;
  /** Bytes of recently written batches served from memory (default 4 MiB; 0 turns it off). */
  tailCacheBytes?: number;
  /** Size of the chunks appends are copied into (default 1 MiB). */
  appendChunkBytes?: number;
  /** How often retention runs in the background (default 60 s; 0 = never, call enforceRetention). */
  retentionCheckMs?: number;
  /**
   * How often the log checks whether it went quiet (default 10 s): after one quiet interval it
   * frees its spare append chunks, after three its tail cache.
   */
  trimIntervalMs?: number;
  /** Cap on the distinct keys one compaction pass maps (default 786,432: 24 MiB). */
  compactionMaxKeys?: number;
  /** Runs the log's timed work (default: the storage ticker every log in the process shares). */
  ticker?: Ticker;
  /**
   * Where its append chunks come from and what bounds every tail cache together (default: the
   * process's, append-memory.ts).
   */
  appendMemory?: AppendMemory;
  /** Runs its interval fsyncs a few at a time (default: the queue every log in the process shares). */
  flushQueue?: FlushQueue;
  /**
   * Deferred records (`defer`) are spilled at the latest this long after the first came (1 s;
   * docs/performance/scale.md, "Workload 6b: deferred records").
   */
  spillAgeMs?: number;
  /** ... or once this many bytes of them wait (64 KiB). */
  spillBytes?: number;
  /**
   * The last process to write the log crashed without the machine going down (the data directory
   * lock says so): every page it wrote is still there, so recovery's search past zeros stops at
   * the file's allocated blocks (recovery.ts, searchLimit), and (unless flush=sync) what recovery
   * kept is fsynced in the background instead of before the log is used (its flushed end starts
   * below it meanwhile).
   */
  pagesKept?: boolean;
}

/** What the caller knows about a log before it opens it. */
export interface OpenHints {
  /** It was most likely never written: its directory is made first instead of listed. */
  likelyNew?: boolean;
  /**
   * A clean stop closed it and recorded so (the broker's clean-stop manifest): every byte it holds
   * was fsynced, even where the stop left no index (CloseOptions.recorded), so its open fsyncs nothing.
   */
  stoppedCleanly?: boolean;
}

export interface CloseOptions {
  /**
   * The caller records this clean stop and will open the log with `OpenHints.stoppedCleanly`. A
   * log whose active segment is small (SCAN_AT_OPEN_BYTES) then leaves it for the next open to
   * scan instead of writing its index and (when the replay from the snapshot on disk reads only
   * that segment) its producer snapshot: with 10,000 small partitions those files, each fsynced
   * with its directory, were most of a clean stop.
   */
  recorded?: boolean;
  /**
   * The caller's one syncfs makes the stop durable (stop-sync.ts): the log writes its data, index
   * and producer snapshot without fsyncs, and renames the last two only after that syncfs. Until
   * then the close has resolved but `closedCleanly` is false.
   */
  sync?: StopSync;
}

/**
 * An active segment up to this size is read at the next open after a recorded clean stop
 * (CloseOptions.recorded) rather than given an index and a producer snapshot: reading it back
 * costs less than two files, each fsynced with its directory.
 */
export const SCAN_AT_OPEN_BYTES = 64 * 1024;

const DURABLE_DEFAULT = { durable: false };
const DEFAULT_CHUNK_BYTES = 1024 * 1024;
/**
 * Per partition with traffic, memory is about the tail cache plus what is queued for writing, so
 * the default stays modest; a broker with few hot partitions may give each more.
 */
const DEFAULT_TAIL_CACHE_BYTES = 4 * 1024 * 1024;
/** How often a log checks whether it went quiet. */
const TRIM_INTERVAL_MS = 10_000;
/** Quiet checks in a row before the tail cache is dropped too. */
const TAIL_IDLE_TICKS = 3;
/** Deferred records wait at most this long for their spill (docs/shared-log.md). */
const SPILL_AGE_MS = 1000;
/** ... and spill at once when this many bytes of them wait. */
const SPILL_BYTES = 64 * 1024;

export class PartitionLog {
  readonly dir: string;
  /** Counters and histograms for metrics, read at scrape time (log-stats.ts). */
  readonly stats: LogStats;
  #config: LogConfig;
  readonly #logger: Logger | undefined;
  readonly #ops: FileOps;
  readonly #segments: SegmentList;
  readonly #preparer: SegmentPreparer;
  readonly #writer: LogWriter;
  readonly #reader: LogReader;
  readonly #tail: TailCache;
  readonly #waiters: DataWaiters;
  #highWatermark: number;
  /**
   * The end of what this replica holds per its flush policy (written, or flushed for "sync"): the
   * high watermark of a log without a visibility ceiling, and what followers may fetch.
   */
  #localEnd: number;
  /** The replicated high watermark readers may not pass (docs/cluster.md); Infinity when not replicated. */
  #ceiling = Number.POSITIVE_INFINITY;
  /** Followers' fetch streams, parked on the local end rather than the high watermark. */
  readonly #replicaWaiters: DataWaiters;
  /** A truncation under way: appends are refused until it ends. */
  #truncating = false;
  /** Which leader epoch wrote which stretch of the log (leader-epochs.ts). */
  readonly epochs: LeaderEpochs;
  readonly #ticker: Ticker;
  /**
   * An fsync of what was written, due flushIntervalMs after the first write it does not cover: it
   * then waits its turn in the flush queue (flush-queue.ts), which runs a few logs' fsyncs at once.
   */
  readonly #flushTask = new TickTask(() => this.#flushes.push(this.#flushEntry));
  readonly #flushes: FlushQueue;
  readonly #flushEntry: FlushEntry;
  /** When the first write came that the queued or running interval fsync may not cover, else -1. */
  #dirtySince = -1;
  /** Retention's check, every retentionCheckMs while the log has closed segments. */
  readonly #retentionTask = new TickTask(() => this.#retentionTick());
  readonly #retentionCheckMs: number;
  /**
   * The quiet check, every trimIntervalMs from an append until the tail cache is let go; it also
   * writes the active segment's index checkpoint, so a crash costs a scan of its last seconds only.
   */
  readonly #trimTask = new TickTask((now) => this.#trimTick(now));
  readonly #checkpoint = new IndexCheckpoint();
  readonly #trimIntervalMs: number;
  readonly #chunks: AppendBuffer;
  /** Trim ticks in a row without an append. */
  #idleTicks = 0;
  #retention: Promise<number> | null = null;
  #closing: Promise<void> | null = null;
  #closedCleanly = false;
  readonly #cleaner: LogCleaner;
  /** Whether appends must give every record a key (the log is compacted). */
  #requireKeys: boolean;
  /** Rescans of segments where a read found damage, one per segment at a time. */
  readonly #rescans = new Map<Segment, Promise<void>>();
  /** The partition's idempotent producers (producers/producer-table.ts). */
  readonly #producers: ProducerTable;
  /** The producer snapshot written last, or being written: one at a time, in order. */
  #snapshotting: Promise<void> = Promise.resolve();
  /** Where the next open's producer replay starts: the offset of the snapshot on disk (0: none). */
  #replayFrom = 0;
  /** Records `defer` took and no spill has appended yet; null until the first. */
  #deferred: DeferredRecords | null = null;
  /** The last spill's listener until its append ends: reads past the high watermark wait for it. */
  #spilling: SpillWritten | null = null;
  /** The spill of deferred records that waited spillAgeMs; made at the first `defer`. */
  #spillTask: TickTask | null = null;
  /** Reads so far, and their count at the last spill: a spill is cached if any came between. */
  #reads = 0;
  #readsAtSpill = 0;
  readonly #spillAgeMs: number;
  readonly #spillBytes: number;

  private constructor(
    dir: string,
    config: LogConfig,
    logger: Logger | undefined,
    segments: SegmentList,
    options: LogOptions,
    cleanedEnd: number,
    epochs: LeaderEpochs,
    flushedFrom: number,
    owedDirSync: (() => Promise<void>) | null,
  ) {
    this.dir = dir;
    this.epochs = epochs;
    this.#config = config;
    this.stats = new LogStats(config.metrics);
    this.#logger = logger;
    this.#ops = options.fileOps ?? defaultFileOps;
    this.#segments = segments;
    this.#preparer = new SegmentPreparer(dir, this.#ops);
    const chunkBytes = options.appendChunkBytes ?? DEFAULT_CHUNK_BYTES;
    const tailBytes = options.tailCacheBytes ?? DEFAULT_TAIL_CACHE_BYTES;
    const memory = options.appendMemory ?? sharedAppendMemory;
    const chunks = new AppendBuffer(chunkBytes, memory);
    const tail = new TailCache(tailBytes, chunks, memory);
    this.#tail = tail;
    this.#chunks = chunks;
    this.#ticker = options.ticker ?? storageTicker;
    this.#flushes = options.flushQueue ?? storageFlushQueue;
    this.#flushEntry = this.#flushes.entry(
      () => this.#writer.requestSync(),
      () => this.#intervalFlushEnded(),
      {
        dir,
        mark: () => {
          const writer = this.#writer;
          const target = writer.writtenOffset;
          return target > writer.flushedOffset ? () => writer.syncedBy(target) : null;
        },
      },
    );
    this.#waiters = new DataWaiters(this.#ticker);
    this.#replicaWaiters = new DataWaiters(this.#ticker);
    this.#trimIntervalMs = options.trimIntervalMs ?? TRIM_INTERVAL_MS;
    this.#retentionCheckMs = options.retentionCheckMs ?? 60_000;
    this.#spillAgeMs = options.spillAgeMs ?? SPILL_AGE_MS;
    this.#spillBytes = options.spillBytes ?? SPILL_BYTES;
    this.#producers = new ProducerTable(producerLimits(config));
    this.#writer = new LogWriter({
      dir,
      segments,
      tail,
      chunks,
      spillChunks: spillChunks(memory),
      preparer: this.#preparer,
      ops: this.#ops,
      config: () => this.#config,
      events: {
        written: (offset) => {
          const flush = this.#config.flush;
          if (flush !== "sync") this.#advance(offset);
          if (flush === "interval" && !this.#flushTask.scheduled) this.#intervalWritten();
          if (!this.#retentionTask.scheduled && segments.all.length > 1) this.#scheduleRetention();
        },
        flushed: (offset) => this.#advance(offset),
        rolled: () => {
          this.#snapshotProducers();
          this.#cleaner.segmentClosed();
        },
      },
      logger,
      stats: this.stats,
      producers: this.#producers,
      flushedOffset: flushedFrom,
      owedDirSync,
    });
    this.#reader = new LogReader(segments, tail, {
      indexInterval: () => this.#config.indexIntervalBytes,
      directReads: () => this.#config.directReads,
      skipDamaged: () => this.#config.corruptData === "skip",
      damageFound: (seg, damage) => this.#quarantine(seg, damage),
    });
    this.#highWatermark = segments.active.nextOffset;
    this.#localEnd = this.#highWatermark;
    this.#requireKeys = compacts(config);
    this.#cleaner = new LogCleaner({
      dir,
      segments,
      tail,
      ops: this.#ops,
      config: () => this.#config,
      highWatermark: () => this.#highWatermark,
      read: (offset, maxBytes) => this.#read(offset, maxBytes, true),
      damageFound: (seg, damage) => this.#quarantine(seg, damage),
      logger,
      cleanedEnd,
      maxKeys: options.compactionMaxKeys,
      stats: this.stats,
      ticker: this.#ticker,
    });
    this.#scheduleRetention();
  }

  /** Opens (creating if needed) the log in `dir`, recovering its last segment. */
  static async open(
    dir: string,
    config: LogConfig,
    logger?: Logger,
    options: LogOptions = {},
    hints: OpenHints = {},
  ): Promise<PartitionLog> {
    const checked = validateLogConfig(config);
    const ops = options.fileOps ?? defaultFileOps;
    const now = Date.now();
    let segments: Segment[];
    let cleanedEnd: number;
    let closedCleanly: boolean;
    /** Where the flushed end starts: the log end, or below what recovery kept and did not fsync. */
    let flushedFrom = Number.POSITIVE_INFINITY;
    /** The directory was made by this open: it holds nothing to recover. */
    let created = false;
    /** Directory entries this open made, made durable by the log's first fsync (log-writer.ts). */
    let owedDirSync: (() => Promise<void>) | null = null;
    let parentSync: Promise<void> | null = null;
    const syncDir = dirSync(ops);
    try {
      // One listing serves the compaction swap and the segments: a broker opens thousands of logs.
      const names = await listOrCreate(dir, hints.likelyNew === true);
      created = names === null;
      // The new directory's entry: an fsync of the topic's directory started now is shared by the
      // partitions that make theirs at once (a new topic's first produce reaches thousands); the
      // log's first fsync waits for it (below), nothing before.
      if (created) {
        parentSync = syncDir(dirname(dir));
        parentSync.catch(() => {}); // the first fsync sees a failure
      }
      const swap = await recoverSwap(dir, logger, names ?? []);
      cleanedEnd = swap.cleanedEnd;
      ({ segments, closedCleanly } = await recoverSegments(
        dir,
        checked,
        logger,
        now,
        cleanedEnd,
        swap.names,
        options.pagesKept === true,
      ));
    } catch (err) {
      throw storageError(`cannot open the log in ${dir}`, err);
    }
    if (segments.length === 0) {
      const seg = new Segment(dir, 0, now);
      try {
        // Made under its own name, not prepared and renamed: a crash before the truncate leaves a
        // short segment, which recovery reads as empty like a preallocated one. No blocks until the
        // first data (block-reserve.ts): an idle partition costs no disk. Its entry is made durable
        // by an fsync of the directory beside the log's first fsync, before anything written counts
        // as durable, not here: 10,000 partitions opening at once waited for as many fsyncs.
        seg.setFile(await createSegmentFile(walPath(dir, 0), checked.segmentBytes, ops));
        seg.fileSize = checked.segmentBytes;
        seg.reservedTo = 0;
      } catch (err) {
        throw storageError(`cannot create the first segment in ${dir}`, err);
      }
      segments.push(seg);
      const started = parentSync;
      owedDirSync = () =>
        started === null ? syncDir(dir) : Promise.all([started, syncDir(dir)]).then(() => {});
    } else {
      const active = segments.at(-1)!;
      try {
        // What recovery kept is made durable now, so the flushed end can start at the log end. A
        // clean stop fsynced it all before writing the index that let recovery skip the scan.
        // After a crash of the process alone the page cache holds every byte kept, and a later
        // fdatasync of the file covers them as well as it would now: the log serves at once, its
        // flushed end starting at the active segment's base (nothing in it counts as durable, so
        // an acks=durable append waits for that fsync), queued below. Not under flush=sync, whose
        // readers see only what an fsync covers: a high watermark held back to the base would
        // tell a consumer already past it that its offset is out of range.
        // A stop recorded as clean fsynced everything, whether or not it left the segment's index.
        const synced = closedCleanly || hints.stoppedCleanly === true;
        if (!synced && options.pagesKept === true && checked.flush !== "sync")
          flushedFrom = active.baseOffset;
        else if (!synced) await ops.datasync(active.openFile!);
        if (active.fileSize < checked.segmentBytes) {
          await ops.truncate(active.openFile!, checked.segmentBytes);
          active.fileSize = checked.segmentBytes;
        }
        // Nothing reserved ahead until written to (block-reserve.ts): most of many logs stay idle.
        reopenedReserve(active);
      } catch (err) {
        await Promise.all(segments.map((s) => s.closeFile()));
        throw storageError(`cannot prepare the active segment in ${dir}`, err);
      }
    }
    let epochs: LeaderEpochs;
    try {
      epochs = created ? LeaderEpochs.none(dir) : await LeaderEpochs.load(dir, segments.at(-1)!.nextOffset);
    } catch (err) {
      await Promise.all(segments.map((s) => s.closeFile()));
      throw storageError(`cannot read the leader epochs in ${dir}`, err);
    }
    const list = new SegmentList(segments);
    const log = new PartitionLog(
      dir,
      checked,
      logger,
      list,
      options,
      cleanedEnd,
      epochs,
      flushedFrom,
      owedDirSync,
    );
    // The fsync of what recovery kept waits its turn with the interval fsyncs (flush-queue.ts).
    if (log.flushedOffset < log.logEndOffset) log.#flushes.push(log.#flushEntry);
    try {
      if (!created) await log.#recoverProducers();
    } catch (err) {
      await log.close();
      throw storageError(`cannot recover the producer state in ${dir}`, err);
    }
    logger?.debug(
      { logStartOffset: log.logStartOffset, logEndOffset: log.logEndOffset, segments: segments.length },
      "partition log opened",
    );
    return log;
  }

  get logStartOffset(): number {
    return this.#segments.startOffset;
  }

  /** The first offset not yet visible to readers (per the flush policy and the visibility ceiling). */
  get highWatermark(): number {
    return this.#highWatermark;
  }

  /** The end of what this replica holds per its flush policy: its log end as a follower reports it. */
  get localEndOffset(): number {
    return this.#localEnd;
  }

  /**
   * Replication's high watermark (docs/cluster.md): consumer reads, long polls and streams see
   * nothing at or past `offset`, and reads between it and the log end fail with the retriable
   * OFFSET_NOT_AVAILABLE. Set on each role change and as followers catch up; it may go down only at
   * a role change (a new leader starts from its own committed end).
   */
  setVisibilityCeiling(offset: number): void {
    this.spillDeferred();
    this.#ceiling = offset;
    const visible = Math.min(this.#localEnd, offset);
    if (visible < this.#highWatermark) this.#highWatermark = visible;
    else this.#publish();
  }

  /** The next offset to assign: past every record appended or deferred. */
  get logEndOffset(): number {
    const deferred = this.#deferred;
    return deferred === null ? this.#writer.nextOffset : this.#writer.nextOffset + deferred.count;
  }

  /**
   * Whether `defer` may be called: open, not failed or being truncated, not replicated, not
   * flush=sync (whose readers see only what this log's own fsyncs cover) and not compacted (whose
   * appends check every record for a key).
   */
  get canDefer(): boolean {
    return (
      this.#closing === null &&
      !this.#truncating &&
      this.#writer.failure === null &&
      this.#ceiling === Number.POSITIVE_INFINITY &&
      this.#config.flush !== "sync" &&
      !this.#requireKeys
    );
  }

  /** Whether `defer` would take the records of `group` (canDefer, and they fit one batch). */
  canDeferRun(index: PartitionIndex, group: number): boolean {
    return this.canDefer && BATCH_RECORDS_AT + index.bytes[group]! <= this.#config.maxBatchBytes;
  }

  /**
   * Takes the records of `group` in a partitioned batch (docs/shared-log.md, "Step 2, designed")
   * without appending them: they get the next offsets, and are spilled (framed into ordinary
   * batches and appended) before anything else reads at or past the high watermark, appends,
   * truncates, flushes or closes, as soon as a reader waits, once spillBytes wait, or spillAgeMs after the
   * first. `source` is told once they are written to the log's file. The records are kept, not
   * copied: the batch must not change. Returns the first record's offset. Throws, taking nothing,
   * when `canDefer` is false or the records would not fit in one batch of the topic's.
   */
  defer(index: PartitionIndex, group: number, source: SpillSource): number {
    if (!this.canDefer) {
      if (this.#closing !== null) throw shuttingDown();
      throw new ConchError(ErrorCode.STORAGE_ERROR, "the partition log cannot take deferred records now");
    }
    const bytes = BATCH_RECORDS_AT + index.bytes[group]!;
    if (bytes > this.#config.maxBatchBytes) {
      throw new ConchError(
        ErrorCode.BATCH_TOO_LARGE,
        `the partition's records make a batch of ${bytes} bytes, more than the topic's ${this.#config.maxBatchBytes}`,
      );
    }
    const base = this.logEndOffset;
    if (base + index.counts[group]! - 1 > MAX_OFFSET) {
      throw new ConchError(ErrorCode.STORAGE_ERROR, "the log has reached the largest offset");
    }
    const deferred = (this.#deferred ??= new DeferredRecords());
    const first = deferred.empty;
    deferred.add(index, group, source);
    if (deferred.bytes >= this.#spillBytes || this.#waiters.size > 0) this.spillDeferred();
    else if (first) {
      this.#spillTask ??= new TickTask(() => this.spillDeferred());
      this.#ticker.schedule(this.#spillTask, performance.now() + this.#spillAgeMs);
    }
    return base;
  }

  /**
   * Appends every deferred record now, framed into ordinary batches (deferred-records.ts); returns
   * the spill's listener, or the running one's, or null when nothing was deferred or spilling.
   */
  spillDeferred(): SpillWritten | null {
    const deferred = this.#deferred;
    if (deferred === null || deferred.empty) return this.#spilling;
    if (this.#spillTask?.scheduled === true) this.#ticker.cancel(this.#spillTask);
    const spill = deferred.take(this.#config.maxBatchBytes);
    const written = spill.written;
    this.#spilling = written;
    void written.ended().then(() => {
      if (this.#spilling === written) this.#spilling = null;
    });
    // Kept in the tail cache only for a log read since its last spill: one nobody reads lets the
    // spill's chunk go at once, to be filled again while its pages are in memory (append-buffer.ts).
    const cached = this.#reads !== this.#readsAtSpill;
    this.#readsAtSpill = this.#reads;
    try {
      this.#checkAppendable();
      this.#counted(this.#writer.appendSpill(spill, written, cached));
    } catch (err) {
      // Only a failed log refuses it (every caller spills before closing or truncating): its
      // sources are not told, so the shared log keeps the records for the replay after a restart.
      written.appendFailed();
      this.#logger?.error({ err }, "deferred records not spilled; the shared log keeps them");
    }
    return written;
  }

  /**
   * The high watermark once every record deferred before the call is spilled and written: where a
   * reader asking for the latest offset starts, past every acknowledged record.
   */
  async visibleEnd(): Promise<number> {
    if (this.#spillOwed()) await this.#spilled();
    return this.#highWatermark;
  }

  /** Whether records past the log's written end are deferred or spilling. */
  #spillOwed(): boolean {
    return this.#spilling !== null || (this.#deferred !== null && !this.#deferred.empty);
  }

  /** Spills what is deferred and waits for the spill's append to end. */
  async #spilled(): Promise<void> {
    const written = this.spillDeferred();
    if (written !== null) await written.ended();
  }

  /** The log end that completed fsyncs cover. */
  get flushedOffset(): number {
    return this.#writer.flushedOffset;
  }

  /** Segment files of the log, the active one included. */
  get segmentCount(): number {
    return this.#segments.all.length;
  }

  /** Bytes of batch data written to the log's segments. */
  get sizeBytes(): number {
    return this.#segments.sizeBytes;
  }

  get config(): Readonly<LogConfig> {
    return this.#config;
  }

  /** Idempotent producers the partition remembers. */
  get producerCount(): number {
    return this.#producers.size;
  }

  async #recoverProducers(): Promise<void> {
    const segments = this.#segments;
    this.#replayFrom = await recoverProducers(
      this.dir,
      this.#producers,
      this.#config.maxProducerIds,
      {
        logStartOffset: segments.startOffset,
        endOffset: this.#writer.nextOffset,
        read: async (offset, maxBytes) =>
          (await this.#reader.read(offset, maxBytes, this.#writer.nextOffset, true)) as Buffer,
      },
      this.#logger,
    );
  }

  /**
   * Writes the producer table as of the next offset to assign (it holds every batch below it), after
   * the snapshot before it. A failure is logged: the next open replays more of the log instead.
   */
  #snapshotProducers(): void {
    const offset = this.#writer.nextOffset;
    this.#snapshotting = this.#snapshotting.then(async () => {
      const staged = await this.#stageSnapshot(offset, true);
      if (staged === null) return;
      await staged.commit().then(
        () => {
          this.#replayFrom = offset;
        },
        (err: unknown) => this.#snapshotFailed(err),
      );
    });
  }

  /**
   * Validates all batches (rejecting before anything is written), assigns and stamps offsets
   * synchronously in call order, and resolves when acknowledged per the flush policy (with
   * `durable`, after an fsync covering it whatever the policy).
   */
  append(batches: Uint8Array, options: { durable?: boolean } = DURABLE_DEFAULT): Promise<AppendResult> {
    try {
      return this.#appendChecked(batches, options.durable === true, null).promise;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * `append` without a promise: `listener` is told how it ended. Throws, and tells nothing, when
   * the batches are refused before anything changes.
   */
  appendTo(batches: Uint8Array, durable: boolean, listener: AppendListener): void {
    this.#appendChecked(batches, durable, listener);
  }

  /**
   * A follower's append: the leader's batches byte for byte, with the offsets the leader stamped,
   * which must carry on from this log's end. Validated like `append` before anything changes.
   */
  appendReplicated(batches: Uint8Array): Promise<AppendResult> {
    try {
      return this.#appendChecked(batches, false, null, true).promise;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `appendReplicated` without a promise, as `appendTo` is to `append`. */
  appendReplicatedTo(batches: Uint8Array, listener: AppendListener): void {
    this.#appendChecked(batches, false, listener, true);
  }

  #appendChecked(
    batches: Uint8Array,
    durable: boolean,
    listener: AppendListener | null,
    stamped = false,
  ): PendingAppend {
    this.#checkAppendable();
    if (this.#requireKeys) rejectKeylessRecords(batches, this.#config.maxBatchBytes);
    // Deferred records have the offsets before this append's.
    if (this.#deferred !== null && !this.#deferred.empty) this.spillDeferred();
    const pending = stamped
      ? this.#writer.appendStamped(batches, durable, listener, this.#requireKeys)
      : this.#writer.append(batches, durable, listener);
    return this.#counted(pending);
  }

  /** Throws while the log is closing or being truncated. */
  #checkAppendable(): void {
    if (this.#closing !== null) throw shuttingDown();
    if (this.#truncating)
      throw new ConchError(ErrorCode.STORAGE_ERROR, "the partition log is being truncated");
  }

  /** After an append: its trim scheduled and its counts taken. */
  #counted(pending: PendingAppend): PendingAppend {
    if (!this.#trimTask.scheduled) this.#scheduleTrim();
    const stats = this.stats;
    if (stats.counting && !pending.duplicate) {
      stats.appends++;
      stats.bytesIn += pending.byteLength;
      stats.messagesIn += pending.nextOffset - pending.baseOffset;
    }
    return pending;
  }

  /** Whole stored batches from the one holding `offset`; OFFSET_OUT_OF_RANGE outside [start, hw]. */
  read(offset: number, maxBytes: number): Promise<ReadResult> {
    return this.#read(offset, maxBytes, this.#config.corruptData === "skip");
  }

  /** `read`, skipping quarantined ranges or failing on them (CORRUPT_DATA) as `skipDamaged` says. */
  async #read(offset: number, maxBytes: number, skipDamaged: boolean): Promise<ReadResult> {
    if (this.#closing !== null) throw shuttingDown();
    this.#reads++;
    // Offsets a producer was given and no reader can see yet: their spill is waited for.
    if (offset >= this.#highWatermark && offset <= this.logEndOffset && this.#spillOwed()) {
      await this.#spilled();
      if (this.#closing !== null) throw shuttingDown();
    }
    const hw = this.#highWatermark;
    const start = this.logStartOffset;
    if (!(offset >= start && offset <= hw) || !Number.isInteger(offset)) throw this.#unreadable(offset);
    const records =
      offset === hw ? EMPTY : await this.#reader.read(offset, readLimit(maxBytes), hw, skipDamaged);
    return { records, highWatermark: hw, logStartOffset: start };
  }

  /**
   * What `read` resolves with, returned at once when no file read is needed: at the high watermark,
   * or from the tail cache. Undefined otherwise, including every case where `read` would fail.
   */
  readNow(offset: number, maxBytes: number): ReadResult | undefined {
    if (this.#closing !== null) return undefined;
    this.#reads++;
    const hw = this.#highWatermark;
    if (offset >= hw && this.#spillOwed()) {
      this.spillDeferred();
      return undefined;
    }
    const start = this.logStartOffset;
    if (!(offset >= start && offset <= hw) || !Number.isInteger(offset)) return undefined;
    if (offset === hw) return { records: EMPTY, highWatermark: hw, logStartOffset: start };
    const records = this.#reader.readCached(offset, readLimit(maxBytes), hw);
    return records === undefined ? undefined : { records, highWatermark: hw, logStartOffset: start };
  }

  /**
   * Why `offset` cannot be read: past the high watermark of a replicated log but within its end,
   * it is there and not yet committed (retriable), else it is out of range.
   */
  #unreadable(offset: number): ConchError {
    if (
      this.#ceiling !== Number.POSITIVE_INFINITY &&
      offset > this.#highWatermark &&
      offset <= this.logEndOffset
    ) {
      return new ConchError(
        ErrorCode.OFFSET_NOT_AVAILABLE,
        `offset ${offset} is not replicated yet (high watermark ${this.#highWatermark})`,
      );
    }
    return outOfRange(offset);
  }

  /**
   * A follower's read: whole stored batches from `offset` up to the local end (past the high
   * watermark, which the follower's own progress moves). OFFSET_OUT_OF_RANGE outside [start, end].
   */
  async readReplica(offset: number, maxBytes: number): Promise<ReadResult> {
    if (this.#closing !== null) throw shuttingDown();
    if (this.#spillOwed()) await this.#spilled();
    const end = this.#localEnd;
    const start = this.logStartOffset;
    if (!(offset >= start && offset <= end) || !Number.isInteger(offset)) throw outOfRange(offset);
    const skip = this.#config.corruptData === "skip";
    const records = offset === end ? EMPTY : await this.#reader.read(offset, readLimit(maxBytes), end, skip);
    return { records, highWatermark: this.#highWatermark, logStartOffset: start };
  }

  /** `park` for a follower's stream: waits for the local end, not the high watermark, to pass its offset. */
  parkReplica(waiter: DataWaiter): boolean {
    this.spillDeferred();
    return this.#closing === null && this.#replicaWaiters.park(waiter, this.#localEnd);
  }

  unparkReplica(waiter: DataWaiter): void {
    this.#replicaWaiters.unpark(waiter);
  }

  /**
   * Cuts the log back so that nothing at or after `offset` stays (a follower whose log parted from
   * its leader's): whole batches, so the new end may be a little lower; resolves with it. Appends
   * are refused meanwhile; the leader epochs that start at or past the new end go too.
   */
  truncateTo(offset: number): Promise<number> {
    if (this.#closing !== null) return Promise.reject(shuttingDown());
    this.spillDeferred();
    if (!Number.isInteger(offset) || offset < 0) {
      return Promise.reject(new ConchError(ErrorCode.INVALID_REQUEST, `cannot truncate to ${offset}`));
    }
    if (offset >= this.logEndOffset) return Promise.resolve(this.logEndOffset);
    this.#truncating = true;
    return this.#cleaner
      .exclusive(async () => {
        await this.#writer.flush();
        await this.#writer.idle();
        // The checkpoints of the segments cut back would name batches that are gone.
        for (const seg of this.#segments.all) {
          if (seg.nextOffset > offset) await this.#checkpoint.discard(seg);
        }
        const end = await cutLog(this.#truncation(), offset);
        this.#writer.rewind(end);
        this.#producers.truncate(end);
        this.#localEnd = Math.min(this.#localEnd, end);
        this.#highWatermark = Math.min(this.#highWatermark, end);
        await this.epochs.truncateFromEnd(end);
        this.#logger?.warn({ offset, logEndOffset: end }, "partition log truncated");
        return end;
      })
      .finally(() => {
        this.#truncating = false;
      });
  }

  /**
   * Empties the log and starts it again at `offset`: for a follower whose leader no longer holds
   * the records between this log's end and its own start (retention). The leader epochs go too
   * (the leader sends the one covering `offset` with the first records).
   */
  restartAt(offset: number): Promise<void> {
    if (this.#closing !== null) return Promise.reject(shuttingDown());
    this.spillDeferred();
    if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET) {
      return Promise.reject(new ConchError(ErrorCode.INVALID_REQUEST, `cannot start the log at ${offset}`));
    }
    this.#truncating = true;
    return this.#cleaner
      .exclusive(async () => {
        await this.#writer.flush();
        await this.#writer.idle();
        for (const seg of this.#segments.all) await this.#checkpoint.discard(seg);
        await restartLog(this.#truncation(), offset, this.#preparer, this.#config.segmentBytes);
        this.#writer.rewind(offset);
        this.#producers.truncate(0);
        this.#localEnd = offset;
        this.#highWatermark = offset;
        await this.epochs.truncateFromEnd(0);
        this.#logger?.warn({ logStartOffset: offset }, "partition log emptied to start again");
      })
      .finally(() => {
        this.#truncating = false;
      });
  }

  #truncation(): TruncationContext {
    return {
      segments: this.#segments,
      tail: this.#tail,
      ops: this.#ops,
      indexIntervalBytes: this.#config.indexIntervalBytes,
      allowGaps: this.#requireKeys,
    };
  }

  /** The first offset whose record timestamp is >= `timestampMs`, or null when none is visible. */
  offsetForTimestamp(timestampMs: number): Promise<number | null> {
    if (this.#closing !== null) return Promise.reject(shuttingDown());
    if (Number.isNaN(timestampMs)) return Promise.resolve(null);
    if (this.#spillOwed())
      return this.#spilled().then(() => this.#reader.offsetForTimestamp(timestampMs, this.#highWatermark));
    return this.#reader.offsetForTimestamp(timestampMs, this.#highWatermark);
  }

  /** Resolves once highWatermark > offset, or when timeoutMs passes or the signal aborts; never rejects. */
  waitForData(offset: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#closing !== null) return Promise.resolve();
    this.spillDeferred();
    return this.#waiters.wait(offset, this.#highWatermark, timeoutMs, signal);
  }

  /**
   * waitForData without a promise, for a reader that is its own waiter (a long poll): parks it
   * until the high watermark passes `waiter.waitOffset` or its deadline, then calls `waitEnded`.
   * Returns false, parking nothing, when it need not wait (data is there, or the log is closing).
   */
  park(waiter: DataWaiter): boolean {
    this.spillDeferred();
    return this.#closing === null && this.#waiters.park(waiter, this.#highWatermark);
  }

  /** Takes a parked waiter out without telling it. */
  unpark(waiter: DataWaiter): void {
    this.#waiters.unpark(waiter);
  }

  /**
   * Ends every parked wait now, before its deadline and whatever the high watermark (cluster mode:
   * this broker stopped leading, so a produce waiting for its replicas is answered at once and the
   * client retries at the new leader instead of waiting out its timeout).
   */
  wakeWaiters(): void {
    this.#waiters.wakeAll();
  }

  /** Waiters currently parked (waitForData and park). */
  get waitingReaders(): number {
    return this.#waiters.size;
  }

  /** New settings apply from now on: segment size at the next roll, retention at its next run. */
  updateConfig(config: LogConfig): void {
    const checked = validateLogConfig(config);
    // Framed and checked under the settings they came under.
    this.spillDeferred();
    const before = this.#config;
    this.#config = checked;
    if (before.flush === "sync" && checked.flush !== "sync") this.#advance(this.#writer.writtenOffset);
    if (
      this.#flushTask.scheduled &&
      (checked.flush !== "interval" || checked.flushIntervalMs < before.flushIntervalMs)
    ) {
      // Written data waited for the old interval: its fsync comes no later than the new rules say.
      this.#ticker.cancel(this.#flushTask);
      if (checked.flush === "interval")
        this.#ticker.schedule(this.#flushTask, performance.now() + checked.flushIntervalMs);
      else void this.#writer.requestSync();
    }
    this.#requireKeys = compacts(checked);
    this.#cleaner.configure(checked);
    this.#producers.limits = producerLimits(checked);
  }

  /**
   * Runs a compaction pass now (after one in progress) when the cleanup policy includes "compact";
   * the log also runs them in the background. `nowMs` decides which tombstones have expired.
   */
  compact(nowMs: number = Date.now()): Promise<CompactionResult> {
    return this.#cleaner.compact(nowMs);
  }

  /** Deletes closed segments past retention now; resolves with how many. Runs one at a time. */
  enforceRetention(nowMs: number = Date.now()): Promise<number> {
    if (this.#retention !== null) return this.#retention;
    if (this.#closing !== null) return Promise.resolve(0);
    // Never while compaction swaps segments: the two would replace and delete the same files.
    this.#retention = this.#cleaner
      .exclusive(() => this.#deleteExpired(nowMs))
      .finally(() => {
        this.#retention = null;
      });
    return this.#retention;
  }

  /**
   * The quarantined ranges (docs/design.md, recovery): stored data that failed its check, oldest
   * first. Reads of their offsets fail with CORRUPT_DATA, or skip them with corruptData "skip".
   */
  quarantined(): QuarantinedRange[] {
    const out: QuarantinedRange[] = [];
    for (const seg of this.#segments.all)
      for (const r of seg.damaged) out.push(describeRange(seg.walPath, r));
    return out;
  }

  /**
   * A read found a batch failing its check: quarantine what a rescan of its segment finds, at once
   * also in the active segment (its written bytes; nothing is cut).
   */
  #quarantine(seg: Segment, damage: DamageFound): Promise<void> {
    let rescan = this.#rescans.get(seg);
    if (rescan === undefined) {
      const active = seg === this.#segments.active;
      const { indexIntervalBytes } = this.#config;
      rescan = rescanSegment(seg, indexIntervalBytes, compacts(this.#config), this.#logger, active)
        .catch((err: unknown) => {
          this.#logger?.error({ err, segment: seg.walPath }, "rescan of a damaged segment failed");
          throw damage;
        })
        .finally(() => this.#rescans.delete(seg));
      this.#rescans.set(seg, rescan);
    }
    return rescan;
  }

  /** Resolves once an fsync covers everything appended before the call. */
  async flush(): Promise<void> {
    this.spillDeferred();
    await this.#writer.flush();
  }

  /**
   * Waits for queued appends, flushes, truncates the preallocated tail, leaves what lets the next
   * open skip scanning (the active segment's index, the producer snapshot) unless that scan is
   * small, and closes the files.
   */
  close(options: CloseOptions = {}): Promise<void> {
    if (this.#closing === null) {
      // Appended before the close refuses appends, so that the close writes and flushes them.
      this.spillDeferred();
      this.#closing = this.#close(options);
      // Woken once #closing is set: a waiter told now reads and parks again, and finds the log closing.
      this.#waiters.wakeAll();
      this.#replicaWaiters.wakeAll();
    }
    return this.#closing;
  }

  /** Closes the log and removes its directory. */
  async delete(): Promise<void> {
    await this.close();
    await rm(this.dir, { recursive: true, force: true });
  }

  async #close(options: CloseOptions): Promise<void> {
    this.#stopTimers();
    await this.#cleaner.close();
    const deferred = options.sync ?? null;
    let failure: unknown = null;
    // Deferred: idle() below waits for the queue's writes, and the caller's syncfs makes them durable.
    if (this.#writer.failure === null && deferred === null)
      await this.#writer.flush().catch((err: unknown) => (failure = err));
    await this.#writer.idle();
    // Its memory goes back to the process's (append-memory.ts): the bytes are in the file.
    this.#tail.clear();
    this.#chunks.close();
    // Before the index below: a clean stop's .idx is the whole index, never a checkpoint's prefix.
    await this.#checkpoint.idle();
    if (this.#retention !== null) await this.#retention.catch(() => {});
    await this.#preparer.discard();
    const active = this.#segments.active;
    /** The renames that end the stop, once what they name is durable. */
    const staged: StagedFile[] = [];
    try {
      await settleReserve(active);
      if (active.fileSize > active.size && active.openFile !== null) {
        await this.#ops.truncate(active.openFile, active.size);
        active.fileSize = active.size;
      }
      await this.#snapshotting; // a roll's snapshot may have moved the next replay's start
      // A recorded stop of a small log leaves its active segment for the next open to read.
      const scanned = options.recorded === true && active.size <= SCAN_AT_OPEN_BYTES;
      // The next open replays the producers from the snapshot on disk: when that reads no more than
      // the active segment, which it scans anyway, no new one is needed.
      const replayFrom = Math.max(this.#replayFrom, this.logStartOffset);
      // And the producer table as of the log end: the next open replays nothing.
      if (
        failure === null &&
        this.#writer.failure === null &&
        (this.logEndOffset > 0 || this.#producers.size > 0) &&
        !(scanned && replayFrom >= active.baseOffset)
      ) {
        const snapshot = await this.#stageSnapshot(this.#writer.nextOffset, deferred === null);
        if (snapshot !== null) staged.push(snapshot);
      }
      // A clean stop leaves the active segment's index too, so the next open reads it instead of
      // scanning the segment (recovery.ts); after a crash there is none, and the segment is scanned.
      if (
        failure === null &&
        this.#writer.failure === null &&
        active.damaged.length === 0 &&
        !active.isEmpty &&
        !scanned
      ) {
        staged.push(await this.#checkpoint.seal(active, deferred === null));
      }
    } catch (err) {
      failure ??= err;
    }
    await this.#snapshotting;
    await Promise.all(this.#segments.all.map((seg) => seg.closeFile().catch(() => {})));
    const clean = failure === null && this.#writer.failure === null && active.damaged.length === 0;
    if (deferred === null || !clean) await this.#finishClose(staged, clean, failure);
    // A failed syncfs is logged once, by the caller.
    else deferred.defer(this.dir, (synced) => this.#finishClose(staged, synced, null));
  }

  /**
   * The close's last step: `staged` renamed into place when `clean` (every file of the log is
   * durable), else discarded, and `failure` logged; the next open then recovers.
   */
  async #finishClose(staged: StagedFile[], clean: boolean, failure: unknown): Promise<void> {
    if (clean) {
      try {
        for (const file of staged) await file.commit();
        this.#closedCleanly = true;
        return;
      } catch (err) {
        failure = err;
      }
    }
    await Promise.all(staged.map((file) => file.discard()));
    if (failure !== null)
      this.#logger?.warn({ err: failure }, "partition log closed uncleanly; the next open recovers");
  }

  /**
   * The producer table (its expired producers dropped) as of `offset`, under the snapshot's
   * temporary name, fsynced with `sync`; null when it could not be written (logged: the next open
   * replays more of the log instead).
   */
  #stageSnapshot(offset: number, sync: boolean): Promise<StagedFile | null> {
    this.#producers.expire(Date.now());
    return stageProducerSnapshot(this.dir, this.#producers, offset, sync).catch((err: unknown) => {
      this.#snapshotFailed(err);
      return null;
    });
  }

  #snapshotFailed(err: unknown): void {
    this.#logger?.warn({ err }, "producer snapshot not written; the next open replays the log");
  }

  /**
   * Set once close() ended with every byte flushed and the active segment's index written (with
   * CloseOptions.sync, once the caller's syncfs succeeded and the renames after it were made).
   */
  get closedCleanly(): boolean {
    return this.#closedCleanly;
  }

  #advance(offset: number): void {
    if (offset <= this.#localEnd) return;
    this.#localEnd = offset;
    if (this.#replicaWaiters.size > 0) this.#replicaWaiters.notify(offset);
    this.#publish();
  }

  /** Readers see up to the local end, or the replicated high watermark when that is lower. */
  #publish(): void {
    const visible = Math.min(this.#localEnd, this.#ceiling);
    if (visible <= this.#highWatermark) return;
    this.#highWatermark = visible;
    this.#waiters.notify(visible);
  }

  /** Written under flush=interval with no fsync due: one is due an interval from now. */
  #intervalWritten(): void {
    if (!this.#flushEntry.pending) {
      this.#ticker.schedule(this.#flushTask, performance.now() + this.#config.flushIntervalMs);
    } else if (this.#dirtySince < 0) {
      // The queued fsync covers this write if it has not started, else the next one must: either
      // way it comes an interval after this write, not after the fsync ends.
      this.#dirtySince = performance.now();
    }
  }

  #intervalFlushEnded(): void {
    const since = this.#dirtySince;
    this.#dirtySince = -1;
    if (since < 0 || this.#closing !== null || this.#config.flush !== "interval") return;
    if (this.#writer.writtenOffset <= this.#writer.flushedOffset || this.#flushTask.scheduled) return;
    this.#ticker.schedule(this.#flushTask, since + this.#config.flushIntervalMs);
  }

  #stopTimers(): void {
    if (this.#spillTask !== null) this.#ticker.cancel(this.#spillTask);
    this.#ticker.cancel(this.#flushTask);
    this.#flushes.remove(this.#flushEntry);
    this.#ticker.cancel(this.#retentionTask);
    this.#ticker.cancel(this.#trimTask);
  }

  #scheduleTrim(): void {
    this.#idleTicks = 0;
    this.#ticker.schedule(this.#trimTask, coarseDue(performance.now(), this.#trimIntervalMs));
  }

  /** A broker may hold many logs: one that went quiet gives its chunks back, then its tail cache. */
  #trimTick(now: number): void {
    // Not while a truncation runs: it discarded the checkpoints first, and one written before it
    // replaces the index would name batches it then cuts away.
    if (!this.#truncating) this.#checkpoint.write(this.#segments.active);
    if (this.#chunks.trimIdle()) this.#idleTicks = 0;
    else if (++this.#idleTicks === TAIL_IDLE_TICKS) {
      this.#tail.clear();
      // Nothing is cached now: the current chunk goes too, and the checks stop until an append.
      this.#chunks.trimIdle();
      return;
    }
    this.#ticker.schedule(this.#trimTask, coarseDue(now, this.#trimIntervalMs));
  }

  #scheduleRetention(): void {
    if (this.#retentionCheckMs > 0 && this.#closing === null && this.#segments.all.length > 1) {
      this.#ticker.schedule(this.#retentionTask, coarseDue(performance.now(), this.#retentionCheckMs));
    }
  }

  /**
   * Retention never deletes the active segment: only a log with closed segments is checked, from
   * the first roll (the writer's `written` event) until retention leaves only the active one.
   */
  #retentionTick(): void {
    this.enforceRetention()
      .catch((err: unknown) => this.#logger?.warn({ err }, "retention failed"))
      .finally(() => this.#scheduleRetention());
  }

  async #deleteExpired(nowMs: number): Promise<number> {
    const n = segmentsToDelete(this.#segments.all, this.#config, nowMs);
    if (n === 0) return 0;
    const removed = this.#segments.removeOldest(n);
    this.stats.segmentsDeleted += removed.length;
    for (const seg of removed) {
      seg.deleted = true;
      this.#tail.forget(seg);
      await seg.sealing;
      await seg.closeFile().catch(() => {});
      await unlink(seg.walPath).catch(() => {});
      await unlink(seg.indexPath).catch(() => {});
    }
    this.#logger?.info(
      { deletedSegments: removed.length, logStartOffset: this.logStartOffset },
      "retention deleted old segments",
    );
    return removed.length;
  }
}

function producerLimits(config: LogConfig): ProducerLimits {
  return { expirationMs: config.producerIdExpirationMs, maxProducers: config.maxProducerIds };
}

function shuttingDown(): ConchError {
  return new ConchError(ErrorCode.SHUTTING_DOWN, "the partition log is closing");
}

/** A read's byte limit: a positive whole number, or 0 (one batch, whatever its size). */
function readLimit(maxBytes: number): number {
  return Number.isFinite(maxBytes) && maxBytes > 0 ? Math.floor(maxBytes) : 0;
}
