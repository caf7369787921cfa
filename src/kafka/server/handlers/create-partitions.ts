/**
 * CreatePartitions: grows each topic to `count` partitions in all. Replica assignments are refused
 * (one broker places everything); validate_only checks that the topic exists and would grow.
 */

import { authorize } from "../../../server/authorize.js";
import {
  type CreatePartitionsTopic,
  decodeCreatePartitionsRequest,
  encodeCreatePartitionsResponse,
} from "../../protocol/create-partitions.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { KafkaRefusal } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";
import { eachTopic } from "./admin-results.js";

export const createPartitionsHandler: KafkaHandler = {
  doneWithFrame: true,
  async handle(ctx, h) {
    const req = decodeCreatePartitionsRequest(h);
    const result = await eachTopic(
      req.topics,
      (t) => t.name,
      (t) => grow(ctx, t, req.validateOnly),
    );
    return encodeCreatePartitionsResponse(h.correlationId, h.apiVersion, result);
  },
};

async function grow(ctx: KafkaContext, t: CreatePartitionsTopic, validateOnly: boolean): Promise<void> {
  authorize(ctx, "alter", "topic", t.name);
  if (t.assignments !== null) {
    throw new KafkaRefusal(
      KafkaErrorCode.INVALID_REPLICA_ASSIGNMENT,
      "replica assignments are not supported: a single Conch broker places every partition",
    );
  }
  if (validateOnly) {
    const now = ctx.broker.topicInfo(t.name).partitions;
    if (t.count <= now) {
      throw new KafkaRefusal(
        KafkaErrorCode.INVALID_PARTITIONS,
        `topic "${t.name}" has ${now} partition(s); it can only grow (asked for ${t.count})`,
      );
    }
    return;
  }
  await ctx.broker.addPartitions(t.name, t.count);
}
