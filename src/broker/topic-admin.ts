/**
 * Where topic creation, deletion, growth and replica moves go when the broker is not alone: in cluster mode the cluster's
 * metadata (src/cluster/metadata-topics.ts) decides, not the local topic store. The replication
 * factor travels as the pseudo-config `replication.factor` (the native CreateTopic request and the
 * HTTP API carry configs; Kafka's CreateTopics field is mapped to it), so no request changes shape.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export const REPLICATION_FACTOR_CONFIG = "replication.factor";

export interface TopicAdmin {
  /** `configs` are validated topic configs; `replicationFactor` is null for the cluster's default. */
  createTopic(
    name: string,
    partitions: number,
    configs: Record<string, string>,
    replicationFactor: number | null,
  ): Promise<void>;
  deleteTopic(name: string): Promise<void>;
  /** Grows the topic to `partitions` in all; the new partitions' replicas go over the live brokers. */
  addPartitions(name: string, partitions: number): Promise<void>;
  /** Moves each partition to its new replica list (docs/cluster.md, "Reassignment"); answers once it began. */
  reassignPartitions(moves: readonly PartitionMove[]): Promise<void>;
}

/** One partition's new replicas, the preferred leader first. */
export interface PartitionMove {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
}

/** Takes `replication.factor` out of `configs`: its value (1 to 1000), or null when absent. */
export function takeReplicationFactor(configs: Record<string, string>): {
  configs: Record<string, string>;
  replicationFactor: number | null;
} {
  const raw = configs[REPLICATION_FACTOR_CONFIG];
  if (raw === undefined) return { configs, replicationFactor: null };
  const rest = { ...configs };
  delete rest[REPLICATION_FACTOR_CONFIG];
  const n = Number(raw);
  if (!/^[1-9][0-9]{0,3}$/.test(raw) || n > 1000) {
    throw new ConchError(
      ErrorCode.INVALID_REPLICATION_FACTOR,
      `replication factor must be an integer from 1 to 1000, got ${JSON.stringify(raw)}`,
    );
  }
  return { configs: rest, replicationFactor: n };
}
