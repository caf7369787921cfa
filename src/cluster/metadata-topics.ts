/**
 * Topic creation and deletion in cluster mode (the Broker's TopicAdmin). Any broker may take the
 * request: it writes `topics/<name>` with the replica assignment, spread over the live brokers,
 * in a txn that succeeds only if the name is free, then waits until the controller has written
 * every partition's record, so that the answer means "ready to produce to". Deletion removes the
 * topic key; the controller removes the partition records and the replicas drop their logs.
 */
import { randomUUID } from "node:crypto";
import type { TopicAdmin } from "../broker/topic-admin.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { ClusterNode } from "./cluster-node.js";
import { assignReplicas } from "./controller-decisions.js";
import { encodeTopicRecord } from "./metadata-records.js";

/** The key of the topic config that acks=all needs: in-sync replicas at the least. */
export const MIN_INSYNC_REPLICAS_CONFIG = "min.insync.replicas";

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
    const ready = await cache.waitFor(() => {
      const topic = cache.topics.get(name);
      return topic?.value.id === record.id && (cache.partitions.get(name)?.size ?? 0) >= partitions;
    }, this.#o.readyTimeoutMs);
    if (!ready) {
      throw new ConchError(
        ErrorCode.TIMEOUT,
        `topic "${name}" was created but the controller has not assigned its leaders within ${this.#o.readyTimeoutMs} ms`,
      );
    }
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
