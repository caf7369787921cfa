/**
 * Consumer group administration (docs/groups.md): list, describe, read and reset committed
 * offsets, delete. A request about one group goes to its coordinator (CoordinatorLink: the
 * bootstrap connection on a single node); a listing asks every broker of a cluster, since each
 * lists the groups it coordinates, and merges their answers (docs/cluster.md).
 */

import { setTimeout as delay } from "node:timers/promises";
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
import { decodeMetadataResponse, encodeMetadataRequest } from "../protocol/metadata.js";
import { decodeResetOffsetsResponse, encodeResetOffsetsRequest, ResetTo } from "../protocol/reset-offsets.js";
import { formatAddress } from "./address.js";
import type { Decoder, Encoder } from "./connection.js";
import { ConnectionManager, type ConnectionManagerOptions } from "./connection-manager.js";
import { CoordinatorLink } from "./coordinator-link.js";

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

/** How often a request about a group is sent while its coordinator moves, and the pause that grows between. */
const COORDINATOR_TRIES = 5;
const COORDINATOR_RETRY_MS = 200;

/** What a group request is sent through: the bootstrap connection, or a group's coordinator. */
interface Requester {
  request<A, T>(encode: Encoder<A>, arg: A, decode: Decoder<T>, options?: GroupCallOptions): Promise<T>;
}

export class GroupAdmin {
  #manager: ConnectionManager;
  /** For connections to coordinators and other brokers; without them every request goes to `manager`. */
  #options: ConnectionManagerOptions | undefined;

  /** `manager` stays the caller's to close. */
  constructor(manager: ConnectionManager, options?: ConnectionManagerOptions) {
    this.#manager = manager;
    this.#options = options;
  }

  /**
   * Every group (in a cluster, those of every live broker); against a broker that predates
   * ListGroups version 2, without kinds.
   */
  async listGroups(call: GroupCallOptions = {}): Promise<GroupSummary[]> {
    const others = await this.#otherBrokers(call);
    if (others.length === 0) return this.#listGroupsOf(this.#manager, call);
    const managers = others.map(
      (address) => new ConnectionManager({ ...this.#options!, brokers: [address] }),
    );
    try {
      const lists = await Promise.all(managers.map((m) => this.#listGroupsOf(m, call)));
      // A group moving between coordinators may be listed twice for a moment: once is enough.
      const merged = new Map<string, GroupSummary>();
      for (const list of lists) for (const g of list) if (!merged.has(g.group)) merged.set(g.group, g);
      return [...merged.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
    } finally {
      for (const m of managers) m.close();
    }
  }

  /** The native listeners of every live broker of a cluster; none on a single node (or without `options`). */
  async #otherBrokers(call: GroupCallOptions): Promise<string[]> {
    if (this.#options === undefined) return [];
    let brokers: readonly { host: string; port: number }[];
    try {
      brokers = (await this.#manager.request(encodeMetadataRequest, [], decodeMetadataResponse, call))
        .brokers;
    } catch (err) {
      if (err instanceof ConchError && err.code === ErrorCode.UNKNOWN_API) return [];
      throw err;
    }
    return brokers.filter((b) => b.host !== "").map((b) => formatAddress({ host: b.host, port: b.port }));
  }

  /**
   * Runs `fn` with the group's coordinator (the bootstrap connection when there is no `options`),
   * again with the coordinator found anew while it moves (NOT_COORDINATOR), a few times.
   */
  async #withCoordinator<T>(group: string, fn: (r: Requester) => Promise<T>): Promise<T> {
    if (this.#options === undefined) return fn(this.#manager);
    const link = new CoordinatorLink(this.#manager, this.#options, group);
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return await fn(link);
        } catch (err) {
          if (
            !(err instanceof ConchError && err.code === ErrorCode.NOT_COORDINATOR) ||
            attempt >= COORDINATOR_TRIES
          )
            throw err;
        }
        await delay(COORDINATOR_RETRY_MS * attempt);
      }
    } finally {
      link.close();
    }
  }

  async #listGroupsOf(m: ConnectionManager, call: GroupCallOptions): Promise<GroupSummary[]> {
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
  describeGroup(group: string, call: GroupCallOptions = {}): Promise<GroupInfo> {
    return this.#withCoordinator(group, async (m) => {
      try {
        const d = await m.request(
          encodeDescribeGroupRequestV2,
          { group },
          decodeDescribeGroupResponseV2,
          call,
        );
        return { ...d, kind: groupKindName(d.kind), state: groupStateName(d.state) };
      } catch (err) {
        if (!olderBroker(err)) throw err;
      }
      const d = await m.request(encodeDescribeGroupRequest, { group }, decodeDescribeGroupResponse, call);
      return { ...d, state: groupStateName(d.state) };
    });
  }

  /** Committed offsets of the partitions given, or every one the group has when none are. */
  async fetchOffsets(
    group: string,
    partitions: readonly { topic: string; partition: number }[] = [],
    call: GroupCallOptions = {},
  ): Promise<CommittedOffset[]> {
    const res = await this.#withCoordinator(group, (m) =>
      m.request(
        encodeFetchOffsetsRequest,
        { group, partitions: [...partitions] },
        decodeFetchOffsetsResponse,
        call,
      ),
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
    await this.#withCoordinator(group, (m) =>
      m.request(
        encodeCommitOffsetsRequest,
        { group, memberId: "", generation: 0, offsets: [...offsets] },
        decodeCommitOffsetsResponse,
        call,
      ),
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
    const res = await this.#withCoordinator(group, (m) =>
      m.request(encodeResetOffsetsRequest, { group, topic, ...target }, decodeResetOffsetsResponse, call),
    );
    return res.offsets.map((o) => ({ topic, partition: o.partition, offset: o.offset }));
  }

  /** Deletes a group without members and its committed offsets. */
  async deleteGroup(group: string, call: GroupCallOptions = {}): Promise<void> {
    await this.#withCoordinator(group, (m) =>
      m.request(encodeDeleteGroupRequest, { group }, decodeDeleteGroupResponse, call),
    );
  }
}
