/** Topic administration: create, delete, alter, add partitions, reassign, list, describe. */
import { decodeAlterTopicRequest } from "../protocol/alter-topic.js";
import { DESCRIBE_TOPIC_QUARANTINE_VERSION } from "../protocol/api.js";
import { decodeCreatePartitionsRequest } from "../protocol/create-partitions.js";
import { decodeCreateTopicRequest } from "../protocol/create-topic.js";
import { decodeDeleteTopicRequest } from "../protocol/delete-topic.js";
import { decodeDescribeTopicRequest, encodeDescribeTopicResponse } from "../protocol/describe-topic.js";
import { encodeDescribeTopicResponseV2 } from "../protocol/describe-topic-v2.js";
import { encodeEmptyResponse } from "../protocol/empty-response.js";
import { requestApiVersion } from "../protocol/frame.js";
import { decodeListTopicsRequest, encodeListTopicsResponse } from "../protocol/list-topics.js";
import { decodeReassignPartitionsRequest } from "../protocol/reassign-partitions.js";
import { allowed, authorize, authorizeCreateTopic } from "./authorize.js";
import type { Reply, RequestContext } from "./handler.js";

export function createTopic(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeCreateTopicRequest(frame);
  authorizeCreateTopic(ctx, req.topic);
  return ctx.broker
    .createTopic(req.topic, req.partitions, req.configs)
    .then(() => encodeEmptyResponse(correlationId));
}

export function deleteTopic(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeDeleteTopicRequest(frame);
  authorize(ctx, "delete", "topic", req.topic);
  return ctx.broker.deleteTopic(req.topic).then(() => encodeEmptyResponse(correlationId));
}

export function alterTopic(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeAlterTopicRequest(frame);
  authorize(ctx, "alter", "topic", req.topic);
  return ctx.broker.alterTopic(req.topic, req.configs).then(() => encodeEmptyResponse(correlationId));
}

export function createPartitions(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeCreatePartitionsRequest(frame);
  authorize(ctx, "alter", "topic", req.topic);
  return ctx.broker.addPartitions(req.topic, req.partitions).then(() => encodeEmptyResponse(correlationId));
}

export function reassignPartitions(
  ctx: RequestContext,
  frame: Buffer,
  correlationId: number,
): Promise<Reply> {
  const req = decodeReassignPartitionsRequest(frame);
  for (const m of req.moves) authorize(ctx, "alter", "topic", m.topic);
  return ctx.broker.reassignPartitions(req.moves).then(() => encodeEmptyResponse(correlationId));
}

export function listTopics(ctx: RequestContext, frame: Buffer, correlationId: number): Reply {
  decodeListTopicsRequest(frame);
  // A topic the principal may not describe is not listed.
  const topics = ctx.broker.listTopics().filter((t) => allowed(ctx, "describe", "topic", t));
  return encodeListTopicsResponse(correlationId, { topics });
}

/** Versions 1 and 2 share the request; version 2's response adds the quarantined ranges. */
export function describeTopic(ctx: RequestContext, frame: Buffer, correlationId: number): Reply {
  const req = decodeDescribeTopicRequest(frame);
  authorize(ctx, "describe", "topic", req.topic);
  const d = ctx.broker.describeTopic(req.topic);
  const res = { topic: d.name, partitions: d.partitions, configs: d.configs };
  return requestApiVersion(frame) >= DESCRIBE_TOPIC_QUARANTINE_VERSION
    ? encodeDescribeTopicResponseV2(correlationId, res)
    : encodeDescribeTopicResponse(correlationId, res);
}
