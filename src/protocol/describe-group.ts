/**
 * 26 DescribeGroup, version 1: a group's state, members and assignment, and per partition its
 * owner, committed offset and lag.
 *
 *   request  body = group string
 *   response body = group string | state u8 | generation u32 | strategy string
 *                 | members array<(memberId string | clientId string
 *                                   | assignment array<(topic string | partitions array<u32>)>)>
 *                 | partitions array<(topic string | partition u32 | owner string
 *                                      | committed i64 | highWatermark u64 | lag i64)>
 *
 * `partitions` covers every partition of the topics the members subscribe to and of the topics the
 * group has committed offsets for. owner is "" when no member owns the partition; committed and lag
 * are -1 ("none") when nothing was committed. lag = highWatermark - committed.
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { assignmentSize, readAssignment, type TopicPartitions, writeAssignment } from "./group-assignment.js";
import { type GroupStateValue, groupStateFromWire } from "./group-state.js";
import type { WireReader } from "./wire-reader.js";
import { stringSize, type WireWriter } from "./wire-writer.js";

export interface DescribeGroupRequest {
  group: string;
}

export interface GroupMemberDescription {
  memberId: string;
  clientId: string;
  assignment: TopicPartitions[];
}

export interface GroupPartitionDescription {
  topic: string;
  partition: number;
  /** The owning member's id, or "". */
  owner: string;
  /** -1: none committed. */
  committed: number;
  highWatermark: number;
  /** -1 when nothing was committed. */
  lag: number;
}

export interface DescribeGroupResponse {
  group: string;
  state: GroupStateValue;
  generation: number;
  /** "" while the group has never completed a rebalance. */
  strategy: string;
  members: GroupMemberDescription[];
  partitions: GroupPartitionDescription[];
}

/** memberId string | clientId string | an empty assignment */
const MIN_MEMBER_BYTES = 2 + 2 + 4;
/** topic string | partition u32 | owner string | committed i64 | highWatermark u64 | lag i64 */
const MIN_PARTITION_BYTES = 2 + 4 + 2 + 8 + 8 + 8;

export function encodeDescribeGroupRequest(correlationId: number, req: DescribeGroupRequest): Buffer {
  return requestWriter(ApiKey.DESCRIBE_GROUP, correlationId, stringSize(req.group))
    .string(req.group)
    .finish();
}

export function decodeDescribeGroupRequest(frame: Buffer): DescribeGroupRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  r.done();
  return { group };
}

export function encodeDescribeGroupResponse(correlationId: number, res: DescribeGroupResponse): Buffer {
  return writeDescribeGroupBody(responseWriter(correlationId, describeGroupBodySize(res)), res).finish();
}

export function decodeDescribeGroupResponse(frame: Buffer): DescribeGroupResponse {
  const r = responseBodyReader(frame);
  const res = readDescribeGroupBody(r);
  r.done();
  return res;
}

/** The bytes of version 1's response body, which version 2's begins with. */
export function describeGroupBodySize(res: DescribeGroupResponse): number {
  let size = stringSize(res.group) + 1 + 4 + stringSize(res.strategy) + 4 + 4;
  for (const m of res.members) {
    size += stringSize(m.memberId) + stringSize(m.clientId) + assignmentSize(m.assignment);
  }
  for (const p of res.partitions) size += stringSize(p.topic) + 4 + stringSize(p.owner) + 24;
  return size;
}

export function writeDescribeGroupBody(w: WireWriter, res: DescribeGroupResponse): WireWriter {
  w.string(res.group).u8(res.state).u32(res.generation).string(res.strategy).count(res.members.length);
  for (const m of res.members) {
    w.string(m.memberId).string(m.clientId);
    writeAssignment(w, m.assignment);
  }
  w.count(res.partitions.length);
  for (const p of res.partitions) {
    w.string(p.topic).u32(p.partition).string(p.owner).i64(p.committed).u64(p.highWatermark).i64(p.lag);
  }
  return w;
}

export function readDescribeGroupBody(r: WireReader): DescribeGroupResponse {
  const group = r.string();
  const state = groupStateFromWire(r.u8());
  const generation = r.u32();
  const strategy = r.string();
  const m = r.count(MIN_MEMBER_BYTES);
  const members = new Array<GroupMemberDescription>(m);
  for (let i = 0; i < m; i++) {
    const memberId = r.string();
    const clientId = r.string();
    const assignment = readAssignment(r);
    members[i] = { memberId, clientId, assignment };
  }
  const n = r.count(MIN_PARTITION_BYTES);
  const partitions = new Array<GroupPartitionDescription>(n);
  for (let i = 0; i < n; i++) {
    const topic = r.string();
    const partition = r.u32();
    const owner = r.string();
    const committed = r.i64();
    const highWatermark = r.u64();
    const lag = r.i64();
    partitions[i] = { topic, partition, owner, committed, highWatermark, lag };
  }
  return { group, state, generation, strategy, members, partitions };
}
