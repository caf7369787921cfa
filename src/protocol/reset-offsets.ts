/**
 * 27 ResetOffsets, version 1: moves a group's committed offsets for every partition of a topic.
 *
 *   request  body = group string | topic string | to u8 | value u64
 *   response body = offsets array<(partition u32 | offset u64)>
 *
 * to: 0 = earliest (log start), 1 = latest (high watermark), 2 = by timestamp (the first offset
 * whose record timestamp is >= value ms; the high watermark when there is none), 3 = the offset
 * `value`, brought into [log start, high watermark]. `value` is sent as 0 for 0 and 1. Refused with
 * UNKNOWN_GROUP for a group that does not exist (a reset never creates one) and GROUP_NOT_EMPTY
 * while the group has members. The response holds the offsets now committed.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export const ResetTo = {
  EARLIEST: 0,
  LATEST: 1,
  TIMESTAMP: 2,
  OFFSET: 3,
} as const;
export type ResetToValue = (typeof ResetTo)[keyof typeof ResetTo];

export interface ResetOffsetsRequest {
  group: string;
  topic: string;
  to: ResetToValue;
  /** Milliseconds for TIMESTAMP, the offset for OFFSET, 0 otherwise. */
  value: number;
}

export interface ResetPartitionOffset {
  partition: number;
  offset: number;
}

export interface ResetOffsetsResponse {
  offsets: ResetPartitionOffset[];
}

const ENTRY_BYTES = 4 + 8;

export function encodeResetOffsetsRequest(correlationId: number, req: ResetOffsetsRequest): Buffer {
  const size = stringSize(req.group) + stringSize(req.topic) + 1 + 8;
  return requestWriter(ApiKey.RESET_OFFSETS, correlationId, size)
    .string(req.group)
    .string(req.topic)
    .u8(req.to)
    .u64(req.value)
    .finish();
}

export function decodeResetOffsetsRequest(frame: Buffer): ResetOffsetsRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  const topic = r.string();
  const to = r.u8();
  const value = r.u64();
  r.done();
  if (to > ResetTo.OFFSET) throw new ConchError(ErrorCode.INVALID_REQUEST, `reset target ${to} is not 0-3`);
  return { group, topic, to: to as ResetToValue, value };
}

export function encodeResetOffsetsResponse(correlationId: number, res: ResetOffsetsResponse): Buffer {
  const w = responseWriter(correlationId, 4 + ENTRY_BYTES * res.offsets.length).count(res.offsets.length);
  for (const o of res.offsets) w.u32(o.partition).u64(o.offset);
  return w.finish();
}

export function decodeResetOffsetsResponse(frame: Buffer): ResetOffsetsResponse {
  const r = responseBodyReader(frame);
  const n = r.count(ENTRY_BYTES);
  const offsets = new Array<ResetPartitionOffset>(n);
  for (let i = 0; i < n; i++) {
    const partition = r.u32();
    const offset = r.u64();
    offsets[i] = { partition, offset };
  }
  r.done();
  return { offsets };
}
