/**
 * Committed offsets: an in-memory table in front of the compacted internal topic
 * `__consumer_offsets`. A group's commits go to one partition of it (group-partition.ts). A commit
 * enters the table once stored; a replay of the topic rebuilds the table, so offsets survive a
 * restart.
 *
 * On a single node the topic has one partition (a data directory from before cluster mode has
 * no other kind), made by the first commit, so a broker whose clients never use groups has no
 * such topic; commits are fsynced, and the whole topic is replayed at startup. In cluster mode
 * the cluster makes the topic (16 partitions, replicated) and the store holds the groups of the
 * partitions this broker leads only: `loadPartition` replays one when its leadership is gained,
 * `dropPartition` forgets its groups when it is lost; commits wait for the in-sync replicas
 * (Broker.appendInternal).
 *
 * The table is updated in the order the commits were appended, whatever order their appends
 * resolve in, so it always agrees with what a replay of the log would give.
 */
import type { Logger } from "pino";
import { BatchBuilder } from "../format/batch-builder.js";
import { RecordCursor } from "../format/record-cursor.js";
import type { PartitionLog } from "../storage/partition-log.js";
import { groupPartition } from "./group-partition.js";
import {
  type CommittedOffset,
  decodeOffsetKey,
  decodeOffsetValue,
  encodeOffsetKey,
  encodeOffsetValue,
} from "./offset-record.js";

export type { CommittedOffset } from "./offset-record.js";

export const OFFSETS_TOPIC = "__consumer_offsets";
/**
 * Compacted: only the latest commit per key matters. Retention stays off so that, until compaction
 * runs, a group's last commit never ages out with the segment holding it.
 */
export const OFFSETS_TOPIC_CONFIGS: Readonly<Record<string, string>> = {
  "cleanup.policy": "compact",
  "retention.ms": "-1",
};

/** What the store needs from the broker: the offsets topic's logs, existing or created, and appends to them. */
export interface OffsetLogHost {
  listTopics(): string[];
  partition(topic: string, partition: number): PartitionLog;
  describeTopic(name: string): { partitions: readonly unknown[] };
  ensureInternalTopic(name: string, partitions: number, configs?: Record<string, string>): Promise<unknown>;
  /** Appends to an internal topic: fsynced on a single node, acknowledged by the ISR in cluster mode. */
  appendInternal(topic: string, partition: number, records: Buffer): Promise<unknown>;
}

export interface OffsetEntry {
  topic: string;
  partition: number;
  offset: number;
}

const REPLAY_READ_BYTES = 1024 * 1024;

/** topic -> partition -> committed offset */
type GroupOffsets = Map<string, Map<number, CommittedOffset>>;

export class OffsetStore {
  #host: OffsetLogHost;
  #logger: Logger;
  /** The offsets topic's partition count: groups are spread over this many. */
  #partitions = 1;
  /** Cluster mode: the partitions whose groups the table holds; null on a single node (all of them). */
  #held: Set<number> | null = null;
  /** Single node: the topic, once known to exist (the first commit creates it). */
  #created: Promise<unknown> | null = null;
  #table = new Map<string, GroupOffsets>();
  #builder = new BatchBuilder({ slabBytes: 64 * 1024 });
  /** Table updates wait here so they happen in append order. */
  #applied: Promise<unknown> = Promise.resolve();

  constructor(host: OffsetLogHost, logger: Logger) {
    this.#host = host;
    this.#logger = logger;
  }

  /** Single node: replays every partition of `__consumer_offsets` into the table, if the topic exists. */
  async load(): Promise<void> {
    if (!this.#host.listTopics().includes(OFFSETS_TOPIC)) return;
    this.#partitions = this.#host.describeTopic(OFFSETS_TOPIC).partitions.length;
    this.#created = Promise.resolve();
    let records = 0;
    for (let p = 0; p < this.#partitions; p++) records += await this.#replay(p);
    this.#logger.info({ groups: this.#table.size, records }, "committed offsets loaded");
  }

  /** The offsets partition that holds `group`'s commits. */
  partitionOf(group: string): number {
    return groupPartition(group, this.#partitions);
  }

  /** Cluster mode from now on: the table holds no group until a partition is loaded. */
  holdLoadedOnly(): void {
    this.#held = new Set();
    this.#table.clear();
  }

  /** Cluster mode: replays one partition (of `partitions`) into the table; its groups are held from now on. */
  async loadPartition(partition: number, partitions: number): Promise<void> {
    this.#partitions = partitions;
    this.#held ??= new Set();
    this.#held.add(partition);
    this.#forget(partition);
    const records = await this.#replay(partition);
    this.#logger.info({ partition, records }, "committed offsets of an offsets partition loaded");
  }

  /** Cluster mode: forgets the groups of a partition this broker no longer leads. */
  dropPartition(partition: number): void {
    this.#held?.delete(partition);
    this.#forget(partition);
  }

  /** Whether the table holds the groups of `partition` now. */
  holds(partition: number): boolean {
    return this.#held === null || this.#held.has(partition);
  }

  #forget(partition: number): void {
    for (const group of this.#table.keys()) {
      if (this.partitionOf(group) === partition) this.#table.delete(group);
    }
  }

  /** The next offset the group reads from a partition, or -1 when none was committed. */
  get(group: string, topic: string, partition: number): number {
    return this.#table.get(group)?.get(topic)?.get(partition)?.offset ?? -1;
  }

  hasGroup(group: string): boolean {
    return this.#table.has(group);
  }

  /** Names of the groups with committed offsets. */
  groups(): string[] {
    return [...this.#table.keys()];
  }

  /** Every offset a group committed, sorted by topic and partition. */
  groupOffsets(group: string): OffsetEntry[] {
    const out: OffsetEntry[] = [];
    const offsets = this.#table.get(group);
    if (offsets === undefined) return out;
    for (const topic of [...offsets.keys()].sort()) {
      const partitions = offsets.get(topic)!;
      for (const partition of [...partitions.keys()].sort((a, b) => a - b)) {
        out.push({ topic, partition, offset: partitions.get(partition)!.offset });
      }
    }
    return out;
  }

  /** Stores the offsets (one batch, fsynced); resolves once they are on disk and in the table. */
  commit(group: string, entries: readonly OffsetEntry[], timestampMs: number): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    const b = this.#builder;
    try {
      for (const e of entries) {
        b.add(
          encodeOffsetValue(e.offset, timestampMs),
          encodeOffsetKey(group, e.topic, e.partition),
          timestampMs,
        );
      }
    } catch (err) {
      b.clear();
      return Promise.reject(err);
    }
    return this.#append(group, b.finish(), () => {
      for (const e of entries) this.#set(group, e.topic, e.partition, { offset: e.offset, timestampMs });
    });
  }

  /** Writes a tombstone for every offset of the group and forgets them. */
  deleteGroup(group: string, timestampMs: number): Promise<void> {
    const entries = this.groupOffsets(group);
    if (entries.length === 0) return Promise.resolve();
    const b = this.#builder;
    // A null value: the tombstone compaction removes (an empty value would be kept as a value).
    for (const e of entries) b.add(null, encodeOffsetKey(group, e.topic, e.partition), timestampMs);
    const batch = b.finish();
    return this.#append(group, batch, () => {
      for (const e of entries) this.#delete(group, e.topic, e.partition);
    });
  }

  #append(group: string, batch: Buffer, apply: () => void): Promise<void> {
    const partition = this.partitionOf(group);
    let appended: Promise<unknown>;
    if (this.#held === null) {
      this.#created ??= this.#host.ensureInternalTopic(OFFSETS_TOPIC, 1, { ...OFFSETS_TOPIC_CONFIGS });
      const created = this.#created;
      // A failed create must not stick: the next commit tries again.
      created.catch(() => {
        if (this.#created === created) this.#created = null;
      });
      // The topic is usually known already; then the append is called in this tick, in commit order.
      appended = created.then(() => this.#host.appendInternal(OFFSETS_TOPIC, partition, batch));
    } else {
      appended = this.#host.appendInternal(OFFSETS_TOPIC, partition, batch);
    }
    // A partition lost while the append waited: its groups are another broker's now.
    const done = this.#applied
      .then(() => appended)
      .then(() => {
        if (this.holds(partition)) apply();
      });
    this.#applied = done.catch(() => {});
    return done;
  }

  #set(group: string, topic: string, partition: number, committed: CommittedOffset): void {
    let offsets = this.#table.get(group);
    if (offsets === undefined) {
      offsets = new Map();
      this.#table.set(group, offsets);
    }
    let partitions = offsets.get(topic);
    if (partitions === undefined) {
      partitions = new Map();
      offsets.set(topic, partitions);
    }
    partitions.set(partition, committed);
  }

  #delete(group: string, topic: string, partition: number): void {
    const offsets = this.#table.get(group);
    const partitions = offsets?.get(topic);
    if (offsets === undefined || partitions === undefined) return;
    partitions.delete(partition);
    if (partitions.size === 0) offsets.delete(topic);
    if (offsets.size === 0) this.#table.delete(group);
  }

  /**
   * Replays one partition up to its local end: a new leader's records past the high watermark
   * may be commits its predecessor acknowledged, and they become committed under it.
   */
  async #replay(partition: number): Promise<number> {
    const log = this.#host.partition(OFFSETS_TOPIC, partition);
    const cursor = new RecordCursor();
    let next = log.logStartOffset;
    let records = 0;
    let skipped = 0;
    while (next < log.localEndOffset) {
      const { records: bytes } = await log.readReplica(next, REPLAY_READ_BYTES);
      const before = next;
      cursor.reset(bytes);
      while (cursor.next()) {
        if (cursor.offset < next) continue;
        next = cursor.offset + 1;
        records++;
        const key = decodeOffsetKey(cursor.buffer.subarray(cursor.keyStart, cursor.keyEnd));
        if (key === null) {
          skipped++;
          continue;
        }
        if (cursor.valueEnd === cursor.valueStart) {
          this.#delete(key.group, key.topic, key.partition);
          continue;
        }
        const value = decodeOffsetValue(cursor.value());
        if (value === null) skipped++;
        else this.#set(key.group, key.topic, key.partition, value);
      }
      // Nothing at or past `next` came back: the rest is not readable (it cannot be replayed either).
      if (next === before) break;
    }
    if (skipped > 0) this.#logger.warn({ skipped }, "skipped offset records of an unknown version");
    return records;
  }
}
