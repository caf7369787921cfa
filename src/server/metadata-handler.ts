/**
 * 16 Metadata: the brokers and each partition's leader, from the cluster's view in cluster mode
 * (Broker.cluster) or, on a single-node broker, this broker as broker 0 leading everything at
 * epoch 0. As ListTopics, a topic the principal may not describe is left out of a listing of all
 * topics and refused by name when asked for.
 */
import type { Broker } from "../broker/broker.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import {
  decodeMetadataRequest,
  encodeMetadataResponse,
  type MetadataPartitionEntry,
  type MetadataTopicEntry,
} from "../protocol/metadata.js";
import { allowed } from "./authorize.js";
import type { Reply, RequestContext } from "./handler.js";

const SELF = [0];

export function metadata(ctx: RequestContext, frame: Buffer, correlationId: number): Reply {
  const asked = decodeMetadataRequest(frame);
  const broker = ctx.broker;
  const cluster = broker.cluster;
  const names = asked.length > 0 ? asked : (cluster?.topicNames() ?? broker.listTopics());
  const topics: MetadataTopicEntry[] = [];
  for (const name of names) {
    if (!allowed(ctx, "describe", "topic", name)) {
      if (asked.length > 0)
        topics.push({ name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, partitions: [] });
      continue;
    }
    const partitions = cluster !== null ? cluster.partitions(name) : localPartitions(broker, name);
    topics.push(
      partitions === undefined
        ? { name, errorCode: ErrorCode.UNKNOWN_TOPIC, partitions: [] }
        : { name, errorCode: ErrorCode.NONE, partitions },
    );
  }
  if (cluster === null) {
    return encodeMetadataResponse(correlationId, {
      brokerId: 0,
      controllerId: 0,
      brokers: [{ id: 0, host: "", port: 0 }],
      topics,
    });
  }
  return encodeMetadataResponse(correlationId, {
    brokerId: cluster.brokerId,
    controllerId: cluster.controllerId(),
    brokers: cluster.brokers().map((b) => ({ id: b.id, host: b.host, port: b.port })),
    topics,
  });
}

function localPartitions(broker: Broker, name: string): MetadataPartitionEntry[] | undefined {
  try {
    // The partitions' count only: a Metadata answer never waits for a recovery after a crash.
    return Array.from({ length: broker.topicInfo(name).partitions }, (_, partition) => ({
      partition,
      leaderId: 0,
      leaderEpoch: 0,
      replicas: SELF,
      isr: SELF,
    }));
  } catch (err) {
    if (err instanceof ConchError && err.code === ErrorCode.UNKNOWN_TOPIC) return undefined;
    throw err;
  }
}
