/**
 * One open topic: its partition logs, its config overrides and the effective config they run with.
 * A topic also owns a signal that fires when it closes (deleted, or the broker stopping), which is
 * what wakes the long polls waiting on its partitions.
 */
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { isInternalTopicName } from "../format/topic-name.js";
import { compacts } from "../storage/compaction/log-cleaner.js";
import type { LogConfig } from "../storage/config.js";
import {
  type CloseOptions,
  type LogOptions,
  PartitionLog,
  type QuarantinedRange,
} from "../storage/partition-log.js";
import { type OwedRun, replayOwed } from "../storage/shared-log/replay.js";
import type { BrokerConfig } from "./broker-config.js";
import { openSlot, releaseSlot } from "./open-slots.js";
import { PartitionSummary, type PartitionView } from "./partition-view.js";
import {
  describeTopicConfig,
  effectiveTopicConfig,
  type TopicConfig,
  type TopicOverrides,
} from "./topic-config.js";
import type { TopicMeta, TopicStore } from "./topic-store.js";

export interface PartitionDescription {
  partition: number;
  logStartOffset: number;
  highWatermark: number;
  /** Stored data that failed its check, oldest first (empty when none; docs/design.md, recovery). */
  quarantined: QuarantinedRange[];
}

/** What a topic is without its partitions' figures (Broker.topicInfo): never waits for a recovery. */
export interface TopicInfo {
  name: string;
  internal: boolean;
  partitions: number;
  /** The effective config, every key present. */
  configs: Record<string, string>;
}

export interface TopicDescription {
  name: string;
  internal: boolean;
  partitions: PartitionDescription[];
  /** The effective config, every key present. */
  configs: Record<string, string>;
}

async function closeLog(log: PartitionLog, options: CloseOptions): Promise<void> {
  await openSlot();
  try {
    await log.close(options);
  } finally {
    releaseSlot();
  }
}

/** What a partition log of a topic runs with: the topic's effective config over the broker's. */
export function logConfigFor(topic: TopicConfig, broker: BrokerConfig): LogConfig {
  return {
    segmentBytes: topic.segmentBytes,
    segmentMs: broker.segmentMs,
    indexIntervalBytes: broker.indexIntervalBytes,
    flush: topic.flush,
    flushIntervalMs: topic.flushIntervalMs,
    retentionMs: topic.retentionMs,
    retentionBytes: topic.retentionBytes,
    maxBatchBytes: broker.maxBatchBytes,
    cleanupPolicy: topic.cleanupPolicy,
    deleteRetentionMs: topic.deleteRetentionMs,
    minCompactionLagMs: topic.minCompactionLagMs,
    compactionDelayMs: broker.compactionDelayMs,
    compactionBytesPerSec: broker.compactionBytesPerSec,
    corruptData: topic.corruptData,
    metrics: broker.metrics,
    directReads: broker.directReads,
    producerIdExpirationMs: broker.producerIdExpirationMs,
    maxProducerIds: broker.maxProducerIds,
  };
}

/** How Topic.open opens a topic's logs. */
export interface TopicOpening {
  /** What a clean stop left of every partition: open none now (clean-stop.ts). */
  summaries?: readonly PartitionSummary[] | undefined;
  /** The last broker crashed without the machine (LogOptions.pagesKept). */
  pagesKept?: boolean;
  /**
   * After a crash: open none now, each log is recovered on first use (`openPartition`) or when
   * `openRest` reaches it. Until then a partition's figures are unknown (`whenKnown` waits for
   * them), but for a partition that has no directory (`partitionDirs`): never opened, it is empty.
   */
  recover?: boolean;
  /** The partitions that have a directory (TopicStore.scan), for `recover`. */
  partitionDirs?: ReadonlySet<number>;
  /**
   * The topic was just created and its partitions are empty: open none now, each opens (and its
   * directory is made) on first use. Its metadata, already durable, is all a create must keep.
   */
  fresh?: boolean;
  /**
   * Records the shared log holds for partitions of this topic (after a crash): each partition's
   * open appends those past its end before the log is used (shared-log/replay.ts).
   */
  owed?: ReadonlyMap<number, readonly OwedRun[]> | undefined;
}

export class Topic {
  readonly name: string;
  readonly internal: boolean;
  /** The open log of each partition; undefined while a lazy partition is not open yet. */
  #logs: (PartitionLog | undefined)[];
  /**
   * What a clean stop left of each partition not open yet (clean-stop.ts); undefined once open,
   * and for a partition not yet recovered after a crash (its figures are unknown until it opens).
   */
  #summaries: (PartitionSummary | undefined)[];
  /** Partitions below this one were summarised by a clean-stop manifest (not made empty since). */
  readonly #cleanStopped: number;
  /** Opens under way, so everyone asking for one partition waits on the same open. */
  #opening: (Promise<PartitionLog> | undefined)[];
  #overrides: TopicOverrides;
  #config: TopicConfig;
  #logConfig: LogConfig;
  readonly #store: TopicStore;
  readonly #logger: Logger;
  readonly #logOptions: LogOptions;
  /** Records owed to partitions not open yet (TopicOpening.owed); a partition's go at its open. */
  readonly #owed: Map<number, readonly OwedRun[]>;
  #closed = new AbortController();

  private constructor(
    name: string,
    logs: (PartitionLog | undefined)[],
    summaries: (PartitionSummary | undefined)[],
    overrides: TopicOverrides,
    config: TopicConfig,
    logConfig: LogConfig,
    store: TopicStore,
    logger: Logger,
    logOptions: LogOptions,
    cleanStopped: number,
    owed: Map<number, readonly OwedRun[]>,
  ) {
    this.name = name;
    this.internal = isInternalTopicName(name);
    this.#logs = logs;
    this.#summaries = summaries;
    this.#opening = new Array(logs.length);
    this.#overrides = overrides;
    this.#config = config;
    this.#logConfig = logConfig;
    this.#store = store;
    this.#logger = logger;
    this.#logOptions = logOptions;
    this.#cleanStopped = cleanStopped;
    this.#owed = owed;
  }

  /**
   * Opens a topic whose metadata is on disk. With `how.summaries` (what a clean stop left of every
   * partition, clean-stop.ts) no log is opened: each opens on first use (`openPartition`) or when
   * `openRest` reaches it, and until then `view` answers from its summary. With `how.recover` none
   * is opened either, and a partition's figures wait for its recovery. Otherwise every log is
   * opened before this returns.
   */
  static async open(
    store: TopicStore,
    meta: TopicMeta,
    broker: BrokerConfig,
    logger: Logger,
    how: TopicOpening = {},
  ): Promise<Topic> {
    const config = effectiveTopicConfig(meta.configs, broker);
    const logConfig = logConfigFor(config, broker);
    const summaries = how.fresh === true ? emptySummaries(meta.partitions) : how.summaries;
    const summarised = summaries !== undefined && summaries.length === meta.partitions;
    const options = { pagesKept: how.pagesKept === true };
    const owed = new Map(how.owed ?? []);
    const logs =
      summarised || how.recover === true
        ? new Array<PartitionLog | undefined>(meta.partitions)
        : await openLogs(store, meta.name, 0, meta.partitions, logConfig, logger, options, owed);
    const kept = summarised ? [...summaries] : new Array<PartitionSummary | undefined>(meta.partitions);
    if (!summarised && how.recover === true && how.partitionDirs !== undefined) {
      // A partition the shared log owes records is not empty, whether or not its directory survived.
      for (let p = 0; p < kept.length; p++)
        if (!how.partitionDirs.has(p) && !owed.has(p)) kept[p] = PartitionSummary.EMPTY;
    }
    // A summary says what the log held at a stop, not what is owed since: such a partition is unknown
    // until it opens.
    for (const p of owed.keys()) if (p < kept.length) kept[p] = undefined;
    const cleanStopped = summarised && how.fresh !== true ? meta.partitions : 0;
    return new Topic(
      meta.name,
      logs,
      kept,
      meta.configs,
      config,
      logConfig,
      store,
      logger,
      options,
      cleanStopped,
      // Opened whole: openLogs replayed what was owed.
      summarised || how.recover === true ? owed : new Map(),
    );
  }

  get partitionCount(): number {
    return this.#logs.length;
  }

  /**
   * Whether its logs take deferred records (shared-produce.ts) as far as its config goes: not an
   * internal topic, not flush=sync, not compacted. An open log may still refuse (canDeferRun).
   */
  get defersRecords(): boolean {
    return !this.internal && this.#logConfig.flush !== "sync" && !compacts(this.#logConfig);
  }

  get overrides(): Readonly<TopicOverrides> {
    return this.#overrides;
  }

  get config(): Readonly<TopicConfig> {
    return this.#config;
  }

  /** Aborted, with a ConchError as its reason, once the topic is closed. */
  get closedSignal(): AbortSignal {
    return this.#closed.signal;
  }

  meta(): TopicMeta {
    return { name: this.name, partitions: this.#logs.length, configs: { ...this.#overrides } };
  }

  /** Whether some partition has no open log yet (a lazy open not done). */
  get hasClosedPartitions(): boolean {
    for (const log of this.#logs) if (log === undefined) return true;
    return false;
  }

  /** Whether some partition left by a crash is not recovered yet (its figures are unknown). */
  get hasUnrecoveredPartitions(): boolean {
    return !this.known();
  }

  /**
   * Whether the figures of `partition` (of every partition when undefined) are known: its log is
   * open, or a clean stop summarised it.
   */
  known(partition?: number): boolean {
    if (partition !== undefined) return this.#known(partition);
    for (let p = 0; p < this.#logs.length; p++) if (!this.#known(p)) return false;
    return true;
  }

  #known(partition: number): boolean {
    return this.#logs[partition] !== undefined || this.#summaries[partition] !== undefined;
  }

  /**
   * Resolves once the figures (offsets, size) of `partition`, or of every partition when it is
   * undefined, are known: at once after a clean stop or once open; after a crash, once the logs
   * not recovered yet are, each opened now ahead of the background opener. Rejects as an open fails.
   */
  whenKnown(partition?: number): Promise<void> {
    if (partition !== undefined) {
      if (this.#known(partition)) return Promise.resolve();
      return this.openPartition(partition).then(noop);
    }
    const opens: Promise<PartitionLog>[] = [];
    for (let p = 0; p < this.#logs.length; p++) if (!this.#known(p)) opens.push(this.openPartition(p));
    return opens.length === 0 ? Promise.resolve() : Promise.all(opens).then(noop);
  }

  /** Throws UNKNOWN_PARTITION unless the topic has `partition`. */
  checkPartition(partition: number): void {
    if (!Number.isInteger(partition) || partition < 0 || partition >= this.#logs.length) {
      throw new ConchError(
        ErrorCode.UNKNOWN_PARTITION,
        `topic "${this.name}" has ${this.#logs.length} partition(s); there is no partition ${partition}`,
      );
    }
  }

  /**
   * The open log of `partition`. Only for topics opened whole (internal topics, cluster mode):
   * a partition of a lazily opened topic may not be open yet, see `openPartition`.
   */
  partition(partition: number): PartitionLog {
    const log = this.openedPartition(partition);
    if (log !== undefined) return log;
    this.checkPartition(partition);
    throw new ConchError(
      ErrorCode.INTERNAL,
      `partition ${partition} of topic "${this.name}" is not open yet`,
    );
  }

  /** The log of `partition` if it is open (undefined for a partition the topic does not have). */
  openedPartition(partition: number): PartitionLog | undefined {
    return this.#logs[partition];
  }

  /**
   * The partition's offsets and size: from its log, or from the summary while it is not open.
   * A partition not yet recovered after a crash has none: callers wait for `whenKnown` first, and
   * one that did not is refused with the retriable TIMEOUT rather than told a made-up offset.
   */
  view(partition: number): PartitionView {
    const log = this.openedPartition(partition);
    if (log !== undefined) return log;
    this.checkPartition(partition);
    return this.#summaries[partition] ?? this.#unrecovered(partition);
  }

  #unrecovered(partition: number): never {
    throw new ConchError(
      ErrorCode.TIMEOUT,
      `partition ${partition} of topic "${this.name}" is still being recovered after a crash; try again`,
    );
  }

  /**
   * The log of `partition`, opened now if it is not open yet (ahead of the background opener).
   * Callers waiting on one open resume in the order they asked, so their appends keep that order.
   */
  openPartition(partition: number): Promise<PartitionLog> {
    const log = this.openedPartition(partition);
    if (log !== undefined) return Promise.resolve(log);
    try {
      this.checkPartition(partition);
    } catch (err) {
      return Promise.reject(err);
    }
    let opening = this.#opening[partition];
    if (opening === undefined) {
      opening = this.#open(partition, true);
      this.#opening[partition] = opening;
    }
    return opening;
  }

  /**
   * Opens every partition not open yet that holds data, `workers` at a time, until all are or the
   * topic closes. An empty one (never written, as a new topic's partitions are) has nothing to
   * recover or serve: it opens on first use, and 10,000 of them cost nothing until then.
   */
  async openRest(workers: number): Promise<void> {
    let next = 0;
    const work = async (): Promise<void> => {
      while (!this.#closed.signal.aborted && next < this.#logs.length) {
        const p = next++;
        if (this.#logs[p] !== undefined || this.#summaries[p]?.logEndOffset === 0) continue;
        let opening = this.#opening[p];
        if (opening === undefined) {
          opening = this.#open(p, false);
          this.#opening[p] = opening;
        }
        // A failure is the next user's to see (each use tries the open again).
        await opening.catch(() => {});
      }
    };
    await Promise.all(Array.from({ length: workers }, work));
  }

  async #open(partition: number, urgent: boolean): Promise<PartitionLog> {
    await openSlot(urgent);
    try {
      if (this.#closed.signal.aborted) throw this.#closed.signal.reason;
      const dir = this.#store.partitionDir(this.name, partition);
      const config = this.#logConfig;
      const summary = this.#summaries[partition];
      const log = await PartitionLog.open(
        dir,
        config,
        this.#logger.child({ topic: this.name, partition }),
        this.#logOptions,
        {
          // Never written: most likely it has no directory yet (a new topic's partitions make theirs now).
          likelyNew: summary?.logEndOffset === 0,
          // Its summary is the manifest's: a clean stop fsynced it (CloseOptions.recorded).
          stoppedCleanly: summary !== undefined && partition < this.#cleanStopped,
        },
      );
      // Reconfigured while it opened: it runs with the topic's config as it is now.
      if (this.#logConfig !== config) log.updateConfig(this.#logConfig);
      await this.#replay(partition, log);
      if (summary !== undefined && !summary.matches(log)) {
        // Only a build that knows no manifest can append after one was written (docs/design.md).
        this.#logger.warn(
          { topic: this.name, partition, manifest: summary, logEndOffset: log.logEndOffset },
          "the clean-stop manifest did not match the partition's log; the log is what counts from now on",
        );
      }
      this.#logs[partition] = log;
      this.#summaries[partition] = undefined;
      return log;
    } catch (err) {
      if (!this.#closed.signal.aborted)
        this.#logger.error({ err, topic: this.name, partition }, "cannot open a partition log");
      throw err;
    } finally {
      this.#opening[partition] = undefined;
      releaseSlot();
    }
  }

  /** Appends what the shared log owes `partition`, if anything; the log is closed if that fails. */
  async #replay(partition: number, log: PartitionLog): Promise<void> {
    const runs = this.#owed.get(partition);
    if (runs === undefined) return;
    try {
      await replay(log, runs, this.#logger, this.name, partition);
      this.#owed.delete(partition);
    } catch (err) {
      await log.close().catch(() => {});
      throw err;
    }
  }

  /**
   * A topic with every partition's figures; a partition not yet recovered after a crash is refused
   * with the retriable TIMEOUT (callers wait for `whenKnown` first).
   */
  describe(): TopicDescription {
    const partitions: PartitionDescription[] = new Array(this.#logs.length);
    for (let partition = 0; partition < partitions.length; partition++) {
      partitions[partition] = this.describePartition(partition) ?? this.#unrecovered(partition);
    }
    return {
      name: this.name,
      internal: this.internal,
      partitions,
      configs: describeTopicConfig(this.#config),
    };
  }

  /**
   * One partition's figures as `describe` gives them, or null while a crash left it to recover: what
   * a describe that can say "not known yet" reports, without waiting or starting the recovery.
   */
  describePartition(partition: number): PartitionDescription | null {
    const log = this.#logs[partition];
    const view = log ?? this.#summaries[partition];
    if (view === undefined) {
      this.checkPartition(partition);
      return null;
    }
    return {
      partition,
      logStartOffset: view.logStartOffset,
      highWatermark: view.highWatermark,
      // A summary is written only for a log that closed without quarantined data.
      quarantined: log === undefined ? [] : log.quarantined(),
    };
  }

  /** Takes new overrides (already stored) and hands the resulting log config to every open partition. */
  reconfigure(overrides: TopicOverrides, broker: BrokerConfig): void {
    this.#overrides = overrides;
    this.#config = effectiveTopicConfig(overrides, broker);
    this.#logConfig = logConfigFor(this.#config, broker);
    for (const log of this.#logs) log?.updateConfig(this.#logConfig);
  }

  /**
   * Adds partitions [partitionCount, count) (their count is already stored): opened now, or with
   * `lazy` left empty and unopened, each opening on first use as after a create (TopicOpening.fresh).
   */
  async grow(
    store: TopicStore,
    count: number,
    broker: BrokerConfig,
    logger: Logger,
    lazy = false,
  ): Promise<void> {
    const from = this.#logs.length;
    if (lazy) {
      this.#logs.length = count;
      this.#summaries.length = count;
      this.#summaries.fill(PartitionSummary.EMPTY, from);
    } else {
      const added = await openLogs(store, this.name, from, count, logConfigFor(this.#config, broker), logger);
      this.#logs.push(...added);
      this.#summaries.length = count;
    }
    this.#opening.length = count;
  }

  /** Deletes partition `partition`'s data and opens an empty log in its place. */
  async resetPartition(
    partition: number,
    store: TopicStore,
    broker: BrokerConfig,
    logger: Logger,
  ): Promise<void> {
    await this.partition(partition).delete();
    const [fresh] = await openLogs(
      store,
      this.name,
      partition,
      partition + 1,
      logConfigFor(this.#config, broker),
      logger,
    );
    this.#logs[partition] = fresh!;
  }

  /**
   * Wakes everything waiting on the topic with `reason`, then flushes and closes every open log
   * (opens under way end first; no more start). All logs are closed even if one fails; the first
   * failure is rethrown afterwards. `options.recorded`: the caller writes the clean-stop manifest.
   */
  async close(reason: ConchError, options: CloseOptions = {}): Promise<void> {
    this.#closed.abort(reason);
    await Promise.allSettled(this.#opening.filter((o) => o !== undefined));
    const open = this.#logs.filter((log) => log !== undefined);
    const results = await Promise.allSettled(open.map((log) => closeLog(log, options)));
    const failed = results.find((r) => r.status === "rejected");
    if (failed !== undefined) throw failed.reason;
  }

  /**
   * After close: what each partition is on disk, for the clean-stop manifest; null when a log did
   * not close cleanly (or holds quarantined data), so the next open opens the topic whole.
   */
  cleanSummaries(): PartitionSummary[] | null {
    const out: PartitionSummary[] = new Array(this.#logs.length);
    for (let p = 0; p < out.length; p++) {
      const log = this.#logs[p];
      if (log === undefined) {
        const summary = this.#summaries[p];
        if (summary === undefined) return null;
        out[p] = summary;
      } else if (!log.closedCleanly || log.quarantined().length > 0) return null;
      else out[p] = PartitionSummary.of(log);
    }
    return out;
  }
}

function noop(): void {}

/** Appends what the shared log owes a partition's log (shared-log/replay.ts), and says so. */
async function replay(
  log: PartitionLog,
  runs: readonly OwedRun[],
  logger: Logger,
  topic: string,
  partition: number,
): Promise<void> {
  const records = await replayOwed(log, runs);
  if (records > 0) logger.info({ topic, partition, records }, "records replayed from the shared log");
}

function emptySummaries(partitions: number): PartitionSummary[] {
  return new Array<PartitionSummary>(partitions).fill(PartitionSummary.EMPTY);
}

async function openLogs(
  store: TopicStore,
  name: string,
  from: number,
  to: number,
  config: LogConfig,
  logger: Logger,
  options: LogOptions = {},
  owed: ReadonlyMap<number, readonly OwedRun[]> = new Map(),
): Promise<PartitionLog[]> {
  const logs: PartitionLog[] = new Array(to - from);
  let failure: unknown = null;
  const openOne = async (partition: number): Promise<void> => {
    await openSlot();
    try {
      if (failure !== null) return;
      // PartitionLog.open creates the directory when it is missing.
      const dir = store.partitionDir(name, partition);
      const log = await PartitionLog.open(dir, config, logger.child({ topic: name, partition }), options);
      logs[partition - from] = log;
      const runs = owed.get(partition);
      if (runs !== undefined) await replay(log, runs, logger, name, partition);
    } catch (err) {
      failure ??= err;
    } finally {
      releaseSlot();
    }
  };
  await Promise.all(Array.from({ length: to - from }, (_, i) => openOne(from + i)));
  if (failure !== null) {
    await Promise.allSettled(logs.filter((log) => log !== undefined).map((log) => log.close()));
    throw failure;
  }
  return logs;
}
