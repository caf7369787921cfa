/**
 * What Metadata requests (native and Kafka) answer from in cluster mode: the live brokers and each
 * partition's leader, epoch, replicas and ISR, as this broker's view of the cluster has them
 * (src/cluster/ implements it). A single-node broker has none and describes itself.
 */

export interface ClusterBroker {
  readonly id: number;
  /** The native listener. */
  readonly host: string;
  readonly port: number;
  /** The Kafka listener; port 0 when it is off. */
  readonly kafkaHost: string;
  readonly kafkaPort: number;
}

export interface ClusterPartition {
  readonly partition: number;
  /** -1: offline. */
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
}

export interface ClusterMetadata {
  /** This broker's id. */
  readonly brokerId: number;
  /** The controller's broker id, -1 while there is none. */
  controllerId(): number;
  brokers(): readonly ClusterBroker[];
  topicNames(): readonly string[];
  /** The topic's partitions, in order; undefined for a topic the cluster does not have. */
  partitions(topic: string): readonly ClusterPartition[] | undefined;
}
