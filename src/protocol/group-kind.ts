/**
 * The kinds of consumer group on the wire (ListGroups and DescribeGroup version 2), as u8 numbers.
 * Numbers never change meaning; new ones are only ever added, with a new version of both requests.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export const GroupKind = {
  /** Conch's own clients; the broker assigns the partitions. */
  NATIVE: 0,
  /** Kafka clients on the Kafka listener; the leader member assigns the partitions. */
  KAFKA: 1,
} as const;
export type GroupKindValue = (typeof GroupKind)[keyof typeof GroupKind];

const NAMES = ["native", "kafka"] as const;
export type GroupKindName = (typeof NAMES)[number];

export function groupKindName(kind: GroupKindValue): GroupKindName {
  return NAMES[kind];
}

export function groupKindValue(name: GroupKindName): GroupKindValue {
  return name === "kafka" ? GroupKind.KAFKA : GroupKind.NATIVE;
}

/** A kind byte read from the wire; anything unknown is malformed. */
export function groupKindFromWire(n: number): GroupKindValue {
  if (n > GroupKind.KAFKA) {
    throw new ConchError(ErrorCode.MALFORMED_REQUEST, `malformed response: group kind ${n}`);
  }
  return n as GroupKindValue;
}
