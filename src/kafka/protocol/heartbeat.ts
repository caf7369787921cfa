/**
 * 12 Heartbeat, versions 0-3: a member says it is alive and learns whether it must rejoin.
 *
 *   request v0-2  = group_id string | generation_id int32 | member_id string
 *   request v3    = v0 | group_instance_id nullable_string
 *   response v0   = error_code int16
 *   response v1-3 = throttle_time_ms int32 | error_code int16
 *
 * REBALANCE_IN_PROGRESS tells the member to rejoin; ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID that
 * it was dropped.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import { type ThrottledError, writeThrottledError } from "./throttled-error.js";

export interface HeartbeatRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  /** v3; null below. */
  groupInstanceId: string | null;
}

export function decodeHeartbeatRequest(h: KafkaRequestHeader): HeartbeatRequest {
  const v = checkVersion(h, ApiKey.HEARTBEAT);
  const r = h.body;
  const groupId = r.string();
  const generationId = r.int32();
  const memberId = r.string();
  const groupInstanceId = v >= 3 ? r.nullableString() : null;
  r.done();
  return { groupId, generationId, memberId, groupInstanceId };
}

export function encodeHeartbeatResponse(correlationId: number, version: number, res: ThrottledError): Buffer {
  return encodeResponse(ApiKey.HEARTBEAT, version, correlationId, writeThrottledError, res);
}
