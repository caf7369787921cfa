/**
 * 25 ListGroups, version 1: every group the broker knows, with members or only committed offsets.
 *
 *   request  body = (empty)
 *   response body = groups array<(group string | state u8 | members u32)>
 *
 * state: 0 = Empty, 1 = PreparingRebalance, 2 = Stable, 3 = CompletingRebalance (group-state.ts).
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { type GroupStateValue, groupStateFromWire } from "./group-state.js";
import { stringSize } from "./wire-writer.js";

export interface GroupListing {
  group: string;
  state: GroupStateValue;
  members: number;
}

export interface ListGroupsResponse {
  groups: GroupListing[];
}

const MIN_ENTRY_BYTES = 2 + 1 + 4;

export function encodeListGroupsRequest(correlationId: number): Buffer {
  return requestWriter(ApiKey.LIST_GROUPS, correlationId, 0).finish();
}

/** The request has no body; this only checks that it has none. */
export function decodeListGroupsRequest(frame: Buffer): void {
  requestBodyReader(frame).done();
}

export function encodeListGroupsResponse(correlationId: number, res: ListGroupsResponse): Buffer {
  let size = 4;
  for (const g of res.groups) size += stringSize(g.group) + 5;
  const w = responseWriter(correlationId, size).count(res.groups.length);
  for (const g of res.groups) w.string(g.group).u8(g.state).u32(g.members);
  return w.finish();
}

export function decodeListGroupsResponse(frame: Buffer): ListGroupsResponse {
  const r = responseBodyReader(frame);
  const n = r.count(MIN_ENTRY_BYTES);
  const groups = new Array<GroupListing>(n);
  for (let i = 0; i < n; i++) {
    const group = r.string();
    const state = groupStateFromWire(r.u8());
    const members = r.u32();
    groups[i] = { group, state, members };
  }
  r.done();
  return { groups };
}
