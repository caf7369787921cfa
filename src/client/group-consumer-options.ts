/**
 * What a GroupConsumer can be told (docs/groups.md, "The client"), the defaults, the checks, and
 * how the options split between the group membership and the Consumer that fetches.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { ConsumerOptions, TopicPartition } from "./consumer.js";
import { type GroupStrategy, groupStrategy, type MembershipSettings } from "./group-membership.js";
import { type ClientOptions, connectionManagerOptions, durationOption, integerOption } from "./options.js";

export interface GroupConsumerOptions
  extends Omit<ConsumerOptions, "partitions" | "topics" | "from" | "resetPolicy" | "member"> {
  /** The group to join. */
  group: string;
  /** The topics the group's members share. */
  topics: readonly string[];
  /** How partitions are shared; the group uses the strategy most members ask for. Default "range". */
  strategy?: GroupStrategy;
  /** Commit processed positions every `autoCommitIntervalMs`, before a rebalance and at close. Default true. */
  autoCommit?: boolean;
  /** Default 5000. */
  autoCommitIntervalMs?: number;
  /** Where a partition starts when the group has committed nothing for it. Default "earliest". */
  resetPolicy?: "earliest" | "latest";
  /** The broker drops a member it has not heard from for this long. Default 10 000 (100..3 600 000). */
  sessionTimeoutMs?: number;
  /** How long a rebalance waits for the members to rejoin. Default `sessionTimeoutMs`. */
  rebalanceTimeoutMs?: number;
  /** Default a third of `sessionTimeoutMs`. */
  heartbeatIntervalMs?: number;
}

export interface RebalanceEvent {
  generation: number;
  memberId: string;
  /** This member's partitions in the new generation. */
  partitions: TopicPartition[];
}

export interface OffsetResetEvent {
  topic: string;
  partition: number;
  /** The committed offset, no longer in the log. */
  committed: number;
  /** Where the partition starts instead: the earliest offset still stored. */
  offset: number;
}

/**
 * The events of a GroupConsumer and their arguments, for its typed `on` / `once` / `emit`.
 * On a rebalance, "revoked" comes first (what this member stops reading, before the new
 * positions are looked up), then "assigned" (what it starts reading), then "rebalance".
 */
export interface GroupConsumerEvents {
  /** Partitions new to this member, each starting after the group's commit for it. */
  assigned: [partitions: TopicPartition[]];
  /** Partitions this member no longer reads (moved to another member, or the member must rejoin). */
  revoked: [partitions: TopicPartition[]];
  rebalance: [event: RebalanceEvent];
  offsetReset: [event: OffsetResetEvent];
  /** An automatic commit (on the timer, before a rebalance, at close) failed. */
  commitFailed: [error: ConchError];
}

export interface GroupSettings {
  membership: MembershipSettings;
  autoCommit: boolean;
  autoCommitIntervalMs: number;
  resetPolicy: "earliest" | "latest";
  /** For the Consumer: fetch sizes, waits and backoff. */
  fetch: ConsumerOptions;
}

const MAX_TIMEOUT_MS = 3_600_000;

/** Checks the options (ConchError INVALID_GROUP / INVALID_REQUEST) and fills in the defaults. */
export function groupSettings(client: ClientOptions, options: GroupConsumerOptions): GroupSettings {
  if (typeof options.group !== "string" || options.group === "") {
    throw new ConchError(ErrorCode.INVALID_GROUP, "a group consumer needs a group name");
  }
  if (options.topics.length === 0) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, "a group consumer needs at least one topic");
  }
  const resetPolicy = options.resetPolicy ?? "earliest";
  if (resetPolicy !== "earliest" && resetPolicy !== "latest") {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `resetPolicy must be "earliest" or "latest"`);
  }
  const session = integerOption("sessionTimeoutMs", options.sessionTimeoutMs, 10_000, 100, MAX_TIMEOUT_MS);
  const {
    group,
    topics,
    strategy,
    autoCommit,
    autoCommitIntervalMs,
    resetPolicy: _r,
    sessionTimeoutMs: _s,
    rebalanceTimeoutMs,
    heartbeatIntervalMs,
    signal: _signal,
    ...fetch
  } = options;
  return {
    membership: {
      group,
      clientId: connectionManagerOptions(client).clientId,
      topics: [...topics],
      strategy: groupStrategy(strategy),
      sessionTimeoutMs: session,
      rebalanceTimeoutMs: integerOption(
        "rebalanceTimeoutMs",
        rebalanceTimeoutMs,
        session,
        100,
        MAX_TIMEOUT_MS,
      ),
      heartbeatIntervalMs: integerOption(
        "heartbeatIntervalMs",
        heartbeatIntervalMs,
        Math.max(1, Math.floor(session / 3)),
        1,
        session,
      ),
      retryBackoffMs: durationOption("retryBackoffMs", options.retryBackoffMs, 100, 1),
      retryBackoffMaxMs: durationOption("retryBackoffMaxMs", options.retryBackoffMaxMs, 2000, 1),
    },
    autoCommit: autoCommit ?? true,
    autoCommitIntervalMs: durationOption("autoCommitIntervalMs", autoCommitIntervalMs, 5000, 1),
    resetPolicy,
    fetch,
  };
}
