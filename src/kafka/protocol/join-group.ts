/**
 * 11 JoinGroup, versions 0-5: a member joins (or rejoins) a group; the leader learns every member's
 * subscription metadata.
 *
 *   request v0    = group_id string | session_timeout_ms int32 | member_id string
 *                   | protocol_type string | protocols [name string | metadata bytes]
 *   request v1-4  = group_id | session_timeout_ms | rebalance_timeout_ms int32 | member_id
 *                   | protocol_type | protocols
 *   request v5    = group_id | session_timeout_ms | rebalance_timeout_ms | member_id
 *                   | group_instance_id nullable_string | protocol_type | protocols
 *   response v0-1 = error_code int16 | generation_id int32 | protocol_name string | leader string
 *                   | member_id string | members [member_id string | metadata bytes]
 *   response v2-4 = throttle_time_ms int32 | v0
 *   response v5   = as v2, members [member_id | group_instance_id nullable_string | metadata]
 *
 * From v4 a broker may answer MEMBER_ID_REQUIRED with a member id to join again with (KIP-394).
 * Protocol metadata is opaque here: views of the request frame.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface JoinGroupRequest {
  groupId: string;
  sessionTimeoutMs: number;
  /** v1+; the session timeout below (as v0 brokers used it). */
  rebalanceTimeoutMs: number;
  memberId: string;
  /** v5; null below. */
  groupInstanceId: string | null;
  protocolType: string;
  protocols: { name: string; metadata: Buffer }[];
}

export interface JoinGroupResponse {
  throttleTimeMs: number;
  errorCode: number;
  generationId: number;
  protocolName: string;
  leader: string;
  memberId: string;
  members: readonly { memberId: string; groupInstanceId: string | null; metadata: Uint8Array }[];
}

export function decodeJoinGroupRequest(h: KafkaRequestHeader): JoinGroupRequest {
  const v = checkVersion(h, ApiKey.JOIN_GROUP);
  const r = h.body;
  const groupId = r.string();
  const sessionTimeoutMs = r.int32();
  const rebalanceTimeoutMs = v >= 1 ? r.int32() : sessionTimeoutMs;
  const memberId = r.string();
  const groupInstanceId = v >= 5 ? r.nullableString() : null;
  const protocolType = r.string();
  const n = r.arrayCount(6);
  const protocols: JoinGroupRequest["protocols"] = [];
  for (let i = 0; i < n; i++) {
    const name = r.string();
    protocols.push({ name, metadata: r.bytes() });
  }
  r.done();
  return {
    groupId,
    sessionTimeoutMs,
    rebalanceTimeoutMs,
    memberId,
    groupInstanceId,
    protocolType,
    protocols,
  };
}

function writeBody(w: KafkaSink, v: number, res: JoinGroupResponse): void {
  if (v >= 2) w.int32(res.throttleTimeMs);
  w.int16(res.errorCode);
  w.int32(res.generationId);
  w.string(res.protocolName);
  w.string(res.leader);
  w.string(res.memberId);
  w.arrayCount(res.members.length);
  for (const m of res.members) {
    w.string(m.memberId);
    if (v >= 5) w.nullableString(m.groupInstanceId);
    w.bytes(m.metadata);
  }
}

export function encodeJoinGroupResponse(
  correlationId: number,
  version: number,
  res: JoinGroupResponse,
): Buffer {
  return encodeResponse(ApiKey.JOIN_GROUP, version, correlationId, writeBody, res);
}
