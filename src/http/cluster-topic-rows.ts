/**
 * The HTTP API's topic list and details in cluster mode: the cluster's topics, each partition with
 * its leader, epoch, replicas and ISR, and the figures its leader gave (broker/cluster-topic-view.ts).
 * A figure not known here (its leader did not answer in time, or there is none) is null, and so
 * is a topic total that would need it: a sum of what answered would read as the whole.
 */
import type { Broker } from "../broker/broker.js";
import type { ClusterPartitionView, ClusterTopicView } from "../broker/cluster-topic-view.js";

export function clusterPartitionRow(p: ClusterPartitionView) {
  const f = p.figures;
  return {
    partition: p.partition,
    leader: p.leaderId,
    leaderEpoch: p.leaderEpoch,
    replicas: p.replicas,
    isr: p.isr,
    figuresKnown: f !== null,
    logStartOffset: f?.logStartOffset ?? null,
    logEndOffset: f?.logEndOffset ?? null,
    highWatermark: f?.highWatermark ?? null,
    sizeBytes: f?.sizeBytes ?? null,
    segments: f?.segments ?? null,
    quarantined: f?.quarantined ?? null,
  };
}

export function clusterTopicSummary(view: ClusterTopicView) {
  let sizeBytes: number | null = 0;
  let messages: number | null = 0;
  for (const p of view.partitions) {
    const f = p.figures;
    if (f === null || sizeBytes === null || messages === null) {
      sizeBytes = null;
      messages = null;
      continue;
    }
    sizeBytes += f.sizeBytes;
    messages += f.highWatermark - f.logStartOffset;
  }
  return {
    name: view.name,
    internal: view.internal,
    partitions: view.partitions.length,
    sizeBytes,
    messages,
    ...retention(view.configs),
  };
}

/** What a list of topics is read for besides sizes: how long data stays. */
export function retention(configs: Readonly<Record<string, string>>) {
  return {
    retentionMs: Number(configs["retention.ms"]),
    retentionBytes: Number(configs["retention.bytes"]),
    cleanupPolicy: configs["cleanup.policy"] ?? "delete",
  };
}

export function clusterTopicDetail(view: ClusterTopicView) {
  return {
    name: view.name,
    internal: view.internal,
    configs: view.configs,
    partitions: view.partitions.map(clusterPartitionRow),
  };
}

/** The names a listing covers: the cluster's topics, or this broker's on a single node. */
export function topicNames(broker: Broker): readonly string[] {
  return broker.cluster?.topicNames() ?? broker.listTopics();
}
