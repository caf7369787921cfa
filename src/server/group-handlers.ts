/**
 * Consumer groups (apiKeys 20-28, docs/groups.md): decode, call the broker's GroupCoordinator,
 * encode. The join waits (a long poll ended by the connection's signal); the rest answer at once,
 * except commits and resets, which answer once the offsets are fsynced.
 */
import type { GroupStateName, ResetTarget } from "../broker/group-coordinator.js";
import { GROUP_KIND_VERSION } from "../protocol/api.js";
import { decodeCommitOffsetsRequest, encodeCommitOffsetsResponse } from "../protocol/commit-offsets.js";
import { decodeDeleteGroupRequest, encodeDeleteGroupResponse } from "../protocol/delete-group.js";
import { decodeDescribeGroupRequest, encodeDescribeGroupResponse } from "../protocol/describe-group.js";
import { encodeDescribeGroupResponseV2 } from "../protocol/describe-group-v2.js";
import { decodeFetchOffsetsRequest, encodeFetchOffsetsResponse } from "../protocol/fetch-offsets.js";
import { decodeFindCoordinatorRequest, encodeFindCoordinatorResponse } from "../protocol/find-coordinator.js";
import { requestApiVersion } from "../protocol/frame.js";
import { groupKindValue } from "../protocol/group-kind.js";
import { GroupState, type GroupStateValue } from "../protocol/group-state.js";
import { decodeHeartbeatRequest, encodeHeartbeatResponse } from "../protocol/heartbeat.js";
import { decodeJoinGroupRequest, encodeJoinGroupResponse } from "../protocol/join-group.js";
import { decodeLeaveGroupRequest, encodeLeaveGroupResponse } from "../protocol/leave-group.js";
import { decodeListGroupsRequest, encodeListGroupsResponse } from "../protocol/list-groups.js";
import { encodeListGroupsResponseV2 } from "../protocol/list-groups-v2.js";
import {
  decodeResetOffsetsRequest,
  encodeResetOffsetsResponse,
  ResetTo,
  type ResetToValue,
} from "../protocol/reset-offsets.js";
import { allowed, authorize } from "./authorize.js";
import type { Reply, RequestContext } from "./handler.js";

const WIRE_STATE: Record<GroupStateName, GroupStateValue> = {
  Empty: GroupState.EMPTY,
  PreparingRebalance: GroupState.PREPARING_REBALANCE,
  Stable: GroupState.STABLE,
  CompletingRebalance: GroupState.COMPLETING_REBALANCE,
};

export function joinGroup(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeJoinGroupRequest(frame);
  authorize(ctx, "read", "group", req.group);
  return ctx.broker.groups.join(req, ctx.signal).then((r) => encodeJoinGroupResponse(correlationId, r));
}

export function heartbeat(ctx: RequestContext, frame: Buffer, correlationId: number): Reply {
  const req = decodeHeartbeatRequest(frame);
  authorize(ctx, "read", "group", req.group);
  ctx.broker.groups.heartbeat(req.group, req.memberId, req.generation);
  return encodeHeartbeatResponse(correlationId);
}

export function leaveGroup(ctx: RequestContext, frame: Buffer, correlationId: number): Reply {
  const req = decodeLeaveGroupRequest(frame);
  authorize(ctx, "read", "group", req.group);
  ctx.broker.groups.leave(req.group, req.memberId);
  return encodeLeaveGroupResponse(correlationId);
}

export function commitOffsets(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeCommitOffsetsRequest(frame);
  authorize(ctx, "read", "group", req.group);
  for (const o of req.offsets) authorize(ctx, "read", "topic", o.topic);
  return ctx.broker.groups
    .commit(req.group, req.memberId, req.generation, req.offsets)
    .then(() => encodeCommitOffsetsResponse(correlationId));
}

export function fetchOffsets(ctx: RequestContext, frame: Buffer, correlationId: number): Reply {
  const req = decodeFetchOffsetsRequest(frame);
  authorize(ctx, "read", "group", req.group);
  const offsets = ctx.broker.groups.fetchOffsets(req.group, req.partitions);
  return encodeFetchOffsetsResponse(correlationId, { offsets });
}

/** Versions 1 and 2 share the request; version 2's response adds each group's kind and protocol type. */
export function listGroups(ctx: RequestContext, frame: Buffer, correlationId: number): Reply {
  decodeListGroupsRequest(frame);
  // A group the principal may not describe is not listed.
  const groups = ctx.broker.groups
    .listGroups()
    .filter((g) => allowed(ctx, "describe", "group", g.group))
    .map((g) => ({
      group: g.group,
      state: WIRE_STATE[g.state],
      members: g.members,
      kind: groupKindValue(g.kind),
      protocolType: g.protocolType,
    }));
  return requestApiVersion(frame) >= GROUP_KIND_VERSION
    ? encodeListGroupsResponseV2(correlationId, { groups })
    : encodeListGroupsResponse(correlationId, { groups });
}

/** Versions 1 and 2 share the request; version 2's response adds the group's kind and protocol type. */
export async function describeGroup(
  ctx: RequestContext,
  frame: Buffer,
  correlationId: number,
): Promise<Reply> {
  const req = decodeDescribeGroupRequest(frame);
  authorize(ctx, "describe", "group", req.group);
  // Its lag needs its topics' high watermarks: after a crash, their recovered logs'.
  const d = await ctx.broker.groups.describeGroupRecovered(req.group);
  const res = { ...d, state: WIRE_STATE[d.state], kind: groupKindValue(d.kind) };
  return requestApiVersion(frame) >= GROUP_KIND_VERSION
    ? encodeDescribeGroupResponseV2(correlationId, res)
    : encodeDescribeGroupResponse(correlationId, res);
}

export function resetOffsets(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeResetOffsetsRequest(frame);
  authorize(ctx, "read", "group", req.group);
  authorize(ctx, "read", "topic", req.topic);
  return ctx.broker.groups
    .resetOffsets(req.group, req.topic, resetTarget(req.to, req.value))
    .then((entries) =>
      encodeResetOffsetsResponse(correlationId, {
        offsets: entries.map((e) => ({ partition: e.partition, offset: e.offset })),
      }),
    );
}

/** This broker on a single node ("" and port 0: the broker asked); the group's coordinator in cluster mode. */
export function findCoordinator(
  ctx: RequestContext,
  frame: Buffer,
  correlationId: number,
): Reply | Promise<Reply> {
  const req = decodeFindCoordinatorRequest(frame);
  authorize(ctx, "describe", "group", req.group);
  const found = ctx.broker.groups.findCoordinator(req.group);
  if (found === null) return encodeFindCoordinatorResponse(correlationId, { brokerId: 0, host: "", port: 0 });
  return found.then((b) =>
    encodeFindCoordinatorResponse(correlationId, { brokerId: b.id, host: b.host, port: b.port }),
  );
}

export function deleteGroup(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeDeleteGroupRequest(frame);
  authorize(ctx, "delete", "group", req.group);
  return ctx.broker.groups.deleteGroup(req.group).then(() => encodeDeleteGroupResponse(correlationId));
}

function resetTarget(to: ResetToValue, value: number): ResetTarget {
  switch (to) {
    case ResetTo.EARLIEST:
      return { to: "earliest" };
    case ResetTo.LATEST:
      return { to: "latest" };
    case ResetTo.TIMESTAMP:
      return { to: "timestamp", timestampMs: value };
    case ResetTo.OFFSET:
      return { to: "offset", offset: value };
  }
}
