/**
 * Consumer group administration (docs/groups.md): list, describe, read and reset committed
 * offsets, delete. One request each, on a connection the caller owns.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { decodeCommitOffsetsResponse, encodeCommitOffsetsRequest } from "../protocol/commit-offsets.js";
import { decodeDeleteGroupResponse, encodeDeleteGroupRequest } from "../protocol/delete-group.js";
import {
  decodeDescribeGroupResponse,
  encodeDescribeGroupRequest,
  type GroupPartitionDescription,
} from "../protocol/describe-group.js";
import {
  decodeDescribeGroupResponseV2,
  encodeDescribeGroupRequestV2,
} from "../protocol/describe-group-v2.js";
import { decodeFetchOffsetsResponse, encodeFetchOffsetsRequest } from "../protocol/fetch-offsets.js";
import type { TopicPartitions } from "../protocol/group-assignment.js";
import { type GroupKindName, groupKindName } from "../protocol/group-kind.js";
import { type GroupStateName, groupStateName } from "../protocol/group-state.js";
import { decodeListGroupsResponse, encodeListGroupsRequest } from "../protocol/list-groups.js";
import { decodeListGroupsResponseV2, encodeListGroupsRequestV2 } from "../protocol/list-groups-v2.js";
import { decodeResetOffsetsResponse, encodeResetOffsetsRequest, ResetTo } from "../protocol/reset-offsets.js";
import type { ConnectionManager } from "./connection-manager.js";

/** A broker that does not serve a request's newer version answers UNSUPPORTED_VERSION. */
function olderBroker(err: unknown): boolean {
  return err instanceof ConchError && err.code === ErrorCode.UNSUPPORTED_VERSION;
}

export type { GroupPartitionDescription } from "../protocol/describe-group.js";
export type { TopicPartitions } from "../protocol/group-assignment.js";
export type { GroupKindName } from "../protocol/group-kind.js";
export type { GroupStateName } from "../protocol/group-state.js";

export interface GroupSummary {
  group: string;
  /**
   * native: Conch's clients, the broker assigns; kafka: Kafka clients, the leader member assigns.
   * Absent from a broker that predates ListGroups version 2.
   */
  kind?: GroupKindName;
  /** A Kafka group's protocol type (e.g. "consumer"); "" for a native group; absent as `kind`. */
  protocolType?: string;
  state: GroupStateName;
  members: number;
}

export interface GroupMemberInfo {
  memberId: string;
  clientId: string;
  assignment: TopicPartitions[];
}

export interface GroupInfo {
  group: string;
  /** As in GroupSummary; absent from a broker that predates DescribeGroup version 2. */
  kind?: GroupKindName;
  protocolType?: string;
  state: GroupStateName;
  generation: number;
  strategy: string;
  members: GroupMemberInfo[];
  /** Per partition: owner ("" for none), committed offset and lag (-1 for none). */
  partitions: GroupPartitionDescription[];
}

export interface CommittedOffset {
  topic: string;
  partition: number;
  /** The next offset the group reads; -1 when none was committed. */
  offset: number;
}

/** Where ResetOffsets moves a group: `earliest`, `latest`, an offset, or the first record at or after a time. */
export type ResetPosition = "earliest" | "latest" | { offset: number } | { timestamp: number };

export interface GroupCallOptions {
  signal?: AbortSignal;
}

export class GroupAdmin {
  #manager: ConnectionManager;

  constructor(manager: ConnectionManager) {
    this.#manager = manager;
  }

  /** Every group; against a broker that predates ListGroups version 2, without kinds. */
  async listGroups(call: GroupCallOptions = {}): Promise<GroupSummary[]> {
    const m = this.#manager;
    try {
      const res = await m.request(encodeListGroupsRequestV2, undefined, decodeListGroupsResponseV2, call);
      return res.groups.map((g) => ({
        group: g.group,
        kind: groupKindName(g.kind),
        protocolType: g.protocolType,
        state: groupStateName(g.state),
        members: g.members,
      }));
    } catch (err) {
      if (!olderBroker(err)) throw err;
    }
    const res = await m.request(encodeListGroupsRequest, undefined, decodeListGroupsResponse, call);
    return res.groups.map((g) => ({ group: g.group, state: groupStateName(g.state), members: g.members }));
  }

  /** The group's description; against a broker that predates DescribeGroup version 2, without its kind. */
  async describeGroup(group: string, call: GroupCallOptions = {}): Promise<GroupInfo> {
    const m = this.#manager;
    try {
      const d = await m.request(encodeDescribeGroupRequestV2, { group }, decodeDescribeGroupResponseV2, call);
      return { ...d, kind: groupKindName(d.kind), state: groupStateName(d.state) };
    } catch (err) {
      if (!olderBroker(err)) throw err;
    }
    const d = await m.request(encodeDescribeGroupRequest, { group }, decodeDescribeGroupResponse, call);
    return { ...d, state: groupStateName(d.state) };
  }

  /** Committed offsets of the partitions given, or every one the group has when none are. */
  async fetchOffsets(
    group: string,
    partitions: readonly { topic: string; partition: number }[] = [],
    call: GroupCallOptions = {},
  ): Promise<CommittedOffset[]> {
    const res = await this.#manager.request(
      encodeFetchOffsetsRequest,
      { group, partitions: [...partitions] },
      decodeFetchOffsetsResponse,
      call,
    );
    return res.offsets;
  }

  /**
   * Commits offsets on behalf of no member: for a group without members only (GROUP_NOT_EMPTY
   * otherwise). `offset` is the next offset the group will read.
   */
  async commitOffsets(
    group: string,
    offsets: readonly CommittedOffset[],
    call: GroupCallOptions = {},
  ): Promise<void> {
    await this.#manager.request(
      encodeCommitOffsetsRequest,
      { group, memberId: "", generation: 0, offsets: [...offsets] },
      decodeCommitOffsetsResponse,
      call,
    );
  }

  /** Moves the group's offsets for every partition of `topic`; refused (GROUP_NOT_EMPTY) while it has members. */
  async resetOffsets(
    group: string,
    topic: string,
    to: ResetPosition,
    call: GroupCallOptions = {},
  ): Promise<CommittedOffset[]> {
    const target =
      to === "earliest"
        ? { to: ResetTo.EARLIEST, value: 0 }
        : to === "latest"
          ? { to: ResetTo.LATEST, value: 0 }
          : "offset" in to
            ? { to: ResetTo.OFFSET, value: to.offset }
            : { to: ResetTo.TIMESTAMP, value: to.timestamp };
    const res = await this.#manager.request(
      encodeResetOffsetsRequest,
      { group, topic, ...target },
      decodeResetOffsetsResponse,
      call,
    );
    return res.offsets.map((o) => ({ topic, partition: o.partition, offset: o.offset }));
  }

  /** Deletes a group without members and its committed offsets. */
  async deleteGroup(group: string, call: GroupCallOptions = {}): Promise<void> {
    await this.#manager.request(encodeDeleteGroupRequest, { group }, decodeDeleteGroupResponse, call);
  }
}
