/**
 * 16 ListGroups, versions 0-2: the groups a broker coordinates.
 *
 *   request v0-2  = (empty)
 *   response v0   = error_code int16 | groups [group_id string | protocol_type string]
 *   response v1-2 = throttle_time_ms int32 | v0
 *
 * v3+ is flexible (and filters by state) and is not advertised: librdkafka would use it.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface ListGroupsResponse {
  throttleTimeMs: number;
  errorCode: number;
  groups: readonly { groupId: string; protocolType: string }[];
}

/** The request has no body; decoding checks the version and that nothing follows the header. */
export function decodeListGroupsRequest(h: KafkaRequestHeader): Record<string, never> {
  checkVersion(h, ApiKey.LIST_GROUPS);
  h.body.done();
  return {};
}

function writeBody(w: KafkaSink, v: number, res: ListGroupsResponse): void {
  if (v >= 1) w.int32(res.throttleTimeMs);
  w.int16(res.errorCode);
  w.arrayCount(res.groups.length);
  for (const g of res.groups) {
    w.string(g.groupId);
    w.string(g.protocolType);
  }
}

export function encodeListGroupsResponse(
  correlationId: number,
  version: number,
  res: ListGroupsResponse,
): Buffer {
  return encodeResponse(ApiKey.LIST_GROUPS, version, correlationId, writeBody, res);
}
