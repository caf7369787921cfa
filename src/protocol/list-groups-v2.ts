/**
 * 25 ListGroups, version 2: version 1 with each group's kind and protocol type.
 *
 *   request  body = (empty)                                                   (as version 1)
 *   response body = groups array<(group string | state u8 | members u32 | kind u8 | protocolType string)>
 *
 * kind: 0 = native, 1 = Kafka (group-kind.ts). protocolType: a Kafka group's (e.g. "consumer"),
 * "" for a native group.
 */
import { ApiKey, GROUP_KIND_VERSION } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestWriter, responseWriter } from "./frame.js";
import { type GroupKindValue, groupKindFromWire } from "./group-kind.js";
import { groupStateFromWire } from "./group-state.js";
import type { GroupListing } from "./list-groups.js";
import { stringSize } from "./wire-writer.js";

export interface GroupListingV2 extends GroupListing {
  kind: GroupKindValue;
  /** A Kafka group's protocol type; "" for a native group. */
  protocolType: string;
}

export interface ListGroupsResponseV2 {
  groups: GroupListingV2[];
}

/** group string | state u8 | members u32 | kind u8 | protocolType string */
const MIN_ENTRY_BYTES = 2 + 1 + 4 + 1 + 2;

export function encodeListGroupsRequestV2(correlationId: number): Buffer {
  return requestWriter(ApiKey.LIST_GROUPS, correlationId, 0, 0, GROUP_KIND_VERSION).finish();
}

export function encodeListGroupsResponseV2(correlationId: number, res: ListGroupsResponseV2): Buffer {
  let size = 4;
  for (const g of res.groups) size += stringSize(g.group) + 6 + stringSize(g.protocolType);
  const w = responseWriter(correlationId, size).count(res.groups.length);
  for (const g of res.groups) w.string(g.group).u8(g.state).u32(g.members).u8(g.kind).string(g.protocolType);
  return w.finish();
}

export function decodeListGroupsResponseV2(frame: Buffer): ListGroupsResponseV2 {
  const r = responseBodyReader(frame);
  const n = r.count(MIN_ENTRY_BYTES);
  const groups = new Array<GroupListingV2>(n);
  for (let i = 0; i < n; i++) {
    const group = r.string();
    const state = groupStateFromWire(r.u8());
    const members = r.u32();
    const kind = groupKindFromWire(r.u8());
    const protocolType = r.string();
    groups[i] = { group, state, members, kind, protocolType };
  }
  r.done();
  return { groups };
}
