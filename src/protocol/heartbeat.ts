/**
 * 21 Heartbeat, version 1: a member says it is alive and learns whether it must rejoin.
 *
 *   request  body = group string | memberId string | generation u32
 *   response body = (empty)
 *
 * Errors that tell the member what to do: REBALANCE_IN_PROGRESS (commit, then rejoin),
 * ILLEGAL_GENERATION (its generation is over: rejoin), UNKNOWN_MEMBER (it was dropped: rejoin as a
 * new member).
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface HeartbeatRequest {
  group: string;
  memberId: string;
  generation: number;
}

export function encodeHeartbeatRequest(correlationId: number, req: HeartbeatRequest): Buffer {
  return requestWriter(ApiKey.HEARTBEAT, correlationId, stringSize(req.group) + stringSize(req.memberId) + 4)
    .string(req.group)
    .string(req.memberId)
    .u32(req.generation)
    .finish();
}

export function decodeHeartbeatRequest(frame: Buffer): HeartbeatRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  const memberId = r.string();
  const generation = r.u32();
  r.done();
  return { group, memberId, generation };
}

export const encodeHeartbeatResponse = encodeEmptyResponse;
export const decodeHeartbeatResponse = decodeEmptyResponse;
