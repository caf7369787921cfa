/**
 * Committed offsets: an in-memory table in front of the compacted internal topic
 * `__consumer_offsets` (one partition). A commit is appended with durable acks (fsynced) and enters
 * the table once stored; at startup the topic is replayed into the table, so offsets survive a
 * restart. The topic is created by the first commit, so a broker whose clients never use groups
 * has no such topic.
 *
 * The table is updated in the order the commits were appended, whatever order their appends
 * resolve in, so it always agrees with what a replay of the log would give.
 */
import type { Logger } from "pino";
import { BatchBuilder } from "../format/batch-builder.js";
import { RecordCursor } from "../format/record-cursor.js";
import type { PartitionLog } from "../storage/partition-log.js";
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

/** What the store needs from the broker: the offsets topic's log, existing or created. */
export interface OffsetLogHost {
  listTopics(): string[];
  partition(topic: string, partition: number): PartitionLog;
  ensureInternalTopic(
    name: string,
    partitions: number,
    configs?: Record<string, string>,
  ): Promise<{ partition(partition: number): PartitionLog }>;
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
  #log: Promise<PartitionLog> | null = null;
  #table = new Map<string, GroupOffsets>();
  #builder = new BatchBuilder({ slabBytes: 64 * 1024 });
  /** Table updates wait here so they happen in append order. */
  #applied: Promise<unknown> = Promise.resolve();

  constructor(host: OffsetLogHost, logger: Logger) {
    this.#host = host;
    this.#logger = logger;
  }

  /** Replays `__consumer_offsets` into the table, if the topic exists. */
  async load(): Promise<void> {
    if (!this.#host.listTopics().includes(OFFSETS_TOPIC)) return;
    const log = this.#host.partition(OFFSETS_TOPIC, 0);
    this.#log = Promise.resolve(log);
    const records = await this.#replay(log);
    this.#logger.info({ groups: this.#table.size, records }, "committed offsets loaded");
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
    return this.#append(b.finish(), () => {
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
    return this.#append(batch, () => {
      for (const e of entries) this.#delete(group, e.topic, e.partition);
    });
  }

  #append(batch: Buffer, apply: () => void): Promise<void> {
    this.#log ??= this.#host
      .ensureInternalTopic(OFFSETS_TOPIC, 1, { ...OFFSETS_TOPIC_CONFIGS })
      .then((topic) => topic.partition(0));
    const log = this.#log;
    // The log is usually known already; then the append is called in this tick, in commit order.
    const appended = log.then((l) => l.append(batch, { durable: true }));
    const done = this.#applied.then(() => appended).then(apply);
    this.#applied = done.catch(() => {});
    // A failed create must not stick: the next commit tries again.
    log.catch(() => {
      if (this.#log === log) this.#log = null;
    });
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

  async #replay(log: PartitionLog): Promise<number> {
    const cursor = new RecordCursor();
    let next = log.logStartOffset;
    let records = 0;
    let skipped = 0;
    while (next < log.highWatermark) {
      const { records: bytes } = await log.read(next, REPLAY_READ_BYTES);
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
