/**
 * 14 SyncGroup, versions 0-3: the leader hands out assignments; every member receives its own.
 *
 *   request v0-2  = group_id string | generation_id int32 | member_id string
 *                   | assignments [member_id string | assignment bytes]
 *   request v3    = group_id | generation_id | member_id | group_instance_id nullable_string
 *                   | assignments
 *   response v0   = error_code int16 | assignment bytes
 *   response v1-3 = throttle_time_ms int32 | error_code int16 | assignment bytes
 *
 * Followers send no assignments. Assignments are opaque here: views of the request frame.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface SyncGroupRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  /** v3; null below. */
  groupInstanceId: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

export interface SyncGroupResponse {
  throttleTimeMs: number;
  errorCode: number;
  assignment: Uint8Array;
}

export function decodeSyncGroupRequest(h: KafkaRequestHeader): SyncGroupRequest {
  const v = checkVersion(h, ApiKey.SYNC_GROUP);
  const r = h.body;
  const groupId = r.string();
  const generationId = r.int32();
  const memberId = r.string();
  const groupInstanceId = v >= 3 ? r.nullableString() : null;
  const n = r.arrayCount(6);
  const assignments: SyncGroupRequest["assignments"] = [];
  for (let i = 0; i < n; i++) {
    const member = r.string();
    assignments.push({ memberId: member, assignment: r.bytes() });
  }
  r.done();
  return { groupId, generationId, memberId, groupInstanceId, assignments };
}

function writeBody(w: KafkaSink, v: number, res: SyncGroupResponse): void {
  if (v >= 1) w.int32(res.throttleTimeMs);
  w.int16(res.errorCode);
  w.bytes(res.assignment);
}

export function encodeSyncGroupResponse(
  correlationId: number,
  version: number,
  res: SyncGroupResponse,
): Buffer {
  return encodeResponse(ApiKey.SYNC_GROUP, version, correlationId, writeBody, res);
}
