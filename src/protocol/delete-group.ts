/**
 * 28 DeleteGroup, version 1: forgets a group and every offset it committed (tombstones in
 * `__consumer_offsets`).
 *
 *   request  body = group string
 *   response body = (empty)
 *
 * Refused with GROUP_NOT_EMPTY while the group has members, UNKNOWN_GROUP when there is no such group.
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface DeleteGroupRequest {
  group: string;
}

export function encodeDeleteGroupRequest(correlationId: number, req: DeleteGroupRequest): Buffer {
  return requestWriter(ApiKey.DELETE_GROUP, correlationId, stringSize(req.group)).string(req.group).finish();
}

export function decodeDeleteGroupRequest(frame: Buffer): DeleteGroupRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  r.done();
  return { group };
}

export const encodeDeleteGroupResponse = encodeEmptyResponse;
export const decodeDeleteGroupResponse = decodeEmptyResponse;
