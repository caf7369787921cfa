/**
 * 15 DescribeGroups, versions 0-4: a group's state, protocol and members.
 *
 *   request v0-2  = groups [string]
 *   request v3-4  = groups [string] | include_authorized_operations boolean
 *   response v0   = groups [error_code int16 | group_id string | group_state string
 *                           | protocol_type string | protocol_data string
 *                           | members [member_id string | client_id string | client_host string
 *                                      | member_metadata bytes | member_assignment bytes]]
 *   response v1-2 = throttle_time_ms int32 | groups (as v0)
 *   response v3   = as v1, each group ending with authorized_operations int32
 *   response v4   = as v3, each member: member_id | group_instance_id nullable_string | client_id
 *                   | client_host | member_metadata | member_assignment
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface DescribeGroupsRequest {
  groups: string[];
  /** v3+; false below. */
  includeAuthorizedOperations: boolean;
}

export interface DescribedGroupMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  memberMetadata: Uint8Array;
  memberAssignment: Uint8Array;
}

export interface DescribedGroup {
  errorCode: number;
  groupId: string;
  groupState: string;
  protocolType: string;
  protocolData: string;
  members: readonly DescribedGroupMember[];
  /** v3+; -2^31 = not asked for. */
  authorizedOperations: number;
}

export interface DescribeGroupsResponse {
  throttleTimeMs: number;
  groups: readonly DescribedGroup[];
}

export function decodeDescribeGroupsRequest(h: KafkaRequestHeader): DescribeGroupsRequest {
  const v = checkVersion(h, ApiKey.DESCRIBE_GROUPS);
  const r = h.body;
  const n = r.arrayCount(2);
  const groups: string[] = [];
  for (let i = 0; i < n; i++) groups.push(r.string());
  const includeAuthorizedOperations = v >= 3 ? r.boolean() : false;
  r.done();
  return { groups, includeAuthorizedOperations };
}

function writeBody(w: KafkaSink, v: number, res: DescribeGroupsResponse): void {
  if (v >= 1) w.int32(res.throttleTimeMs);
  w.arrayCount(res.groups.length);
  for (const g of res.groups) {
    w.int16(g.errorCode);
    w.string(g.groupId);
    w.string(g.groupState);
    w.string(g.protocolType);
    w.string(g.protocolData);
    w.arrayCount(g.members.length);
    for (const m of g.members) {
      w.string(m.memberId);
      if (v >= 4) w.nullableString(m.groupInstanceId);
      w.string(m.clientId);
      w.string(m.clientHost);
      w.bytes(m.memberMetadata);
      w.bytes(m.memberAssignment);
    }
    if (v >= 3) w.int32(g.authorizedOperations);
  }
}

export function encodeDescribeGroupsResponse(
  correlationId: number,
  version: number,
  res: DescribeGroupsResponse,
): Buffer {
  return encodeResponse(ApiKey.DESCRIBE_GROUPS, version, correlationId, writeBody, res);
}
