/**
 * What Metadata requests (native and Kafka) answer from in cluster mode: the live brokers and each
 * partition's leader, epoch, replicas and ISR, as this broker's view of the cluster has them
 * (src/cluster/ implements it). A single-node broker has none and describes itself.
 */

import type { GroupListing } from "./group-description.js";

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

/** A partition's figures as its leader's log has them (DescribeTopic, the HTTP API). */
export interface PartitionFigures {
  readonly partition: number;
  readonly logStartOffset: number;
  /** Past the high watermark while the followers catch up. */
  readonly logEndOffset: number;
  readonly highWatermark: number;
  readonly sizeBytes: number;
  readonly segments: number;
  /** Stored data that failed its check, oldest first. */
  readonly quarantined: readonly FiguresRange[];
}

export interface FiguresRange {
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly segment: string;
  readonly reason: string;
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
  /** The config overrides of the cluster's topic record; undefined for a topic it does not have. */
  topicConfigs(topic: string): Readonly<Record<string, string>> | undefined;
  /**
   * The figures of the topic's partitions that broker `leaderId` leads, asked of it (DescribeTopic
   * at scope LED_HERE, on a connection between brokers). Rejects when it does not answer within
   * `timeoutMs`.
   */
  askLeader(leaderId: number, topic: string, timeoutMs: number): Promise<readonly PartitionFigures[]>;
  /** The groups broker `brokerId` coordinates, asked of it (ListGroups); rejects past `timeoutMs`. */
  askGroups(brokerId: number, timeoutMs: number): Promise<readonly GroupListing[]>;
}
