/**
 * The requests the group coordinator takes, in domain values (the native and Kafka handlers map
 * the wire to these), with the limits on their fields and the checks of them.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export interface JoinGroupRequest {
  group: string;
  /** "" for a new member. */
  memberId: string;
  clientId: string;
  topics: readonly string[];
  strategy: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
}

/** A Kafka JoinGroup, in domain values (the Kafka handler maps the wire to these). */
export interface KafkaJoinRequest {
  group: string;
  /** "" for a new member. */
  memberId: string;
  clientId: string;
  protocolType: string;
  protocols: readonly { name: string; metadata: Uint8Array }[];
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  /** A new member is given an id to join again with (JoinGroup v4+). */
  requireKnownMemberId: boolean;
}

export interface KafkaSyncRequest {
  group: string;
  memberId: string;
  generation: number;
  /** The leader's: each member's assignment; empty from the others. */
  assignments: readonly { memberId: string; assignment: Uint8Array }[];
}

export type ResetTarget =
  | { to: "earliest" }
  | { to: "latest" }
  | { to: "timestamp"; timestampMs: number }
  | { to: "offset"; offset: number };

export const MIN_GROUP_TIMEOUT_MS = 100;
export const MAX_GROUP_TIMEOUT_MS = 60 * 60 * 1000;
const MAX_GROUP_NAME_BYTES = 255;

export function checkGroupName(group: string): void {
  const bytes = Buffer.byteLength(group);
  if (bytes === 0 || bytes > MAX_GROUP_NAME_BYTES) {
    throw new ConchError(ErrorCode.INVALID_GROUP, `group names are 1 to ${MAX_GROUP_NAME_BYTES} bytes long`);
  }
}

/** A Kafka timeout outside the range: INVALID_SESSION_TIMEOUT, as Kafka answers. */
export function checkTimeout(which: string, ms: number, max: number): number {
  if (!Number.isInteger(ms) || ms < MIN_GROUP_TIMEOUT_MS || ms > max) {
    throw new ConchError(
      ErrorCode.INVALID_SESSION_TIMEOUT,
      `the ${which} timeout must be from ${MIN_GROUP_TIMEOUT_MS} to ${max} ms, not ${ms}`,
    );
  }
  return ms;
}
