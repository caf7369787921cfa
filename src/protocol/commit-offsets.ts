/**
 * 23 CommitOffsets, version 1: stores, for each partition, the next offset the group will read.
 *
 *   request  body = group string | memberId string | generation u32
 *                 | offsets array<(topic string | partition u32 | offset u64)>
 *   response body = (empty)
 *
 * All or nothing: the broker refuses the whole request (ILLEGAL_GENERATION) if the generation is
 * not the group's current one or the member does not own every partition named in it. memberId ""
 * with generation 0 commits on behalf of no member, which only a group without members accepts
 * (GROUP_NOT_EMPTY otherwise). Answered once the commit is on disk (fsynced).
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface PartitionOffset {
  topic: string;
  partition: number;
  offset: number;
}

export interface CommitOffsetsRequest {
  group: string;
  memberId: string;
  generation: number;
  offsets: PartitionOffset[];
}

/** topic string (at least 2) | partition u32 | offset u64 */
const MIN_ENTRY_BYTES = 2 + 4 + 8;

export function encodeCommitOffsetsRequest(correlationId: number, req: CommitOffsetsRequest): Buffer {
  let size = stringSize(req.group) + stringSize(req.memberId) + 4 + 4;
  for (const o of req.offsets) size += stringSize(o.topic) + 12;
  const w = requestWriter(ApiKey.COMMIT_OFFSETS, correlationId, size)
    .string(req.group)
    .string(req.memberId)
    .u32(req.generation)
    .count(req.offsets.length);
  for (const o of req.offsets) w.string(o.topic).u32(o.partition).u64(o.offset);
  return w.finish();
}

export function decodeCommitOffsetsRequest(frame: Buffer): CommitOffsetsRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  const memberId = r.string();
  const generation = r.u32();
  const n = r.count(MIN_ENTRY_BYTES);
  const offsets = new Array<PartitionOffset>(n);
  for (let i = 0; i < n; i++) {
    const topic = r.string();
    const partition = r.u32();
    const offset = r.u64();
    offsets[i] = { topic, partition, offset };
  }
  r.done();
  return { group, memberId, generation, offsets };
}

export const encodeCommitOffsetsResponse = encodeEmptyResponse;
export const decodeCommitOffsetsResponse = decodeEmptyResponse;
