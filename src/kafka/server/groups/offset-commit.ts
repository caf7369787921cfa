/**
 * OffsetCommit (8): into the same offset store as native commits. A generation below 0 is Kafka's
 * commit from outside the group's membership (an assign()-mode consumer, an admin tool): the
 * coordinator's commit on behalf of no member, which a group with members refuses. The commit is
 * all or nothing, so every partition gets the same error. Committed metadata is not stored.
 *
 * As in Kafka, it needs read on the group (else every partition is GROUP_AUTHORIZATION_FAILED) and
 * read on each topic: a refused topic's partitions are TOPIC_AUTHORIZATION_FAILED and not
 * committed, the others are.
 */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { decodeOffsetCommitRequest, encodeOffsetCommitResponse } from "../../protocol/offset-commit.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const offsetCommit: KafkaGroupHandler = async (ctx, h) => {
  const req = decodeOffsetCommitRequest(h);
  const outside = req.generationId < 0;
  const groupRefused = kafkaRefusal(ctx, "read", "group", req.groupId);
  // Per topic: its refusal, or NONE while it is to be committed.
  const topicErrors = req.topics.map((t) =>
    groupRefused === KafkaErrorCode.NONE ? kafkaRefusal(ctx, "read", "topic", t.name) : groupRefused,
  );
  const offsets = [];
  for (let i = 0; i < req.topics.length; i++) {
    if (topicErrors[i] !== KafkaErrorCode.NONE) continue;
    const t = req.topics[i]!;
    for (const p of t.partitions) {
      offsets.push({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset });
    }
  }
  let errorCode: number = KafkaErrorCode.NONE;
  // Nothing left to commit once every topic is refused: the membership is not even checked.
  if (groupRefused === KafkaErrorCode.NONE && (offsets.length > 0 || req.topics.length === 0)) {
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
  }
  return encodeOffsetCommitResponse(h.correlationId, h.apiVersion, {
    throttleTimeMs: 0,
    topics: req.topics.map((t, i) => {
      const topicError = topicErrors[i] === KafkaErrorCode.NONE ? errorCode : topicErrors[i]!;
      return {
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: topicError })),
      };
    }),
  });
};
