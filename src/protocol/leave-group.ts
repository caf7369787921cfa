/**
 * 22 LeaveGroup, version 1: a member leaves at once instead of waiting out its session, so its
 * partitions move to the others without delay.
 *
 *   request  body = group string | memberId string
 *   response body = (empty)
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface LeaveGroupRequest {
  group: string;
  memberId: string;
}

export function encodeLeaveGroupRequest(correlationId: number, req: LeaveGroupRequest): Buffer {
  return requestWriter(ApiKey.LEAVE_GROUP, correlationId, stringSize(req.group) + stringSize(req.memberId))
    .string(req.group)
    .string(req.memberId)
    .finish();
}

export function decodeLeaveGroupRequest(frame: Buffer): LeaveGroupRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  const memberId = r.string();
  r.done();
  return { group, memberId };
}

export const encodeLeaveGroupResponse = encodeEmptyResponse;
export const decodeLeaveGroupResponse = decodeEmptyResponse;
