/**
 * A topic as the cluster has it, described by any of its brokers (DescribeTopic version 3, the HTTP
 * API, the console): every partition with its leader, epoch, replicas and ISR from the cluster's
 * metadata, and the figures only a partition's leader knows (offsets, size, quarantined ranges).
 * Those of partitions led here come from the local logs; the others are asked of their leaders,
 * one request per leader, all at once and bounded by PEER_ANSWER_TIMEOUT_MS: a leader that does
 * not answer in time (or an offline partition) leaves its partitions' figures null, "not known
 * here", rather than holding the answer or guessing (docs/cluster.md, "Listing and describing").
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { isInternalTopicName } from "../format/topic-name.js";
import type { QuarantinedRange } from "../storage/partition-log.js";
import type { Broker } from "./broker.js";
import type {
  ClusterMetadata,
  ClusterPartition,
  FiguresRange,
  PartitionFigures,
} from "./cluster-metadata.js";
import type { TopicInfo } from "./topic.js";
import { describeTopicConfig, effectiveTopicConfig, parseTopicConfigs } from "./topic-config.js";

/** How long a listing from any broker waits for the other brokers (leaders' figures, groups) before it answers without them. */
export const PEER_ANSWER_TIMEOUT_MS = 2_000;

export interface ClusterPartitionView extends ClusterPartition {
  /** The leader's figures; null when not known here (its leader did not answer in time, or none). */
  readonly figures: PartitionFigures | null;
}

export interface ClusterTopicView {
  readonly name: string;
  readonly internal: boolean;
  readonly partitions: readonly ClusterPartitionView[];
  /** The effective config, every key present. */
  readonly configs: Record<string, string>;
}

/** Which partitions' figures: every leader's (asked), or only those led here (what a leader is asked). */
export type FiguresScope = "cluster" | "led-here";

const SELF: readonly number[] = [0];

/**
 * The topic as the broker's cluster has it; on a single-node broker, the local topic in the same
 * shape, broker 0 leading every partition at epoch 0 (as its Metadata answers). Either way it
 * answers at once from what is known: after a crash a single-node broker's partition not recovered
 * yet has its figures null, as a partition whose leader did not answer has in cluster mode.
 * Describing does not hurry those recoveries: a console polling a large topic would put every
 * partition ahead of the opens that produces and fetches wait for.
 */
export async function describeTopicView(
  broker: Broker,
  name: string,
  scope: FiguresScope,
): Promise<ClusterTopicView> {
  const cluster = broker.cluster;
  if (cluster !== null) return describeClusterTopic(broker, cluster, name, scope);
  const local = broker.topicInfo(name);
  const partitions: ClusterPartitionView[] = new Array(local.partitions);
  for (let p = 0; p < partitions.length; p++) {
    partitions[p] = {
      partition: p,
      leaderId: 0,
      leaderEpoch: 0,
      replicas: SELF,
      isr: SELF,
      figures: localFigures(broker, local, p),
    };
  }
  return { name, internal: local.internal, partitions, configs: local.configs };
}

export async function describeClusterTopic(
  broker: Broker,
  cluster: ClusterMetadata,
  name: string,
  scope: FiguresScope,
  timeoutMs = PEER_ANSWER_TIMEOUT_MS,
): Promise<ClusterTopicView> {
  const partitions = cluster.partitions(name);
  const overrides = cluster.topicConfigs(name);
  if (partitions === undefined || overrides === undefined)
    throw new ConchError(ErrorCode.UNKNOWN_TOPIC, `unknown topic "${name}"`);
  const local = hostedHere(broker, name);
  const figures = new Map<number, PartitionFigures>();
  if (local !== null) {
    for (const p of partitions)
      if (p.leaderId === cluster.brokerId) {
        const f = localFigures(broker, local, p.partition);
        if (f !== null) figures.set(p.partition, f);
      }
  }
  if (scope === "cluster") {
    const leaders = new Set<number>();
    for (const p of partitions)
      if (p.leaderId >= 0 && p.leaderId !== cluster.brokerId) leaders.add(p.leaderId);
    await Promise.all(
      [...leaders].map((leaderId) =>
        cluster.askLeader(leaderId, name, timeoutMs).then(
          (answered) => {
            // Only what the leader the metadata names answered for: a leadership that moved meanwhile stays unknown.
            for (const f of answered)
              if (partitions[f.partition]?.leaderId === leaderId) figures.set(f.partition, f);
          },
          () => {},
        ),
      ),
    );
  }
  return {
    name,
    internal: isInternalTopicName(name),
    partitions: partitions.map((p) => ({ ...p, figures: figures.get(p.partition) ?? null })),
    // The local topic's when it is hosted here (its overrides as this broker runs them), else the record's.
    configs:
      local?.configs ??
      describeTopicConfig(effectiveTopicConfig(parseTopicConfigs({ ...overrides }), broker.config)),
  };
}

function hostedHere(broker: Broker, name: string): TopicInfo | null {
  try {
    return broker.topicInfo(name);
  } catch (err) {
    if (err instanceof ConchError && err.code === ErrorCode.UNKNOWN_TOPIC) return null;
    throw err;
  }
}

/** A partition's figures from its local log, or null when there is none here or it is not recovered yet. */
function localFigures(broker: Broker, local: TopicInfo, partition: number): PartitionFigures | null {
  if (partition >= local.partitions) return null;
  const d = broker.describePartition(local.name, partition);
  if (d === null) return null;
  const view = broker.partitionView(local.name, partition);
  return {
    partition,
    logStartOffset: d.logStartOffset,
    logEndOffset: view.logEndOffset,
    highWatermark: d.highWatermark,
    sizeBytes: view.sizeBytes,
    segments: view.segmentCount,
    // Nearly every partition has none: one shared empty list rather than one per partition.
    quarantined: d.quarantined.length === 0 ? NO_RANGES : d.quarantined.map(figuresRange),
  };
}

const NO_RANGES: readonly FiguresRange[] = Object.freeze([]);

function figuresRange(q: QuarantinedRange): FiguresRange {
  return { firstOffset: q.firstOffset, lastOffset: q.lastOffset, segment: q.segment, reason: q.reason };
}
