/**
 * The broker: the topics of one data directory and the operations the server (and embedded mode)
 * calls. Admin operations (create, delete, alter, add partitions) run one at a time so that two of
 * them never interleave their disk steps; produce and fetch go straight to the partition logs.
 */
import { resolve } from "node:path";
import { type Logger, pino } from "pino";
import { checkDurationMs, MAX_TIMER_MS } from "../format/duration.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { PartitionIndex } from "../format/partition-index.js";
import { checkTopicName, isInternalTopicName, topicNameProblem } from "../format/topic-name.js";
import { sharedAppendMemory } from "../storage/append-memory.js";
import { ErrorCounts } from "../storage/error-counts.js";
import { startLineHelpers } from "../storage/line-helper.js";
import { storageLogLimiter } from "../storage/log-limiter.js";
import type { AppendListener, AppendResult, PartitionLog, ReadResult } from "../storage/partition-log.js";
import { StopSync } from "../storage/stop-sync.js";
import { storageError } from "../storage/storage-error.js";
import { type BrokerConfig, resolveBrokerConfig } from "./broker-config.js";
import { ACKS, type Acks, type OffsetSpec, type PartitionedProduce } from "./broker-requests.js";
import { takeCleanStop, writeCleanStop } from "./clean-stop.js";
import type { ClusterMetadata } from "./cluster-metadata.js";
import { DataDirLock } from "./data-dir-lock.js";
import { GroupCoordinator } from "./group-coordinator.js";
import { type FetchListener, type FetchRequest, fetchWithWait } from "./long-poll.js";
import { OPEN_CONCURRENCY } from "./open-slots.js";
import type { PartitionSummary, PartitionView } from "./partition-view.js";
import { ProduceGate } from "./produce-gate.js";
import { ProducerIdAllocator } from "./producer-ids.js";
import { ACKS_ALL_DEFAULT_TIMEOUT_MS, AcksAllWait, type PartitionReplication } from "./replication.js";
import { SharedProduce } from "./shared-produce.js";
import { type PartitionDescription, Topic, type TopicDescription, type TopicInfo } from "./topic.js";
import { type PartitionMove, type TopicAdmin, takeReplicationFactor } from "./topic-admin.js";
import {
  describeTopicConfig,
  mergeOverrides,
  parseTopicConfigs,
  type TopicOverrides,
} from "./topic-config.js";
import { MAX_PARTITIONS, type TopicMeta, TopicStore } from "./topic-store.js";

export type { Acks, OffsetSpec } from "./broker-requests.js";
export type { FetchRequest } from "./long-poll.js";

export interface BrokerOpenOptions {
  /**
   * Serve before opening the partition logs a clean stop left (clean-stop.ts): each opens on first
   * use or in the background. The partitions of a topic created or grown later open on first use
   * too (a new partition is empty: its directory and files wait until it is used). Ignored in
   * cluster mode, whose replicas need their logs at once.
   */
  openLazily?: boolean;
}

/**
 * How long a request that reports a partition's figures waits for its recovery after a crash (a
 * client's default request timeout): one partition's recovery takes milliseconds; thousands asked
 * for at once on a loaded disk may not.
 */
const RECOVERY_WAIT_MS = 30_000;

/** Partitions the background opener opens at a time: every open slot; a request's open still goes first. */
const BACKGROUND_OPENS = OPEN_CONCURRENCY;

export interface OffsetLookup {
  found: boolean;
  offset: number;
}

export class Broker {
  readonly config: BrokerConfig;
  /** Set in cluster mode: topics are created and deleted through the cluster's metadata. */
  topicAdmin: TopicAdmin | null = null;
  /** Set in cluster mode: what Metadata requests answer (brokers, leaders, ISRs). */
  cluster: ClusterMetadata | null = null;
  /** The data directory, absolute. */
  readonly dataDir: string;
  /** The consumer groups of this broker (docs/groups.md). */
  readonly groups: GroupCoordinator;
  /**
   * Produces, fetches and admin operations the broker refused or failed before reaching a
   * partition log, by code (a log counts its own failures in its stats), for metrics.
   */
  readonly errors = new ErrorCounts();
  #logger: Logger;
  #store: TopicStore;
  #topics = new Map<string, Topic>();
  /** Automatic creates in progress, so concurrent produces to a new topic share one. */
  #autoCreating = new Map<string, Promise<Topic>>();
  /** Cluster mode's replica manager; null on a single node. */
  #replication: PartitionReplication | null = null;
  #adminTail: Promise<unknown> = Promise.resolve();
  /** The background opener of lazily opened topics (partitionsOpened). */
  #background: Promise<void> = Promise.resolve();
  #closing: Promise<void> | null = null;
  /** New partitions of client topics open on first use (BrokerOpenOptions.openLazily). */
  #lazy = false;

  #lock: DataDirLock;
  /** A standalone broker's shared log (shared-produce.ts); null in cluster mode. */
  #shared: SharedProduce | null = null;
  /** Topics whose produces are held behind a partitioned produce waiting for opens. */
  readonly #gates = new Map<Topic, ProduceGate>();
  /** Opened with the broker (producer-ids.ts). */
  #producerIds: ProducerIdAllocator | null = null;

  private constructor(
    config: BrokerConfig,
    dataDir: string,
    lock: DataDirLock,
    store: TopicStore,
    logger: Logger,
  ) {
    this.config = config;
    this.dataDir = dataDir;
    this.#lock = lock;
    this.#store = store;
    this.#logger = logger;
    this.groups = new GroupCoordinator(this, { logger });
  }

  /**
   * Opens the data directory: takes its lock (one broker per directory, see data-dir-lock.ts),
   * removes leftovers of interrupted creates and deletes, then opens every topic. `config` is
   * validated and completed with defaults.
   */
  static async open(
    config: Partial<BrokerConfig> = {},
    logger?: Logger,
    options: BrokerOpenOptions = {},
  ): Promise<Broker> {
    const resolved = resolveBrokerConfig(config);
    // The storage's shell helpers fork the process: now, while it holds little (line-helper.ts).
    startLineHelpers();
    // One bound for the process, as its logs share one ticker: the last broker opened sets it.
    sharedAppendMemory.setCacheLimit(resolved.tailCacheBytes);
    const dataDir = resolve(resolved.dataDir);
    const log = (logger ?? pino({ enabled: false })).child({ component: "broker" });
    const lock = await DataDirLock.acquire(dataDir);
    const store = new TopicStore(dataDir, log);
    const broker = new Broker(resolved, dataDir, lock, store, log);
    broker.#lazy = options.openLazily === true && resolved.brokerId === -1;
    const lazy: Topic[] = [];
    try {
      broker.#producerIds = await ProducerIdAllocator.open(dataDir);
      // Always taken (removed): once any log opens, the manifest no longer describes it.
      const cleanStop = await takeCleanStop(dataDir, resolved.maxPartitions);
      // A client topic opens lazily: from the manifest's summaries after a clean stop, else (a
      // crash, or a log that did not close cleanly) each log is recovered on first use.
      const lazyTopic = (meta: TopicMeta): boolean => broker.#lazy && !isInternalTopicName(meta.name);
      const metas = await store.scan();
      // What a crash left in the shared log is owed to its partitions: their opens append it.
      let owed: Awaited<ReturnType<typeof SharedProduce.open>>["owed"] = new Map();
      if (resolved.brokerId === -1) {
        const partitions = new Map(metas.map((m) => [m.name, m.partitions]));
        const opened = await SharedProduce.open(
          dataDir,
          log,
          (topic, partition) => partition < (partitions.get(topic) ?? 0),
          resolved.tailCacheBytes,
        );
        broker.#shared = opened.shared;
        owed = opened.owed;
      }
      // Together: the partition opens of every topic share one bound (topic.ts).
      const opened = await Promise.allSettled(
        metas.map((meta) =>
          Topic.open(store, meta, resolved, log, {
            summaries: lazyTopic(meta) ? cleanStop?.get(meta.name) : undefined,
            recover: lazyTopic(meta),
            partitionDirs: meta.partitionDirs,
            pagesKept: lock.crashedThisBoot,
            owed: owed.get(meta.name),
          }),
        ),
      );
      for (const r of opened) if (r.status === "fulfilled") broker.#topics.set(r.value.name, r.value);
      const failed = opened.find((r) => r.status === "rejected");
      if (failed !== undefined) throw failed.reason;
      await broker.groups.load();
      for (const topic of broker.#topics.values()) if (topic.hasClosedPartitions) lazy.push(topic);
      // Every log this open had to recover is open: none is left to the background opener.
      if (!lazy.some((t) => t.hasUnrecoveredPartitions)) await lock.opened();
    } catch (err) {
      await broker.close().catch(() => {});
      throw err;
    }
    log.info(
      {
        dataDir,
        topics: broker.#topics.size,
        lazyTopics: lazy.length,
        crashedThisBoot: lock.crashedThisBoot,
      },
      "broker opened",
    );
    if (lazy.length > 0) broker.#background = broker.#openRest(lazy);
    return broker;
  }

  /**
   * Opens the partitions of lazily opened topics in the background, one topic after another; the
   * empty ones wait for their first use (Topic.openRest).
   */
  async #openRest(topics: Topic[]): Promise<void> {
    const started = performance.now();
    const recovering = topics.some((t) => t.hasUnrecoveredPartitions);
    for (const topic of topics) await topic.openRest(BACKGROUND_OPENS);
    if (this.#closing !== null) return;
    // Only once every log the crash left is recovered may a crash from here on count as one of
    // the process alone (data-dir-lock.ts); an open that failed leaves it to the next start. A
    // topic deleted meanwhile left nothing to recover.
    const unrecovered = (t: Topic): boolean => this.#topics.get(t.name) === t && t.hasUnrecoveredPartitions;
    if (recovering && !topics.some(unrecovered)) await this.#lock.opened();
    const ms = Math.round(performance.now() - started);
    this.#logger.info({ topics: topics.length, ms }, "every partition log holding data is open");
  }

  /** Resolves once the background opener is done (every partition holding data is open, or the broker closed). */
  async partitionsOpened(): Promise<void> {
    await this.#background;
  }

  /**
   * A new idempotent producer's id, never handed out before by this data directory, with epoch 0:
   * every producer gets a fresh id (there are no transactional ids to keep one across sessions).
   */
  async initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    this.#checkOpen();
    return { producerId: await this.#producerIds!.next(), producerEpoch: 0 };
  }

  // ---- admin ---------------------------------------------------------------------------------

  async createTopic(name: string, partitions: number, configs: Record<string, string> = {}): Promise<void> {
    this.#checkOpen();
    checkTopicName(name);
    checkPartitionCount(partitions);
    const { configs: rest, replicationFactor } = takeReplicationFactor(configs);
    const overrides = parseTopicConfigs(rest);
    if (this.topicAdmin !== null)
      return this.topicAdmin.createTopic(name, partitions, rest, replicationFactor);
    if (replicationFactor !== null && replicationFactor !== 1) {
      throw new ConchError(
        ErrorCode.INVALID_REPLICATION_FACTOR,
        `a single-node broker keeps one replica: replication factor ${replicationFactor} needs cluster mode (docs/cluster.md)`,
      );
    }
    await this.#admin(async () => {
      if (this.#topics.has(name)) {
        throw new ConchError(ErrorCode.TOPIC_ALREADY_EXISTS, `topic "${name}" already exists`);
      }
      this.#checkPartitionBudget(name, partitions);
      await this.#create(name, partitions, overrides);
    });
  }

  async deleteTopic(name: string): Promise<void> {
    this.#checkOpen();
    checkTopicName(name);
    if (this.topicAdmin !== null) return this.topicAdmin.deleteTopic(name);
    await this.#admin(async () => {
      const topic = this.#existing(name);
      // Out of the map first: from here on the topic is unknown to produce and fetch.
      this.#topics.delete(name);
      await topic
        .close(new ConchError(ErrorCode.UNKNOWN_TOPIC, `topic "${name}" was deleted`))
        .catch((err: unknown) => this.#logger.warn({ err, topic: name }, "error closing a deleted topic"));
      await this.#store.remove(name);
      this.#shared?.topicDeleted(name);
      this.#logger.info({ topic: name }, "topic deleted");
    });
  }

  /** Changes config overrides; an empty value removes the override (back to the broker's setting). */
  async alterTopic(name: string, configs: Record<string, string>): Promise<void> {
    this.#checkOpen();
    checkTopicName(name);
    const changes = parseTopicConfigs(configs, true);
    await this.#admin(async () => {
      const topic = this.#existing(name);
      const overrides = mergeOverrides(topic.overrides, changes);
      await this.#store.update({ ...topic.meta(), configs: overrides });
      topic.reconfigure(overrides, this.config);
      this.#logger.info({ topic: name, configs: overrides }, "topic config changed");
    });
  }

  /** Grows a topic to `partitions` partitions in all. Existing partitions keep their data. */
  async addPartitions(name: string, partitions: number): Promise<void> {
    this.#checkOpen();
    checkTopicName(name);
    checkPartitionCount(partitions);
    if (this.topicAdmin !== null) return this.topicAdmin.addPartitions(name, partitions);
    await this.#admin(async () => {
      const topic = this.#existing(name);
      const before = topic.meta();
      if (partitions <= before.partitions) {
        throw new ConchError(
          ErrorCode.INVALID_PARTITIONS,
          `topic "${name}" has ${before.partitions} partition(s); it can only grow (asked for ${partitions})`,
        );
      }
      await this.#grow(topic, partitions);
    });
  }

  /**
   * Cluster mode: moves partitions to new replica lists (docs/cluster.md, "Reassignment"); answers
   * once the moves are recorded, not when they are done. A single-node broker has nowhere to move to.
   */
  async reassignPartitions(moves: readonly PartitionMove[]): Promise<void> {
    this.#checkOpen();
    for (const m of moves) checkTopicName(m.topic);
    if (this.topicAdmin === null) {
      throw new ConchError(
        ErrorCode.INVALID_REQUEST,
        "a single-node broker keeps its one replica: reassignment needs cluster mode (docs/cluster.md)",
      );
    }
    return this.topicAdmin.reassignPartitions(moves);
  }

  /**
   * Cluster mode: this broker holds a replica of `name`, whose partition count and configs the
   * cluster's metadata gives. Creates the local logs (or adds the missing partitions) without
   * going through topicAdmin, which would ask the cluster to create the topic again.
   */
  async hostReplicaTopic(name: string, partitions: number, configs: Record<string, string>): Promise<void> {
    this.#checkOpen();
    // The cluster's internal topics (__consumer_offsets) are replicated like any other.
    checkTopicName(name, { internal: isInternalTopicName(name) });
    checkPartitionCount(partitions);
    const overrides = parseTopicConfigs(configs);
    await this.#admin(async () => {
      const topic = this.#topics.get(name);
      if (topic === undefined) {
        this.#checkPartitionBudget(name, partitions);
        await this.#create(name, partitions, overrides);
        return;
      }
      if (partitions > topic.partitionCount) await this.#grow(topic, partitions);
    });
  }

  /**
   * Cluster mode: this broker no longer holds a replica of the partition (reassigned away, or its
   * topic deleted): its data is removed and an empty log takes its place, so a later replica here
   * starts from nothing and fetches what it needs from the leader.
   */
  async discardReplica(name: string, partition: number): Promise<void> {
    this.#checkOpen();
    await this.#admin(async () => {
      const topic = this.#topics.get(name);
      if (topic === undefined || partition >= topic.partitionCount) return;
      await topic.resetPartition(partition, this.#store, this.config, this.#logger);
      this.#logger.info({ topic: name, partition }, "replica removed");
    });
  }

  /** Names of every topic, internal ones included, sorted. */
  listTopics(): string[] {
    this.#checkOpen();
    return [...this.#topics.keys()].sort();
  }

  /**
   * Calls `fn` for every open partition log of every topic, internal ones included (metrics
   * scrapes). A partition not opened since a clean stop has no log yet, and no traffic.
   */
  forEachPartition(fn: (topic: string, partition: number, log: PartitionLog) => void): void {
    for (const [name, topic] of this.#topics) {
      const n = topic.partitionCount;
      for (let p = 0; p < n; p++) {
        const log = topic.openedPartition(p);
        if (log !== undefined) fn(name, p, log);
      }
    }
  }

  /**
   * A topic with every partition's figures. After a crash a partition's figures are its recovered
   * log's: callers that report them wait for `recovered(name)` first (a partition not recovered yet
   * is refused with the retriable TIMEOUT), or ask `describePartition`, which can say "not known
   * yet". What needs no figures asks `topicInfo`.
   */
  describeTopic(name: string): TopicDescription {
    this.#checkOpen();
    return this.#existing(name).describe();
  }

  /**
   * One partition's figures as `describeTopic` gives them, or null while it is still being recovered
   * after a crash: never waits, and leaves the recovery to the partition's first use or the
   * background opener. UNKNOWN_TOPIC or UNKNOWN_PARTITION if there is none.
   */
  describePartition(topic: string, partition: number): PartitionDescription | null {
    this.#checkOpen();
    return this.#existing(topic).describePartition(partition);
  }

  /** What a topic is without any partition's figures: known from its metadata alone, never waits. */
  topicInfo(name: string): TopicInfo {
    this.#checkOpen();
    const topic = this.#existing(name);
    return {
      name: topic.name,
      internal: topic.internal,
      partitions: topic.partitionCount,
      configs: describeTopicConfig(topic.config),
    };
  }

  /** UNKNOWN_TOPIC or UNKNOWN_PARTITION unless the broker has the partition; never waits. */
  checkPartition(topic: string, partition: number): void {
    this.#checkOpen();
    this.#existing(topic).checkPartition(partition);
  }

  /**
   * Resolves once the figures of `topic`'s partitions (or of `partition`) are known, so that
   * `describeTopic` and `partitionView` can answer: at once unless a crash left them to recover,
   * else once each is recovered (opened now, ahead of the background opener). A recovery longer
   * than `timeoutMs` fails with the retriable TIMEOUT; the recovery goes on.
   */
  recovered(topic: string, partition?: number, timeoutMs = RECOVERY_WAIT_MS): Promise<void> {
    try {
      this.#checkOpen();
      const t = this.#existing(topic);
      if (partition !== undefined) t.checkPartition(partition);
      if (t.known(partition)) return Promise.resolve();
      return withTimeout(t.whenKnown(partition), timeoutMs, () => openTimeout(topic, partition, timeoutMs));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * The log of one partition: UNKNOWN_TOPIC or UNKNOWN_PARTITION if there is none. Only for
   * partitions known to be open (internal topics, cluster mode, a broker opened whole); others
   * are reached through `openPartition`, or read through `partitionView`.
   */
  partition(topic: string, partition: number): PartitionLog {
    this.#checkOpen();
    return this.#existing(topic).partition(partition);
  }

  /** The log of one partition, opened first if a lazy open has not reached it yet. */
  async openPartition(topic: string, partition: number): Promise<PartitionLog> {
    this.#checkOpen();
    return this.#existing(topic).openPartition(partition);
  }

  /** A partition's offsets and size without opening it: UNKNOWN_TOPIC or UNKNOWN_PARTITION if there is none. */
  partitionView(topic: string, partition: number): PartitionView {
    this.#checkOpen();
    return this.#existing(topic).view(partition);
  }

  /**
   * Opens an internal topic ("__" prefix), creating it if needed. Internal topics cannot be created,
   * altered, deleted or produced to through the client-facing operations; their owner (the group
   * coordinator, say) appends to `topic.partition(n)` directly.
   */
  async ensureInternalTopic(
    name: string,
    partitions: number,
    configs: Record<string, string> = {},
  ): Promise<Topic> {
    this.#checkOpen();
    checkTopicName(name, { internal: true });
    checkPartitionCount(partitions);
    const overrides = parseTopicConfigs(configs);
    return this.#admin(
      async () => this.#topics.get(name) ?? (await this.#create(name, partitions, overrides)),
    );
  }

  // ---- data ----------------------------------------------------------------------------------

  /**
   * Appends `records` (one or more whole batches). For a known topic, PartitionLog.append is called
   * before this function returns, so the order of produce calls is the order of offsets.
   * `records` is not referenced once this returns (the log copies it, and a produce that waits for
   * its topic to be created waits with a copy), so the caller may reuse its memory at once.
   */
  produce(
    topic: string,
    partition: number,
    records: Buffer,
    acks: Acks,
    timeoutMs = ACKS_ALL_DEFAULT_TIMEOUT_MS,
  ): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.produceTo(
        topic,
        partition,
        records,
        acks,
        {
          appended: (r) => resolve({ baseOffset: r.baseOffset, lastOffset: r.lastOffset }),
          appendFailed: reject,
        },
        timeoutMs,
      );
    });
  }

  /**
   * Cluster mode: from now on produce and consumer fetches reach only partitions this broker
   * leads, and acks "all" waits for the in-sync replicas (replication.ts).
   */
  setReplication(replication: PartitionReplication | null): void {
    this.#replication = replication;
  }

  /** Cluster mode's replica manager (setReplication), null on a single node. */
  get replication(): PartitionReplication | null {
    return this.#replication;
  }

  /**
   * `produce` without a promise, for the network path: one listener object per request instead of
   * a chain of promises. Never throws: a produce refused at once is told to `listener` before this
   * returns, like any other failure.
   */
  produceTo(
    topic: string,
    partition: number,
    records: Buffer,
    acks: Acks,
    listener: AppendListener,
    timeoutMs = ACKS_ALL_DEFAULT_TIMEOUT_MS,
  ): void {
    try {
      this.#checkOpen();
      if (!ACKS.has(acks)) {
        throw new ConchError(
          ErrorCode.INVALID_REQUEST,
          `acks must be none, leader, durable or all, got ${String(acks)}`,
        );
      }
      const t = this.#topics.get(topic);
      if (t !== undefined) {
        this.#append(t, partition, records, acks, listener, timeoutMs);
        return;
      }
    } catch (err) {
      this.errors.count(err);
      listener.appendFailed(asError(err));
      return;
    }
    // Everyone waiting on the same create resumes in call order, so their appends keep it.
    const kept = Buffer.from(records);
    this.#autoCreate(topic)
      .then((created) => this.#append(created, partition, kept, acks, listener, timeoutMs))
      .catch((err: unknown) => {
        this.errors.count(err);
        listener.appendFailed(asError(err));
      });
  }

  #append(
    t: Topic,
    partition: number,
    records: Buffer,
    acks: Acks,
    listener: AppendListener,
    timeoutMs: number,
  ): void {
    if (t.internal) {
      throw new ConchError(
        ErrorCode.INVALID_TOPIC_NAME,
        `topic "${t.name}" is internal; clients cannot write to it`,
      );
    }
    const gate = this.#holding(t);
    if (gate === undefined) {
      this.#appendToLog(t, partition, records, acks, listener, timeoutMs);
      return;
    }
    // Behind a partitioned produce waiting for opens (produce-gate.ts): its records are copied.
    const kept = Buffer.from(records);
    const ready =
      t.openedPartition(partition) !== undefined || partition >= t.partitionCount
        ? null
        : openWithin(t, partition, timeoutMs);
    gate.hold({
      ready,
      run: () => this.#appendToLog(t, partition, kept, acks, listener, timeoutMs),
      fail: (err) => this.#appendFailed(listener, err),
    });
  }

  #appendFailed(listener: AppendListener, err: unknown): void {
    this.errors.count(err);
    listener.appendFailed(asError(err));
  }

  /** The gate of `t` while it holds produces (produce-gate.ts). */
  #holding(t: Topic): ProduceGate | undefined {
    if (this.#gates.size === 0) return undefined;
    const gate = this.#gates.get(t);
    return gate?.holding === true ? gate : undefined;
  }

  /**
   * The owner of an internal topic (the group coordinator) appends here: fsynced on a single node;
   * in cluster mode only as the partition's leader, answered once the in-sync replicas have it.
   */
  appendInternal(
    topic: string,
    partition: number,
    records: Buffer,
    timeoutMs = 5_000,
  ): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      try {
        this.#checkOpen();
        const t = this.#existing(topic);
        const acks = this.#replication === null ? "durable" : "all";
        this.#appendToLog(
          t,
          partition,
          records,
          acks,
          { appended: resolve, appendFailed: reject },
          timeoutMs,
        );
      } catch (err) {
        reject(err);
      }
    });
  }

  #appendToLog(
    t: Topic,
    partition: number,
    records: Buffer,
    acks: Acks,
    listener: AppendListener,
    timeoutMs: number,
  ): void {
    const log = t.openedPartition(partition);
    if (log === undefined) {
      t.checkPartition(partition);
      // Not opened since a clean stop, or not recovered yet after a crash: this produce opens it,
      // waiting at most its own timeout (then TIMEOUT, and nothing is appended). The records are
      // copied (the caller may reuse them), and produces waiting on one open append in the order
      // they came.
      const kept = Buffer.from(records);
      openWithin(t, partition, timeoutMs)
        .then(() => this.#appendToLog(t, partition, kept, acks, listener, timeoutMs))
        .catch((err: unknown) => {
          this.errors.count(err);
          listener.appendFailed(asError(err));
        });
      return;
    }
    const replication = this.#replication;
    if (replication === null) {
      log.appendTo(records, acks === "durable", listener);
      return;
    }
    replication.checkLeader(t.name, partition);
    if (acks !== "all") {
      log.appendTo(records, acks === "durable", listener);
      return;
    }
    replication.checkInSync(t.name, partition);
    log.appendTo(records, false, new AcksAllWait(log, listener, acksAllTimeout(timeoutMs)));
  }

  /**
   * Produce version 3's records: deferred (shared-produce.ts), `produce.deferred` told each group's
   * first offset and `produce` told once the batch is in the shared log; or `produce.split` called,
   * nothing taken, when the request must be split and appended per partition (`produceTo`). A
   * request naming partitions not open yet waits for their opens (at most `timeoutMs`, as the split
   * path's appends would) and is deferred then, every produce to the topic meanwhile held behind it
   * (produce-gate.ts).
   */
  producePartitioned(
    topic: string,
    batch: Buffer,
    index: PartitionIndex,
    acks: Acks,
    produce: PartitionedProduce,
    timeoutMs: number,
  ): void {
    const shared = this.#shared;
    const t = this.#topics.get(topic);
    if (shared === null || this.#closing !== null || this.#replication !== null || t === undefined) {
      produce.split(batch);
      return;
    }
    if (this.#holding(t) === undefined) {
      const outcome = shared.defer(t, batch, index, acks, produce);
      if (outcome === "split") {
        produce.split(batch);
        return;
      }
      if (outcome !== "open-first") {
        produce.deferred(outcome);
        return;
      }
    }
    // The request's frame is reused once the handler returns: the held batch is a copy.
    const kept = Buffer.from(batch);
    index.moveTo(kept, 0);
    let gate = this.#gates.get(t);
    if (gate === undefined) {
      const held = new ProduceGate(() => this.#gates.delete(t));
      this.#gates.set(t, held);
      gate = held;
    }
    gate.hold({
      ready: this.#opens(t, index, acksAllTimeout(timeoutMs)),
      run: () => {
        const outcome = this.#closing === null ? shared.defer(t, kept, index, acks, produce) : "split";
        if (typeof outcome === "string") produce.split(kept);
        else produce.deferred(outcome);
      },
      fail: (err) => this.#appendFailed(produce, err),
    });
  }

  /** The opens of the partitions of `index` not open yet, bounded by `ms`; null if there are none. */
  #opens(t: Topic, index: PartitionIndex, ms: number): Promise<unknown> | null {
    const opens: Promise<PartitionLog>[] = [];
    for (let g = 0; g < index.groups; g++) {
      const partition = index.partitions[g]!;
      if (t.openedPartition(partition) === undefined) opens.push(t.openPartition(partition));
    }
    if (opens.length === 0) return null;
    return withTimeout(Promise.all(opens), ms, () => openTimeout(t.name, undefined, ms));
  }

  /**
   * Reads whole batches from `offset`; while fewer than `minBytes` are available, waits up to
   * `maxWaitMs` for more. Aborting `signal` ends the wait and resolves with what is there.
   */
  fetch(request: FetchRequest): Promise<ReadResult> {
    return new Promise<ReadResult>((resolve, reject) => {
      const listener: FetchListener = { fetched: resolve, fetchFailed: reject };
      this.fetchTo(request, listener);
    });
  }

  /**
   * `fetch` without a promise, for the network path (a tailing consumer's fetch is one request per
   * produce). Never throws: `listener` is told how it ended, possibly before this returns (a fetch
   * refused at once, or one that need not wait).
   */
  fetchTo(request: FetchRequest, listener: FetchListener): void {
    const { topic, partition } = request;
    try {
      this.#checkOpen();
      checkCount("offset", request.offset);
      checkCount("maxBytes", request.maxBytes);
      checkDurationMs("maxWaitMs", request.maxWaitMs);
      checkCount("minBytes", request.minBytes);
      const t = this.#topics.get(topic);
      if (t !== undefined) {
        const log = t.openedPartition(partition);
        if (log === undefined) {
          this.#fetchOpening(t, request, listener);
          return;
        }
        this.#replication?.checkLeader(topic, partition);
        fetchWithWait(log, request, t.closedSignal, listener);
        return;
      }
    } catch (err) {
      this.errors.count(err);
      listener.fetchFailed(err);
      return;
    }
    this.#autoCreate(topic)
      .then((created) => {
        const log = created.openedPartition(partition);
        if (log === undefined) this.#fetchOpening(created, request, listener);
        else fetchWithWait(log, request, created.closedSignal, listener);
      })
      .catch((err: unknown) => {
        this.errors.count(err);
        listener.fetchFailed(err);
      });
  }

  /** A fetch from a partition not opened since a clean stop: it waits for the open. */
  #fetchOpening(t: Topic, request: FetchRequest, listener: FetchListener): void {
    t.openPartition(request.partition)
      .then((log) => {
        this.#replication?.checkLeader(t.name, request.partition);
        fetchWithWait(log, request, t.closedSignal, listener);
      })
      .catch((err: unknown) => {
        this.errors.count(err);
        listener.fetchFailed(err);
      });
  }

  async listOffsets(topic: string, partition: number, spec: OffsetSpec): Promise<OffsetLookup> {
    this.#checkOpen();
    const t = this.#existing(topic);
    // Earliest and latest are known without opening the log after a clean stop (its summary);
    // after a crash only the recovered log knows them.
    if (spec.kind !== "timestamp") await this.recovered(topic, partition);
    switch (spec.kind) {
      case "earliest":
        return { found: true, offset: t.view(partition).logStartOffset };
      case "latest": {
        // Records deferred behind the shared log were acknowledged: latest is past them.
        const log = t.openedPartition(partition);
        if (log !== undefined) return { found: true, offset: await log.visibleEnd() };
        return { found: true, offset: t.view(partition).highWatermark };
      }
      case "timestamp": {
        t.checkPartition(partition);
        checkCount("timestampMs", spec.timestampMs);
        const log = await t.openPartition(partition);
        const offset = await log.offsetForTimestamp(spec.timestampMs);
        const hw = log.highWatermark;
        // An offset at or past the high watermark is not visible to readers yet.
        if (offset === null || offset >= hw) return { found: false, offset: hw };
        return { found: true, offset: Math.max(offset, log.logStartOffset) };
      }
      default:
        throw new ConchError(
          ErrorCode.INVALID_REQUEST,
          `offset spec must be earliest, latest or timestamp, got ${String((spec as { kind: unknown }).kind)}`,
        );
    }
  }

  /**
   * Stops the broker: waits for the admin operation in progress, wakes every long poll (they fail
   * with SHUTTING_DOWN), then flushes and closes every log. Every later call fails with
   * SHUTTING_DOWN; calling close again returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.groups.close();
    await this.#adminTail;
    const reason = new ConchError(ErrorCode.SHUTTING_DOWN, "the broker is shutting down");
    const topics = [...this.#topics.values()];
    this.#topics.clear();
    // The manifest (#writeCleanStop) records a standalone broker's clean stop of client topics.
    const recorded = this.config.brokerId === -1;
    // One syncfs makes every log's stop durable, where it works; else each log fsyncs its own files.
    const sync = await StopSync.probe(this.dataDir);
    const deferred = sync === null ? {} : { sync };
    const results = await Promise.allSettled(
      topics.map((t) => t.close(reason, { ...deferred, recorded: recorded && !t.internal })),
    );
    await this.#background;
    if (sync !== null && !(await sync.run()))
      this.#logger.error(
        { err: sync.failure },
        "the stop's syncfs failed; the next start recovers every log",
      );
    // Every log spilled what it deferred when it closed: the shared log's entries can go.
    const sharedEmpty = this.#shared === null || (await this.#shared.close());
    const failed = results.find((r) => r.status === "rejected");
    if (failed !== undefined) {
      // The lock stays: files may still be open, and the process is expected to exit.
      this.#logger.error({ err: failed.reason }, "error closing partition logs");
      throw failed.reason;
    }
    // With entries left in the shared log, the next start replays them: it must open their logs.
    if (this.config.brokerId === -1 && sharedEmpty) await this.#writeCleanStop(topics);
    await this.#lock.release();
    this.#logger.info("broker closed");
  }

  // ---- internals -----------------------------------------------------------------------------

  /**
   * Leaves the clean-stop manifest for the topics whose logs all closed cleanly, so the next start
   * can serve before opening them (clean-stop.ts). A failure costs only a slower next start.
   */
  async #writeCleanStop(topics: Topic[]): Promise<void> {
    const clean = new Map<string, PartitionSummary[]>();
    for (const topic of topics) {
      const summaries = topic.internal ? null : topic.cleanSummaries();
      if (summaries !== null) clean.set(topic.name, summaries);
    }
    await writeCleanStop(this.dataDir, clean).catch((err: unknown) =>
      this.#logger.warn({ err }, "cannot write the clean-stop manifest; the next start opens every log"),
    );
  }

  #checkOpen(): void {
    if (this.#closing !== null) {
      throw new ConchError(ErrorCode.SHUTTING_DOWN, "the broker is shutting down");
    }
  }

  #existing(name: string): Topic {
    const topic = this.#topics.get(name);
    if (topic === undefined) throw unknownTopic(name);
    return topic;
  }

  /**
   * Runs admin operations one after another. Callers check that the broker is open just before, in
   * the same tick, so everything queued here was accepted before close() and close() waits for it.
   */
  #admin<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.#adminTail.then(operation);
    this.#adminTail = run.catch((err: unknown) => this.errors.count(err));
    return run;
  }

  /**
   * Every partition holds files and disk (its preallocated segment), so their total is capped by
   * maxPartitions. Must run inside #admin, so concurrent creates cannot both pass.
   */
  #checkPartitionBudget(name: string, adding: number): void {
    let total = 0;
    for (const topic of this.#topics.values()) total += topic.meta().partitions;
    const max = this.config.maxPartitions;
    if (total + adding > max) {
      throw new ConchError(
        ErrorCode.INVALID_PARTITIONS,
        `cannot add ${adding} partition(s) for topic "${name}": the broker has ${total} of at most ${max} (setting maxPartitions)`,
      );
    }
  }

  /** Must run inside #admin, with `partitions` more than the topic has. */
  async #grow(topic: Topic, partitions: number): Promise<void> {
    const before = topic.meta();
    this.#checkPartitionBudget(topic.name, partitions - before.partitions);
    // The count is made durable first: a crash before the logs exist leaves partitions that
    // simply open empty on the next start.
    await this.#store.update({ ...before, partitions });
    try {
      await topic.grow(this.#store, partitions, this.config, this.#logger, this.#opensLazily(topic.name));
    } catch (err) {
      await this.#store.update(before).catch(() => {});
      throw err;
    }
    this.#logger.info({ topic: topic.name, partitions }, "partitions added");
  }

  /** Whether new partitions of topic `name` wait for their first use to open (internal ones open at once). */
  #opensLazily(name: string): boolean {
    return this.#lazy && !isInternalTopicName(name);
  }

  /** Must run inside #admin. */
  async #create(name: string, partitions: number, overrides: TopicOverrides): Promise<Topic> {
    const meta = { name, partitions, configs: overrides };
    let topic: Topic;
    try {
      await this.#store.create(meta);
      try {
        topic = await Topic.open(this.#store, meta, this.config, this.#logger, {
          fresh: this.#opensLazily(name),
        });
      } catch (err) {
        await this.#store.remove(name).catch(() => {});
        throw err;
      }
    } catch (err) {
      throw this.#diskFailure(`cannot create topic "${name}"`, err);
    }
    this.#topics.set(name, topic);
    this.#logger.info({ topic: name, partitions, configs: overrides }, "topic created");
    return topic;
  }

  /**
   * A failure of the disk under an admin operation is STORAGE_ERROR, like one under an append,
   * and is logged (once per interval: a full disk fails every create). Anything else is as it was.
   */
  #diskFailure(what: string, err: unknown): unknown {
    if (!isSystemError(err)) return err;
    const failure = storageError(what, err);
    storageLogLimiter.log(this.#logger, "error", "admin disk failure", { err }, failure.message);
    return failure;
  }

  /**
   * The topic, created with the default partition count if automatic creation is on. Callers that
   * wait on the same create resume in the order they called, so their appends keep that order.
   */
  #autoCreate(name: string): Promise<Topic> {
    if (!this.config.autoCreateTopics) return Promise.reject(unknownTopic(name));
    let pending = this.#autoCreating.get(name);
    if (pending === undefined) {
      try {
        checkTopicName(name);
      } catch (err) {
        return Promise.reject(err);
      }
      const partitions = this.config.defaultPartitions;
      pending = this.#admin(async () => {
        const existing = this.#topics.get(name);
        if (existing !== undefined) return existing;
        this.#checkPartitionBudget(name, partitions);
        return this.#create(name, partitions, {});
      });
      this.#autoCreating.set(name, pending);
      const forget = (): void => {
        this.#autoCreating.delete(name);
      };
      pending.then(forget, forget);
    }
    return pending;
  }
}

function checkPartitionCount(partitions: number): void {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS) {
    throw new ConchError(
      ErrorCode.INVALID_PARTITIONS,
      `partition count must be an integer from 1 to ${MAX_PARTITIONS}, got ${partitions}`,
    );
  }
}

/** Whether `err` is the operating system's (ENOSPC, EIO, EACCES...), not a bug or a ConchError. */
function isSystemError(err: unknown): boolean {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === "string";
}

function checkCount(what: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `${what} must be a non-negative integer, got ${value}`);
  }
}

/** `work`, or the error `timedOut` makes once `ms` pass first (`work` goes on). */
function withTimeout<T>(work: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), Math.min(ms, MAX_TIMER_MS));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The open of `t`'s `partition`, failing with TIMEOUT past the produce's timeout (acksAllTimeout). */
function openWithin(t: Topic, partition: number, timeoutMs: number): Promise<PartitionLog> {
  const ms = acksAllTimeout(timeoutMs);
  return withTimeout(t.openPartition(partition), ms, () => openTimeout(t.name, partition, ms));
}

function openTimeout(topic: string, partition: number | undefined, ms: number): ConchError {
  const what =
    partition === undefined
      ? `some partition of topic "${topic}"`
      : `partition ${partition} of topic "${topic}"`;
  return new ConchError(
    ErrorCode.TIMEOUT,
    `${what} did not open within ${ms} ms (being recovered after a crash, or a slow disk); try again`,
  );
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Why a name that is not among the topics was not found: INVALID_TOPIC_NAME when no topic could
 * have it, whatever the broker holds, else UNKNOWN_TOPIC. Checked on a miss only: every topic held
 * has a legal name, so a hit needs no check and the answer is the same as checking first.
 */
function unknownTopic(name: string): ConchError {
  const problem = topicNameProblem(name);
  if (problem !== null) return new ConchError(ErrorCode.INVALID_TOPIC_NAME, problem);
  return new ConchError(ErrorCode.UNKNOWN_TOPIC, `unknown topic "${name}"`);
}

/**
 * A produce's timeout as the wait of acks "all" or of its partition's open: none given (0 or
 * less) is the default; at most a timer's ceiling.
 */
function acksAllTimeout(timeoutMs: number): number {
  if (!(timeoutMs > 0)) return ACKS_ALL_DEFAULT_TIMEOUT_MS;
  return Math.min(Math.floor(timeoutMs), MAX_TIMER_MS);
}
