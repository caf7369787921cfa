/**
 * The ReplicaControl a cluster-mode broker hands its ClusterNode: before a partition's first role
 * reaches the ReplicaManager, the topic's local logs are made from the cluster's topic record
 * (partition count and configs), since a replica's logs exist only because the cluster says so;
 * a partition dropped from this broker (reassigned away, or its topic deleted) loses its data.
 * They are made through Broker.hostReplicaTopic: topicAdmin would ask the cluster to create the
 * topic again.
 *
 * It also tells the group coordinator which `__consumer_offsets` partitions this broker leads
 * after each role change: a broker coordinates the groups of those (docs/cluster.md).
 */
import type { Broker } from "../broker/broker.js";
import { OFFSETS_TOPIC } from "../broker/offset-store.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { isInternalTopicName } from "../format/topic-name.js";
import type { MetadataCache } from "./metadata-cache.js";
import type { ReplicaManager } from "./replica-manager.js";
import type { PartitionRole, ReplicaControl } from "./roles.js";

export class HostedReplicas implements ReplicaControl {
  readonly #broker: Broker;
  #cache: MetadataCache | null = null;
  #manager: ReplicaManager | null = null;

  constructor(broker: Broker) {
    this.#broker = broker;
  }

  /**
   * The manager takes the ClusterNode as its view, and the node takes this: so both are set once
   * the node is made, before node.start() hands out the first role.
   */
  attach(manager: ReplicaManager, cache: MetadataCache): void {
    this.#manager = manager;
    this.#cache = cache;
  }

  async applyRole(role: PartitionRole): Promise<void> {
    const manager = this.#attached();
    const topic = this.#cache?.topics.get(role.topic)?.value;
    if (topic === undefined) {
      throw new ConchError(
        ErrorCode.UNKNOWN_TOPIC,
        `no topic record for ${role.topic} in the cluster metadata`,
      );
    }
    await this.#broker.hostReplicaTopic(topic.name, topic.partitions, { ...topic.configs });
    await manager.applyRole(role);
    if (role.topic !== OFFSETS_TOPIC) return;
    // What the manager made of the role (an older epoch than it holds changes nothing).
    if (manager.describe(role.topic, role.partition)?.kind === "leader")
      await this.#broker.groups.offsetsLeaderGained(role.partition, topic.partitions);
    else this.#broker.groups.offsetsLeaderLost(role.partition);
  }

  /** The replica is no longer this broker's: it stops, and its data goes (as Kafka deletes the log). */
  async dropPartition(topic: string, partition: number): Promise<void> {
    if (topic === OFFSETS_TOPIC) this.#broker.groups.offsetsLeaderLost(partition);
    await this.#attached().dropPartition(topic, partition);
    await this.#broker.discardReplica(topic, partition);
  }

  localPartitions(): Array<{ topic: string; partition: number }> {
    const out: Array<{ topic: string; partition: number }> = [];
    this.#broker.forEachPartition((topic, partition, log) => {
      if (!isInternalTopicName(topic) && log.logEndOffset > log.logStartOffset)
        out.push({ topic, partition });
    });
    return out;
  }

  fence(): void {
    this.#manager?.fence();
    this.#broker.groups.offsetsLeadershipFenced();
  }

  unfence(): void {
    this.#manager?.unfence();
  }

  async close(): Promise<void> {
    await this.#manager?.close();
  }

  #attached(): ReplicaManager {
    if (this.#manager === null) throw new Error("HostedReplicas: no ReplicaManager attached");
    return this.#manager;
  }
}
