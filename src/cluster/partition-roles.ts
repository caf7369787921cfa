/**
 * The roles a broker takes from the cluster's partition records, handed to the replica side
 * (ReplicaControl): a record that names this broker gives it the role the record describes, one
 * that no longer names it drops the replica. Changes of one partition run one after another, in
 * the order the metadata changed.
 */
import type { ControllerLog } from "./controller.js";
import type { MetadataCache } from "./metadata-cache.js";
import type { PartitionRecord } from "./metadata-records.js";
import type { ReplicaControl } from "./roles.js";

export class PartitionRoles {
  readonly #brokerId: number;
  readonly #replicas: ReplicaControl;
  readonly #cache: MetadataCache;
  readonly #log: ControllerLog;
  /** Whether the broker is fenced now. */
  readonly #fenced: () => boolean;
  /** Partitions this broker holds a replica of ("topic/p"). */
  readonly #hosted = new Set<string>();
  /** Role changes of a partition run one after another, in the order the metadata changed. */
  readonly #chains = new Map<string, Promise<void>>();

  constructor(
    brokerId: number,
    replicas: ReplicaControl,
    cache: MetadataCache,
    log: ControllerLog,
    fenced: () => boolean,
  ) {
    this.#brokerId = brokerId;
    this.#replicas = replicas;
    this.#cache = cache;
    this.#log = log;
    this.#fenced = fenced;
  }

  /** Applies every partition record the cache holds (roles held back while fenced, or before the first load). */
  applyAll(): void {
    for (const byPartition of this.#cache.partitions.values()) {
      for (const { value } of byPartition.values()) this.apply(value);
    }
  }

  apply(record: PartitionRecord): void {
    const id = `${record.topic}/${record.partition}`;
    if (!record.replicas.includes(this.#brokerId)) {
      this.drop(record.topic, record.partition);
      return;
    }
    // A fenced broker takes no role: a leader role would let it acknowledge without a lease.
    if (this.#fenced()) return;
    // Every change is applied (the ISR is part of the role); the same epoch again is a no-op there.
    this.#hosted.add(id);
    this.#chain(id, () => this.#replicas.applyRole(record));
  }

  /**
   * Replicas moved off this broker while it was down: the cluster's record of the partition no
   * longer names it, but its data is still on disk. Dropped like any replica reassigned away
   * (Kafka deletes such stray logs at start-up too). A topic the cluster does not know is left
   * alone: its data may predate the cluster (a single-node broker that joined one).
   */
  dropStrays(): void {
    for (const { topic, partition } of this.#replicas.localPartitions?.() ?? []) {
      const record = this.#cache.partition(topic, partition)?.value;
      if (record === undefined || record.replicas.includes(this.#brokerId)) continue;
      this.#log.info(`${topic}/${partition} was moved off this broker while it was down: removing its data`);
      this.#hosted.add(`${topic}/${partition}`);
      this.drop(topic, partition);
    }
  }

  drop(topic: string, partition: number): void {
    const id = `${topic}/${partition}`;
    if (!this.#hosted.delete(id)) return;
    this.#chain(id, () => this.#replicas.dropPartition(topic, partition));
  }

  /** Waits for the role changes under way to end (each one's failure is logged, not thrown). */
  async settled(): Promise<void> {
    await Promise.allSettled(this.#chains.values());
  }

  #chain(id: string, step: () => Promise<void>): void {
    const previous = this.#chains.get(id) ?? Promise.resolve();
    const next = previous.then(step).catch((err: unknown) => {
      this.#log.warn(`role change of ${id} failed: ${(err as Error).message}`);
    });
    this.#chains.set(id, next);
    void next.then(() => {
      if (this.#chains.get(id) === next) this.#chains.delete(id);
    });
  }
}
