/**
 * 13 LeaveGroup, versions 0-3: members leave a group at once instead of timing out.
 *
 *   request v0-2  = group_id string | member_id string
 *   request v3    = group_id string | members [member_id string | group_instance_id nullable_string]
 *   response v0   = error_code int16
 *   response v1-2 = throttle_time_ms int32 | error_code int16
 *   response v3   = throttle_time_ms | error_code
 *                   | members [member_id string | group_instance_id nullable_string | error_code int16]
 *
 * v3 (batched leave, KIP-345) is what kafkajs sends at its maximum; the decoder gives every version
 * as a list of members.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";
import { writeThrottledError } from "./throttled-error.js";

export interface LeaveGroupMember {
  memberId: string;
  groupInstanceId: string | null;
}

export interface LeaveGroupRequest {
  groupId: string;
  members: LeaveGroupMember[];
}

export interface LeaveGroupResponse {
  throttleTimeMs: number;
  errorCode: number;
  /** v3: one per member in the request. */
  members: readonly (LeaveGroupMember & { errorCode: number })[];
}

export function decodeLeaveGroupRequest(h: KafkaRequestHeader): LeaveGroupRequest {
  const v = checkVersion(h, ApiKey.LEAVE_GROUP);
  const r = h.body;
  const groupId = r.string();
  const members: LeaveGroupMember[] = [];
  if (v < 3) {
    members.push({ memberId: r.string(), groupInstanceId: null });
  } else {
    const n = r.arrayCount(4);
    for (let i = 0; i < n; i++) {
      const memberId = r.string();
      members.push({ memberId, groupInstanceId: r.nullableString() });
    }
  }
  r.done();
  return { groupId, members };
}

function writeBody(w: KafkaSink, v: number, res: LeaveGroupResponse): void {
  writeThrottledError(w, v, res);
  if (v < 3) return;
  w.arrayCount(res.members.length);
  for (const m of res.members) {
    w.string(m.memberId);
    w.nullableString(m.groupInstanceId);
    w.int16(m.errorCode);
  }
}

export function encodeLeaveGroupResponse(
  correlationId: number,
  version: number,
  res: LeaveGroupResponse,
): Buffer {
  return encodeResponse(ApiKey.LEAVE_GROUP, version, correlationId, writeBody, res);
}
