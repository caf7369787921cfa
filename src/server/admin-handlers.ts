/** Topic administration: create, delete, alter, add partitions, reassign, list (describe: describe-topic-handler.ts). */
import { decodeAlterTopicRequest } from "../protocol/alter-topic.js";
import { decodeCreatePartitionsRequest } from "../protocol/create-partitions.js";
import { decodeCreateTopicRequest } from "../protocol/create-topic.js";
import { decodeDeleteTopicRequest } from "../protocol/delete-topic.js";
import { encodeEmptyResponse } from "../protocol/empty-response.js";
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
  // In cluster mode, the cluster's topics (as Metadata lists them), not only those with replicas here.
  const names = ctx.broker.cluster?.topicNames() ?? ctx.broker.listTopics();
  const topics = names.filter((t) => allowed(ctx, "describe", "topic", t));
  return encodeListTopicsResponse(correlationId, { topics });
}
