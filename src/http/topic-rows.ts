/**
 * The HTTP API's topic list and details, from the topic as broker/cluster-topic-view.ts describes
 * it: in cluster mode the cluster's, each partition with its leader, epoch, replicas and ISR and
 * the figures its leader gave; on a single node the broker's own, without placement. A figure not
 * known here (a leader that did not answer in time or none; on a single node, a partition still
 * being recovered after a crash) is null with `figuresKnown` false, and so is a topic total that
 * would need it: a sum of what is known would read as the whole.
 */
import type { Broker } from "../broker/broker.js";
import type { ClusterPartitionView, ClusterTopicView } from "../broker/cluster-topic-view.js";

/**
 * A partition's row; `placed` adds its leader, epoch, replicas and ISR (cluster mode). One literal
 * of one shape either way (a spread per row cost 3 times the rest of a describe): the placement is
 * undefined when not placed, which leaves it out of the JSON.
 */
export function partitionRow(p: ClusterPartitionView, placed: boolean) {
  const f = p.figures;
  return {
    partition: p.partition,
    leader: placed ? p.leaderId : undefined,
    leaderEpoch: placed ? p.leaderEpoch : undefined,
    replicas: placed ? p.replicas : undefined,
    isr: placed ? p.isr : undefined,
    figuresKnown: f !== null,
    logStartOffset: f?.logStartOffset ?? null,
    logEndOffset: f?.logEndOffset ?? null,
    highWatermark: f?.highWatermark ?? null,
    sizeBytes: f?.sizeBytes ?? null,
    segments: f?.segments ?? null,
    quarantined: f?.quarantined ?? null,
  };
}

export function topicSummary(view: ClusterTopicView) {
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
function retention(configs: Readonly<Record<string, string>>) {
  return {
    retentionMs: Number(configs["retention.ms"]),
    retentionBytes: Number(configs["retention.bytes"]),
    cleanupPolicy: configs["cleanup.policy"] ?? "delete",
  };
}

export function topicDetail(view: ClusterTopicView, placed: boolean) {
  return {
    name: view.name,
    internal: view.internal,
    configs: view.configs,
    partitions: view.partitions.map((p) => partitionRow(p, placed)),
  };
}

/** The names a listing covers: the cluster's topics, or this broker's on a single node. */
export function topicNames(broker: Broker): readonly string[] {
  return broker.cluster?.topicNames() ?? broker.listTopics();
}
