/**
 * OffsetCommit (8): into the same offset store as native commits. A generation below 0 is Kafka's
 * commit from outside the group's membership (an assign()-mode consumer, an admin tool): the
 * coordinator's commit on behalf of no member, which a group with members refuses. The commit is
 * all or nothing, so every partition gets the same error. Committed metadata is not stored.
 */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { decodeOffsetCommitRequest, encodeOffsetCommitResponse } from "../../protocol/offset-commit.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const offsetCommit: KafkaGroupHandler = async (ctx, h) => {
  const req = decodeOffsetCommitRequest(h);
  const outside = req.generationId < 0;
  const offsets = [];
  for (const t of req.topics) {
    for (const p of t.partitions) {
      offsets.push({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset });
    }
  }
  let errorCode: number = KafkaErrorCode.NONE;
  try {
    await ctx.broker.groups.commit(
      req.groupId,
      outside ? "" : req.memberId,
      outside ? 0 : req.generationId,
      offsets,
    );
  } catch (err) {
    errorCode = kafkaGroupErrorCode(err);
  }
  return encodeOffsetCommitResponse(h.correlationId, h.apiVersion, {
    throttleTimeMs: 0,
    topics: req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
    })),
  });
};
