/**
 * Topic creation, deletion, growth and reassignment in cluster mode (the Broker's TopicAdmin). Any
 * broker may take the request: it writes `topics/<name>` with the replica assignment, spread over
 * the live brokers, in a txn that succeeds only if the name is free, then waits until the
 * controller has written every partition's record, so that the answer means "ready to produce to".
 * Deletion removes the topic key; the controller removes the partition records and the replicas
 * drop their logs. Growth and reassignment rewrite the topic's assignment (a compare-and-swap on
 * its mod_revision): the assignment is what the controller makes each partition's replicas become.
 */
import { randomUUID } from "node:crypto";
import type { PartitionMove, TopicAdmin } from "../broker/topic-admin.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { ClusterNode } from "./cluster-node.js";
import { assignReplicas } from "./controller-decisions.js";
import { encodeTopicRecord, parseTopicRecord, type TopicRecord } from "./metadata-records.js";

/** The key of the topic config that acks=all needs: in-sync replicas at the least. */
export const MIN_INSYNC_REPLICAS_CONFIG = "min.insync.replicas";

/** Topics one reassignment may touch: each is a compare in one txn (etcd allows 128 operations). */
export const MAX_REASSIGNED_TOPICS = 60;

export interface ClusterTopicsOptions {
  /** Replication factor of a topic created without one. */
  readonly defaultReplicationFactor: number;
  /** How long a create waits for the controller's partition records. */
  readonly readyTimeoutMs: number;
}

export class ClusterTopics implements TopicAdmin {
  readonly #node: ClusterNode;
  readonly #o: ClusterTopicsOptions;

  constructor(node: ClusterNode, options: ClusterTopicsOptions) {
    this.#node = node;
    this.#o = options;
  }

  async createTopic(
    name: string,
    partitions: number,
    configs: Record<string, string>,
    replicationFactor: number | null,
  ): Promise<void> {
    const cache = this.#node.cache;
    const brokers = [...cache.brokers.keys()];
    const rf = replicationFactor ?? Math.min(this.#o.defaultReplicationFactor, brokers.length);
    if (rf < 1 || rf > brokers.length) {
      throw new ConchError(
        ErrorCode.INVALID_REPLICATION_FACTOR,
        `replication factor ${rf} for topic "${name}" needs ${rf} live brokers; ${brokers.length} are registered`,
      );
    }
    const minIsr = configs[MIN_INSYNC_REPLICAS_CONFIG];
    if (minIsr !== undefined && Number(minIsr) > rf) {
      throw new ConchError(
        ErrorCode.INVALID_CONFIG,
        `min.insync.replicas ${minIsr} is more than the replication factor ${rf}: acks=all could never succeed`,
      );
    }
    if (cache.partitions.has(name)) {
      // A topic of this name was deleted and the controller has not removed its records yet.
      throw new ConchError(
        ErrorCode.TOPIC_ALREADY_EXISTS,
        `topic "${name}" is still being deleted; try again`,
      );
    }
    const record = {
      id: randomUUID(),
      name,
      partitions,
      replicationFactor: rf,
      configs,
      assignment: assignReplicas(name, brokers, partitions, rf),
    };
    const key = this.#node.keys.topic(name);
    const res = await this.#node.store.txn(
      [{ key, target: "create", revision: 0 }],
      [{ type: "put", key, value: encodeTopicRecord(record) }],
    );
    if (!res.succeeded)
      throw new ConchError(ErrorCode.TOPIC_ALREADY_EXISTS, `topic "${name}" already exists`);
    await this.#ready(record.id, name, partitions, "created");
  }

  async addPartitions(name: string, partitions: number): Promise<void> {
    const { record, modRevision } = await this.#topic(name);
    if (partitions <= record.partitions) {
      throw new ConchError(
        ErrorCode.INVALID_PARTITIONS,
        `topic "${name}" has ${record.partitions} partition(s); it can only grow (asked for ${partitions})`,
      );
    }
    const brokers = [...this.#node.cache.brokers.keys()];
    const rf = record.replicationFactor;
    if (rf > brokers.length) {
      throw new ConchError(
        ErrorCode.INVALID_REPLICATION_FACTOR,
        `topic "${name}" has replication factor ${rf}, and ${brokers.length} broker(s) are registered`,
      );
    }
    // The same round robin as at creation, carried on: partition p's replicas as if it had been there.
    const added = assignReplicas(name, brokers, partitions, rf).slice(record.partitions);
    const grown = { ...record, partitions, assignment: [...record.assignment, ...added] };
    await this.#swap(
      [{ name, modRevision, record: grown }],
      `topic "${name}" changed while growing; try again`,
    );
    await this.#ready(record.id, name, partitions, "grown");
  }

  async reassignPartitions(moves: readonly PartitionMove[]): Promise<void> {
    const byTopic = new Map<string, PartitionMove[]>();
    for (const m of moves) {
      const list = byTopic.get(m.topic) ?? [];
      list.push(m);
      byTopic.set(m.topic, list);
    }
    if (byTopic.size > MAX_REASSIGNED_TOPICS) {
      throw new ConchError(
        ErrorCode.INVALID_REQUEST,
        `a reassignment may move partitions of ${MAX_REASSIGNED_TOPICS} topics at most, not ${byTopic.size}`,
      );
    }
    const registered = this.#node.cache.brokers;
    const writes: { name: string; modRevision: number; record: TopicRecord }[] = [];
    for (const [name, list] of byTopic) {
      const { record, modRevision } = await this.#topic(name);
      const assignment = [...record.assignment];
      for (const m of list) {
        if (!Number.isInteger(m.partition) || m.partition < 0 || m.partition >= record.partitions) {
          throw new ConchError(
            ErrorCode.UNKNOWN_PARTITION,
            `topic "${name}" has ${record.partitions} partition(s); there is no partition ${m.partition}`,
          );
        }
        const where = `${name}/${m.partition}`;
        if (m.replicas.length === 0 || new Set(m.replicas).size !== m.replicas.length) {
          throw new ConchError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            `replicas [${m.replicas.join(",")}] of ${where}: expected distinct broker ids, one at least`,
          );
        }
        const unknown = m.replicas.filter((id) => !registered.has(id));
        if (unknown.length > 0) {
          throw new ConchError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            `replicas [${m.replicas.join(",")}] of ${where}: broker(s) ${unknown.join(",")} are not registered`,
          );
        }
        assignment[m.partition] = [...m.replicas];
      }
      writes.push({ name, modRevision, record: { ...record, assignment } });
    }
    await this.#swap(writes, "a topic changed while its reassignment was recorded; try again");
  }

  async #ready(id: string, name: string, partitions: number, what: string): Promise<void> {
    const cache = this.#node.cache;
    const ready = await cache.waitFor(() => {
      const topic = cache.topics.get(name);
      return topic?.value.id === id && (cache.partitions.get(name)?.size ?? 0) >= partitions;
    }, this.#o.readyTimeoutMs);
    if (!ready) {
      throw new ConchError(
        ErrorCode.TIMEOUT,
        `topic "${name}" was ${what} but the controller has not assigned its leaders within ${this.#o.readyTimeoutMs} ms`,
      );
    }
  }

  /** The topic record as the store holds it now (not the cache, which may lag a write just made). */
  async #topic(name: string): Promise<{ record: TopicRecord; modRevision: number }> {
    const entry = await this.#node.store.get(this.#node.keys.topic(name));
    if (entry === undefined) throw new ConchError(ErrorCode.UNKNOWN_TOPIC, `unknown topic "${name}"`);
    return { record: parseTopicRecord(name, entry.value), modRevision: entry.modRevision };
  }

  /** Writes topic records, all or none, each only if unchanged since it was read. */
  async #swap(
    writes: readonly { name: string; modRevision: number; record: TopicRecord }[],
    conflict: string,
  ): Promise<void> {
    const keys = writes.map((w) => this.#node.keys.topic(w.name));
    const res = await this.#node.store.txn(
      writes.map((w, i) => ({ key: keys[i] as string, target: "mod" as const, revision: w.modRevision })),
      writes.map((w, i) => ({
        type: "put" as const,
        key: keys[i] as string,
        value: encodeTopicRecord(w.record),
      })),
    );
    if (!res.succeeded) throw new ConchError(ErrorCode.INVALID_REQUEST, conflict);
  }

  async deleteTopic(name: string): Promise<void> {
    const key = this.#node.keys.topic(name);
    const existing = await this.#node.store.get(key);
    if (existing === undefined) throw new ConchError(ErrorCode.UNKNOWN_TOPIC, `unknown topic "${name}"`);
    const res = await this.#node.store.txn(
      [{ key, target: "mod", revision: existing.modRevision }],
      [{ type: "delete", key }],
    );
    if (!res.succeeded)
      throw new ConchError(ErrorCode.UNKNOWN_TOPIC, `topic "${name}" changed while being deleted`);
  }
}
