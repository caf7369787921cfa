/**
 * 20 JoinGroup, version 1: a consumer joins (or rejoins) a group and waits for its assignment.
 *
 *   request  body = group string | memberId string | clientId string | topics array<string>
 *                 | strategy string | sessionTimeoutMs u32 | rebalanceTimeoutMs u32
 *   response body = generation u32 | memberId string | strategy string
 *                 | assignment array<(topic string | partitions array<u32>)>
 *
 * memberId is "" for a new member; the broker answers with the id it chose. The broker holds the
 * request until the rebalance completes (every member rejoined, or the rebalance timeout passed),
 * so a client allows it `rebalanceTimeoutMs` on top of its request timeout. `strategy` in the
 * response is the one the group settled on ("range" or "roundrobin").
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { assignmentSize, readAssignment, type TopicPartitions, writeAssignment } from "./group-assignment.js";
import { stringSize } from "./wire-writer.js";

export interface JoinGroupRequest {
  group: string;
  memberId: string;
  clientId: string;
  topics: string[];
  strategy: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
}

export interface JoinGroupResponse {
  generation: number;
  memberId: string;
  strategy: string;
  assignment: TopicPartitions[];
}

export function encodeJoinGroupRequest(correlationId: number, req: JoinGroupRequest): Buffer {
  let size = stringSize(req.group) + stringSize(req.memberId) + stringSize(req.clientId) + 4;
  for (const topic of req.topics) size += stringSize(topic);
  size += stringSize(req.strategy) + 4 + 4;
  const w = requestWriter(ApiKey.JOIN_GROUP, correlationId, size)
    .string(req.group)
    .string(req.memberId)
    .string(req.clientId)
    .count(req.topics.length);
  for (const topic of req.topics) w.string(topic);
  return w.string(req.strategy).u32(req.sessionTimeoutMs).u32(req.rebalanceTimeoutMs).finish();
}

export function decodeJoinGroupRequest(frame: Buffer): JoinGroupRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  const memberId = r.string();
  const clientId = r.string();
  const n = r.count(2);
  const topics = new Array<string>(n);
  for (let i = 0; i < n; i++) topics[i] = r.string();
  const strategy = r.string();
  const sessionTimeoutMs = r.u32();
  const rebalanceTimeoutMs = r.u32();
  r.done();
  return { group, memberId, clientId, topics, strategy, sessionTimeoutMs, rebalanceTimeoutMs };
}

export function encodeJoinGroupResponse(correlationId: number, res: JoinGroupResponse): Buffer {
  const size = 4 + stringSize(res.memberId) + stringSize(res.strategy) + assignmentSize(res.assignment);
  const w = responseWriter(correlationId, size).u32(res.generation).string(res.memberId).string(res.strategy);
  writeAssignment(w, res.assignment);
  return w.finish();
}

export function decodeJoinGroupResponse(frame: Buffer): JoinGroupResponse {
  const r = responseBodyReader(frame);
  const generation = r.u32();
  const memberId = r.string();
  const strategy = r.string();
  const assignment = readAssignment(r);
  r.done();
  return { generation, memberId, strategy, assignment };
}
