/**
 * Metadata: this broker as the only node, its own controller and every partition's leader (in
 * cluster mode: the cluster's brokers, controller and leaders, docs/cluster.md), and
 * the topics asked for (every client-visible topic when none are named). A topic that does not
 * exist is created when the broker auto-creates topics and the client allows it (v4+), as a
 * produce or fetch to it would; the answer then already lists its partitions.
 */
import type { Broker } from "../../../broker/broker.js";
import type { ClusterMetadata } from "../../../broker/cluster-metadata.js";
import { ConchError, ErrorCode } from "../../../format/errors.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeMetadataRequest,
  encodeMetadataResponse,
  type MetadataPartition,
  type MetadataTopic,
} from "../../protocol/metadata.js";
import { kafkaRefusal, mayCreateTopic } from "../kafka-acl.js";
import { kafkaErrorCode } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";

/** Reported as the cluster id (v2+): one broker, one cluster. */
export const CLUSTER_ID = "conch";

export const metadataHandler: KafkaHandler = {
  doneWithFrame: true,
  async handle(ctx, h) {
    const req = decodeMetadataRequest(h);
    const broker = ctx.broker;
    const cluster = broker.cluster;
    const names =
      req.topics ??
      cluster?.topicNames() ??
      broker.listTopics().filter((name) => !broker.topicInfo(name).internal);
    const topics: MetadataTopic[] = [];
    const named = req.topics !== null;
    for (const name of names) {
      // As Kafka: a topic the principal may not describe is left out of a listing of all topics,
      // and refused by name when asked for.
      const denied = kafkaRefusal(ctx, "describe", "topic", name);
      if (denied !== KafkaErrorCode.NONE) {
        if (named) topics.push({ errorCode: denied, name, isInternal: false, partitions: [] });
        continue;
      }
      const mayCreate = named && req.allowAutoTopicCreation && mayCreateTopic(ctx, name);
      topics.push(await describe(ctx, name, mayCreate));
    }
    const node = ctx.node;
    if (cluster !== null) {
      // Cluster mode: the brokers with a Kafka listener, by their broker ids (docs/cluster.md).
      return encodeMetadataResponse(h.correlationId, h.apiVersion, {
        throttleTimeMs: 0,
        brokers: cluster
          .brokers()
          .filter((b) => b.kafkaPort > 0)
          .map((b) => ({ nodeId: b.id, host: b.kafkaHost, port: b.kafkaPort, rack: null })),
        clusterId: CLUSTER_ID,
        controllerId: cluster.controllerId(),
        topics,
      });
    }
    return encodeMetadataResponse(h.correlationId, h.apiVersion, {
      throttleTimeMs: 0,
      brokers: [{ nodeId: node.nodeId, host: node.host, port: node.port, rack: null }],
      clusterId: CLUSTER_ID,
      controllerId: node.nodeId,
      topics,
    });
  },
};

async function describe(ctx: KafkaContext, name: string, mayCreate: boolean): Promise<MetadataTopic> {
  const broker = ctx.broker;
  try {
    if (mayCreate && broker.config.autoCreateTopics && !exists(broker, name)) {
      await broker.createTopic(name, broker.config.defaultPartitions).catch((err: unknown) => {
        // Created meanwhile by another request: as good.
        if (!(err instanceof ConchError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) throw err;
      });
    }
    if (broker.cluster !== null) return clusterTopic(broker.cluster, name);
    // The partitions' count only: a Metadata answer never waits for a recovery after a crash.
    const d = broker.topicInfo(name);
    const nodes = [ctx.node.nodeId];
    const partitions: MetadataPartition[] = Array.from({ length: d.partitions }, (_, partitionIndex) => ({
      errorCode: KafkaErrorCode.NONE,
      partitionIndex,
      leaderId: ctx.node.nodeId,
      replicaNodes: nodes,
      isrNodes: nodes,
      offlineReplicas: [],
    }));
    return { errorCode: KafkaErrorCode.NONE, name, isInternal: d.internal, partitions };
  } catch (err) {
    return { errorCode: kafkaErrorCode(err), name, isInternal: false, partitions: [] };
  }
}

/** A partition's leader, replicas and ISR as the cluster's metadata has them; -1 leads an offline one. */
function clusterTopic(cluster: ClusterMetadata, name: string): MetadataTopic {
  const parts = cluster.partitions(name);
  if (parts === undefined)
    return { errorCode: KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, isInternal: false, partitions: [] };
  const live = new Set(cluster.brokers().map((b) => b.id));
  const partitions: MetadataPartition[] = parts.map((p) => ({
    errorCode: p.leaderId === -1 ? KafkaErrorCode.LEADER_NOT_AVAILABLE : KafkaErrorCode.NONE,
    partitionIndex: p.partition,
    leaderId: p.leaderId,
    replicaNodes: [...p.replicas],
    isrNodes: [...p.isr],
    offlineReplicas: p.replicas.filter((id) => !live.has(id)),
  }));
  return { errorCode: KafkaErrorCode.NONE, name, isInternal: false, partitions };
}

function exists(broker: Broker, name: string): boolean {
  if (broker.cluster !== null) return broker.cluster.partitions(name) !== undefined;
  try {
    broker.topicInfo(name);
    return true;
  } catch {
    return false;
  }
}
