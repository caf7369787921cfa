/**
 * Metadata: this broker as the only node, its own controller and every partition's leader, and
 * the topics asked for (every client-visible topic when none are named). A topic that does not
 * exist is created when the broker auto-creates topics and the client allows it (v4+), as a
 * produce or fetch to it would; the answer then already lists its partitions.
 */
import type { Broker } from "../../../broker/broker.js";
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
    const names = req.topics ?? broker.listTopics().filter((name) => !broker.describeTopic(name).internal);
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
    const d = broker.describeTopic(name);
    const nodes = [ctx.node.nodeId];
    const partitions: MetadataPartition[] = d.partitions.map((p) => ({
      errorCode: KafkaErrorCode.NONE,
      partitionIndex: p.partition,
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

function exists(broker: Broker, name: string): boolean {
  try {
    broker.describeTopic(name);
    return true;
  } catch {
    return false;
  }
}
