/**
 * Consumer group administration (docs/groups.md): list, describe, read and reset committed
 * offsets, delete. One request each, on a connection the caller owns.
 */
import { decodeCommitOffsetsResponse, encodeCommitOffsetsRequest } from "../protocol/commit-offsets.js";
import { decodeDeleteGroupResponse, encodeDeleteGroupRequest } from "../protocol/delete-group.js";
import {
  decodeDescribeGroupResponse,
  encodeDescribeGroupRequest,
  type GroupPartitionDescription,
} from "../protocol/describe-group.js";
import { decodeFetchOffsetsResponse, encodeFetchOffsetsRequest } from "../protocol/fetch-offsets.js";
import type { TopicPartitions } from "../protocol/group-assignment.js";
import { type GroupStateName, groupStateName } from "../protocol/group-state.js";
import { decodeListGroupsResponse, encodeListGroupsRequest } from "../protocol/list-groups.js";
import { decodeResetOffsetsResponse, encodeResetOffsetsRequest, ResetTo } from "../protocol/reset-offsets.js";
import type { ConnectionManager } from "./connection-manager.js";

export type { GroupPartitionDescription } from "../protocol/describe-group.js";
export type { TopicPartitions } from "../protocol/group-assignment.js";
export type { GroupStateName } from "../protocol/group-state.js";

export interface GroupSummary {
  group: string;
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

  async listGroups(call: GroupCallOptions = {}): Promise<GroupSummary[]> {
    const res = await this.#manager.request(
      encodeListGroupsRequest,
      undefined,
      decodeListGroupsResponse,
      call,
    );
    return res.groups.map((g) => ({ group: g.group, state: groupStateName(g.state), members: g.members }));
  }

  async describeGroup(group: string, call: GroupCallOptions = {}): Promise<GroupInfo> {
    const d = await this.#manager.request(
      encodeDescribeGroupRequest,
      { group },
      decodeDescribeGroupResponse,
      call,
    );
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
