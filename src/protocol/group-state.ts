/**
 * The states of a consumer group on the wire (ListGroups, DescribeGroup), as u8 numbers. Numbers
 * never change meaning; new ones are only ever added.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export const GroupState = {
  /** No members; the group may still hold committed offsets. */
  EMPTY: 0,
  /** Waiting for the members to (re)join before a new assignment. */
  PREPARING_REBALANCE: 1,
  /** Every member has its assignment for the current generation. */
  STABLE: 2,
  /** A Kafka group whose members rejoined, waiting for its leader's assignment (SyncGroup). */
  COMPLETING_REBALANCE: 3,
} as const;
export type GroupStateValue = (typeof GroupState)[keyof typeof GroupState];

const NAMES = ["Empty", "PreparingRebalance", "Stable", "CompletingRebalance"] as const;
export type GroupStateName = (typeof NAMES)[number];

export function groupStateName(state: GroupStateValue): GroupStateName {
  return NAMES[state];
}

/** A state byte read from the wire; anything unknown is malformed. */
export function groupStateFromWire(n: number): GroupStateValue {
  if (n > GroupState.COMPLETING_REBALANCE) {
    throw new ConchError(ErrorCode.MALFORMED_REQUEST, `malformed response: group state ${n}`);
  }
  return n as GroupStateValue;
}
