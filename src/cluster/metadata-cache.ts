/**
 * A broker's view of the cluster's metadata: read once at a revision, then kept current by the
 * watch from the next revision (cluster-node.ts feeds it). Every broker answers Metadata requests
 * and takes its roles from this view; the controller decides from it. A value that does not parse
 * is skipped with a warning, as if the key were absent.
 */
import type { MetaEntry, MetaEvent } from "./etcd/meta-store.js";
import type { MetadataKeys } from "./metadata-keys.js";
import {
  type BrokerRecord,
  type PartitionRecord,
  parseBrokerRecord,
  parseControllerRecord,
  parsePartitionRecord,
  parseTopicRecord,
  type TopicRecord,
} from "./metadata-records.js";

export interface Versioned<T> {
  readonly value: T;
  readonly modRevision: number;
}

export interface ControllerInfo {
  readonly brokerId: number;
  /** The controller key's create_revision. */
  readonly epoch: number;
}

/** What changed, told after each batch of events has been applied (so the view is consistent). */
export interface MetadataListener {
  brokerUp(broker: BrokerRecord): void;
  brokerDown(id: number): void;
  controllerChanged(controller: ControllerInfo | null): void;
  topicPut(topic: TopicRecord): void;
  topicDeleted(name: string): void;
  partitionPut(record: PartitionRecord): void;
  partitionDeleted(topic: string, partition: number): void;
}

type Change = (l: MetadataListener) => void;

const PARTITION_KEY = /^([A-Za-z0-9._-]+)\/(0|[1-9][0-9]{0,6})$/;
const BROKER_ID = /^(0|[1-9][0-9]{0,9})$/;

export class MetadataCache {
  readonly #keys: MetadataKeys;
  readonly #warn: (msg: string) => void;
  readonly #listeners: MetadataListener[] = [];
  readonly #waiters = new Set<() => void>();
  readonly brokers = new Map<number, BrokerRecord>();
  readonly topics = new Map<string, Versioned<TopicRecord>>();
  /** topic -> partition -> record. */
  readonly partitions = new Map<string, Map<number, Versioned<PartitionRecord>>>();
  controller: ControllerInfo | null = null;
  /** The last revision applied. */
  revision = 0;

  constructor(keys: MetadataKeys, warn: (msg: string) => void) {
    this.#keys = keys;
    this.#warn = warn;
  }

  addListener(listener: MetadataListener): void {
    this.#listeners.push(listener);
  }

  /** Registered and not in a controlled shutdown: a broker that may take a leadership. */
  canLead(brokerId: number): boolean {
    const broker = this.brokers.get(brokerId);
    return broker !== undefined && broker.shuttingDown !== true;
  }

  partition(topic: string, partition: number): Versioned<PartitionRecord> | undefined {
    return this.partitions.get(topic)?.get(partition);
  }

  /** Loads a snapshot read at `revision` (the cache must be empty). */
  load(entries: readonly MetaEntry[], revision: number): void {
    const changes: Change[] = [];
    for (const e of entries) this.#put(e, changes);
    this.revision = revision;
    this.#tell(changes);
  }

  apply(events: readonly MetaEvent[]): void {
    const changes: Change[] = [];
    for (const ev of events) {
      if (ev.type === "put") {
        this.#put(ev.entry, changes);
        this.revision = Math.max(this.revision, ev.entry.modRevision);
      } else {
        this.#delete(ev.key, changes);
        this.revision = Math.max(this.revision, ev.modRevision);
      }
    }
    this.#tell(changes);
  }

  /** Resolves once `ready()` holds after a change (or now); false after `timeoutMs`. */
  waitFor(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = (): void => {
        if (!ready()) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        resolve(false);
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }

  #tell(changes: Change[]): void {
    for (const change of changes) for (const l of this.#listeners) change(l);
    for (const check of [...this.#waiters]) check();
  }

  #put(e: MetaEntry, changes: Change[]): void {
    const k = this.#keys;
    try {
      if (e.key === k.controller) {
        const info = { brokerId: parseControllerRecord(e.value), epoch: e.createRevision };
        this.controller = info;
        changes.push((l) => l.controllerChanged(info));
      } else if (e.key.startsWith(k.brokers)) {
        const id = e.key.slice(k.brokers.length);
        if (!BROKER_ID.test(id)) throw new Error("not a broker id");
        const broker = parseBrokerRecord(Number(id), e.value);
        this.brokers.set(broker.id, broker);
        changes.push((l) => l.brokerUp(broker));
      } else if (e.key.startsWith(k.topics)) {
        const topic = parseTopicRecord(e.key.slice(k.topics.length), e.value);
        this.topics.set(topic.name, { value: topic, modRevision: e.modRevision });
        changes.push((l) => l.topicPut(topic));
      } else if (e.key.startsWith(k.partitions)) {
        const m = PARTITION_KEY.exec(e.key.slice(k.partitions.length));
        if (m === null) throw new Error("not a partition key");
        const record = parsePartitionRecord(m[1] as string, Number(m[2]), e.value);
        let byTopic = this.partitions.get(record.topic);
        if (byTopic === undefined) this.partitions.set(record.topic, (byTopic = new Map()));
        byTopic.set(record.partition, { value: record, modRevision: e.modRevision });
        changes.push((l) => l.partitionPut(record));
      }
    } catch (err) {
      this.#warn(`cluster metadata: ignoring ${e.key}: ${(err as Error).message}`);
    }
  }

  #delete(key: string, changes: Change[]): void {
    const k = this.#keys;
    if (key === k.controller) {
      this.controller = null;
      changes.push((l) => l.controllerChanged(null));
    } else if (key.startsWith(k.brokers)) {
      const id = Number(key.slice(k.brokers.length));
      if (this.brokers.delete(id)) changes.push((l) => l.brokerDown(id));
    } else if (key.startsWith(k.topics)) {
      const name = key.slice(k.topics.length);
      if (this.topics.delete(name)) changes.push((l) => l.topicDeleted(name));
    } else if (key.startsWith(k.partitions)) {
      const m = PARTITION_KEY.exec(key.slice(k.partitions.length));
      if (m === null) return;
      const topic = m[1] as string;
      const partition = Number(m[2]);
      const byTopic = this.partitions.get(topic);
      if (byTopic?.delete(partition) !== true) return;
      if (byTopic.size === 0) this.partitions.delete(topic);
      changes.push((l) => l.partitionDeleted(topic, partition));
    }
  }
}
