/**
 * One open topic: its partition logs, its config overrides and the effective config they run with.
 * A topic also owns a signal that fires when it closes (deleted, or the broker stopping), which is
 * what wakes the long polls waiting on its partitions.
 */
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { isInternalTopicName } from "../format/topic-name.js";
import type { LogConfig } from "../storage/config.js";
import { PartitionLog, type QuarantinedRange } from "../storage/partition-log.js";
import type { BrokerConfig } from "./broker-config.js";
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

export interface TopicDescription {
  name: string;
  internal: boolean;
  partitions: PartitionDescription[];
  /** The effective config, every key present. */
  configs: Record<string, string>;
}

/**
 * Partition logs opened or closed at once across every topic (the broker opens its topics
 * together): each is a few file system calls on the thread pool and may recover segment files or
 * write an index. With a cold page cache those calls wait on the disk, so more in flight than the
 * pool has threads shortens an open of 10,000 logs (8 at a time took 1.7 times as long as 32); but
 * closing 10,000 at once ran out of file descriptors (EMFILE: each close opens its index file
 * while every log still holds its segment).
 */
const OPEN_CONCURRENCY = 32;
let opening = 0;
const openQueue: (() => void)[] = [];
let openHead = 0;

/** Waits for one of the OPEN_CONCURRENCY slots. */
function openSlot(): Promise<void> | undefined {
  if (opening < OPEN_CONCURRENCY) {
    opening++;
    return undefined;
  }
  return new Promise<void>((resolve) => openQueue.push(resolve));
}

/** Hands the slot to the next waiter, or frees it. */
function releaseSlot(): void {
  if (openHead < openQueue.length) {
    const next = openQueue[openHead]!;
    openQueue[openHead++] = noop;
    if (openHead === openQueue.length) {
      openQueue.length = 0;
      openHead = 0;
    }
    next();
  } else {
    opening--;
  }
}

function noop(): void {}

async function closeLog(log: PartitionLog): Promise<void> {
  await openSlot();
  try {
    await log.close();
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
    producerIdExpirationMs: broker.producerIdExpirationMs,
    maxProducerIds: broker.maxProducerIds,
  };
}

export class Topic {
  readonly name: string;
  readonly internal: boolean;
  #logs: PartitionLog[];
  #overrides: TopicOverrides;
  #config: TopicConfig;
  #closed = new AbortController();

  private constructor(name: string, logs: PartitionLog[], overrides: TopicOverrides, config: TopicConfig) {
    this.name = name;
    this.internal = isInternalTopicName(name);
    this.#logs = logs;
    this.#overrides = overrides;
    this.#config = config;
  }

  /** Opens every partition log of a topic whose metadata is on disk. */
  static async open(
    store: TopicStore,
    meta: TopicMeta,
    broker: BrokerConfig,
    logger: Logger,
  ): Promise<Topic> {
    const config = effectiveTopicConfig(meta.configs, broker);
    const logs = await openLogs(store, meta.name, 0, meta.partitions, logConfigFor(config, broker), logger);
    return new Topic(meta.name, logs, meta.configs, config);
  }

  get partitionCount(): number {
    return this.#logs.length;
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

  partition(partition: number): PartitionLog {
    const log = Number.isInteger(partition) ? this.#logs[partition] : undefined;
    if (log === undefined) {
      throw new ConchError(
        ErrorCode.UNKNOWN_PARTITION,
        `topic "${this.name}" has ${this.#logs.length} partition(s); there is no partition ${partition}`,
      );
    }
    return log;
  }

  describe(): TopicDescription {
    return {
      name: this.name,
      internal: this.internal,
      partitions: this.#logs.map((log, partition) => ({
        partition,
        logStartOffset: log.logStartOffset,
        highWatermark: log.highWatermark,
        quarantined: log.quarantined(),
      })),
      configs: describeTopicConfig(this.#config),
    };
  }

  /** Takes new overrides (already stored) and hands the resulting log config to every partition. */
  reconfigure(overrides: TopicOverrides, broker: BrokerConfig): void {
    this.#overrides = overrides;
    this.#config = effectiveTopicConfig(overrides, broker);
    const logConfig = logConfigFor(this.#config, broker);
    for (const log of this.#logs) log.updateConfig(logConfig);
  }

  /** Opens partitions [partitionCount, count) (their count is already stored). */
  async grow(store: TopicStore, count: number, broker: BrokerConfig, logger: Logger): Promise<void> {
    const from = this.#logs.length;
    const added = await openLogs(store, this.name, from, count, logConfigFor(this.#config, broker), logger);
    this.#logs.push(...added);
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
   * Wakes everything waiting on the topic with `reason`, then flushes and closes every log. All logs
   * are closed even if one fails; the first failure is rethrown afterwards.
   */
  async close(reason: ConchError): Promise<void> {
    this.#closed.abort(reason);
    const results = await Promise.allSettled(this.#logs.map((log) => closeLog(log)));
    const failed = results.find((r) => r.status === "rejected");
    if (failed !== undefined) throw failed.reason;
  }
}

async function openLogs(
  store: TopicStore,
  name: string,
  from: number,
  to: number,
  config: LogConfig,
  logger: Logger,
): Promise<PartitionLog[]> {
  const logs: PartitionLog[] = new Array(to - from);
  let failure: unknown = null;
  const openOne = async (partition: number): Promise<void> => {
    await openSlot();
    try {
      if (failure !== null) return;
      // PartitionLog.open creates the directory when it is missing.
      const dir = store.partitionDir(name, partition);
      logs[partition - from] = await PartitionLog.open(dir, config, logger.child({ topic: name, partition }));
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
