/**
 * CreateTopics: each topic created with its partition count (-1: the broker's default) and its
 * configs (the same keys as Conch's own: cleanup.policy, retention.ms, ...). One broker holds one
 * replica of everything: a replication factor other than 1 (or -1, the default) is refused with
 * INVALID_REPLICATION_FACTOR, and explicit replica assignments with INVALID_REPLICA_ASSIGNMENT.
 * validate_only checks the name and the count and creates nothing.
 */

import { REPLICATION_FACTOR_CONFIG } from "../../../broker/topic-admin.js";
import { checkTopicName } from "../../../format/topic-name.js";
import { authorizeCreateTopic } from "../../../server/authorize.js";
import type { CreatableTopic } from "../../protocol/create-topics.js";
import { decodeCreateTopicsRequest, encodeCreateTopicsResponse } from "../../protocol/create-topics.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { KafkaRefusal } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";
import { eachTopic } from "./admin-results.js";

export const createTopicsHandler: KafkaHandler = {
  doneWithFrame: true,
  async handle(ctx, h) {
    const req = decodeCreateTopicsRequest(h);
    const result = await eachTopic(
      req.topics,
      (t) => t.name,
      (t) => create(ctx, t, req.validateOnly),
    );
    return encodeCreateTopicsResponse(h.correlationId, h.apiVersion, result);
  },
};

async function create(ctx: KafkaContext, t: CreatableTopic, validateOnly: boolean): Promise<void> {
  authorizeCreateTopic(ctx, t.name);
  const clustered = ctx.broker.topicAdmin !== null;
  if (t.replicationFactor !== -1 && (clustered ? t.replicationFactor < 1 : t.replicationFactor !== 1)) {
    throw new KafkaRefusal(
      KafkaErrorCode.INVALID_REPLICATION_FACTOR,
      `replication factor ${t.replicationFactor}: a single Conch broker keeps one replica`,
    );
  }
  if (t.assignments.length > 0) {
    throw new KafkaRefusal(
      KafkaErrorCode.INVALID_REPLICA_ASSIGNMENT,
      "replica assignments are not supported: a single Conch broker places every partition",
    );
  }
  const broker = ctx.broker;
  const partitions = t.numPartitions === -1 ? broker.config.defaultPartitions : t.numPartitions;
  const configs: Record<string, string> = {};
  for (const c of t.configs) if (c.value !== null) configs[c.name] = c.value;
  // In cluster mode the factor travels as a creation-only config (src/broker/topic-admin.ts).
  if (clustered && t.replicationFactor !== -1)
    configs[REPLICATION_FACTOR_CONFIG] = String(t.replicationFactor);
  if (validateOnly) {
    checkTopicName(t.name);
    if (!Number.isInteger(partitions) || partitions < 1) {
      throw new KafkaRefusal(KafkaErrorCode.INVALID_PARTITIONS, `partition count ${partitions}`);
    }
    if (broker.listTopics().includes(t.name)) {
      throw new KafkaRefusal(KafkaErrorCode.TOPIC_ALREADY_EXISTS, `topic "${t.name}" already exists`);
    }
    return;
  }
  await broker.createTopic(t.name, partitions, configs);
}
