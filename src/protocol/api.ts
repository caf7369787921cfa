/**
 * The numbers of the wire protocol (docs/protocol.md): API keys, versions, acks and ListOffsets specs,
 * and the frame size limits. Numbers never change meaning; new ones are only ever added.
 */

export const ApiKey = {
  HANDSHAKE: 0,
  CREATE_TOPIC: 1,
  DELETE_TOPIC: 2,
  LIST_TOPICS: 3,
  DESCRIBE_TOPIC: 4,
  PRODUCE: 5,
  FETCH: 6,
  LIST_OFFSETS: 7,
  ALTER_TOPIC: 8,
  // Fetch streams (docs/protocol.md): the broker pushes fetch responses as data arrives.
  FETCH_STREAM: 9,
  STREAM_CREDIT: 10,
  STREAM_CANCEL: 11,
  CREATE_PARTITIONS: 12,
  // SASL login (docs/security.md), after the handshake.
  SASL_HANDSHAKE: 13,
  SASL_AUTHENTICATE: 14,
  // Cluster mode (docs/cluster.md): a follower's fetch stream from its partition's leader.
  REPLICA_FETCH: 19,

  // Cluster mode (docs/cluster.md): brokers, and each partition's leader, epoch, replicas and ISR.
  METADATA: 16,
  /** Moves partitions to new replica lists (cluster mode). */
  REASSIGN_PARTITIONS: 17,
  /** An idempotent producer's id (docs/protocol.md). */
  INIT_PRODUCER_ID: 15,
  // Consumer groups (docs/groups.md).
  JOIN_GROUP: 20,
  HEARTBEAT: 21,
  LEAVE_GROUP: 22,
  COMMIT_OFFSETS: 23,
  FETCH_OFFSETS: 24,
  LIST_GROUPS: 25,
  DESCRIBE_GROUP: 26,
  RESET_OFFSETS: 27,
  DELETE_GROUP: 28,
  /** Cluster mode (docs/cluster.md): which broker coordinates a group. */
  FIND_COORDINATOR: 29,
} as const;

export type ApiKeyName = keyof typeof ApiKey;
export type ApiKeyNumber = (typeof ApiKey)[ApiKeyName];

/** API keys 20-29 belong to consumer groups. */
export const GROUP_API_KEY_FIRST = 20;
export const GROUP_API_KEY_LAST = 29;

/**
 * The protocol versions this codec speaks, negotiated by the handshake. A version names what a
 * broker serves beyond the one before it; a client that agreed to a lower one sends only what that
 * one has. Version 2: Produce version 2, many partitions in one request (produce-v2.ts). Version
 * 3: Produce version 3, one partitioned batch for many partitions (produce-v3.ts).
 */
export const PROTOCOL_MIN_VERSION = 1;
export const PROTOCOL_MAX_VERSION = 3;

/** The protocol version from which a broker serves Produce version 2. */
export const MULTI_PRODUCE_PROTOCOL_VERSION = 2;
/** The protocol version from which a broker serves Produce version 3. */
export const PARTITIONED_PRODUCE_PROTOCOL_VERSION = 3;

/**
 * The apiVersion of each request, by apiKey. Every request is at version 1; a request type gains a
 * new version (and a new file) only when its bytes change.
 */
export const API_VERSION: Readonly<Record<ApiKeyNumber, number>> = {
  [ApiKey.HANDSHAKE]: 1,
  [ApiKey.CREATE_TOPIC]: 1,
  [ApiKey.DELETE_TOPIC]: 1,
  [ApiKey.LIST_TOPICS]: 1,
  [ApiKey.DESCRIBE_TOPIC]: 1,
  [ApiKey.PRODUCE]: 1,
  [ApiKey.FETCH]: 1,
  [ApiKey.LIST_OFFSETS]: 1,
  [ApiKey.ALTER_TOPIC]: 1,
  [ApiKey.FETCH_STREAM]: 1,
  [ApiKey.STREAM_CREDIT]: 1,
  [ApiKey.STREAM_CANCEL]: 1,
  [ApiKey.CREATE_PARTITIONS]: 1,
  [ApiKey.SASL_HANDSHAKE]: 1,
  [ApiKey.SASL_AUTHENTICATE]: 1,
  [ApiKey.REPLICA_FETCH]: 1,

  [ApiKey.METADATA]: 1,
  [ApiKey.REASSIGN_PARTITIONS]: 1,
  [ApiKey.INIT_PRODUCER_ID]: 1,
  [ApiKey.JOIN_GROUP]: 1,
  [ApiKey.HEARTBEAT]: 1,
  [ApiKey.LEAVE_GROUP]: 1,
  [ApiKey.COMMIT_OFFSETS]: 1,
  [ApiKey.FETCH_OFFSETS]: 1,
  [ApiKey.LIST_GROUPS]: 1,
  [ApiKey.DESCRIBE_GROUP]: 1,
  [ApiKey.RESET_OFFSETS]: 1,
  [ApiKey.DELETE_GROUP]: 1,
  [ApiKey.FIND_COORDINATOR]: 1,
};

/**
 * Fetch version 2 adds the fields of a group member fetching as a partition's owner. A fetch
 * without a group is still sent at version 1, so a client works with brokers that predate groups.
 */
export const FETCH_GROUP_VERSION = 2;

/**
 * DescribeTopic version 2 adds each partition's quarantined ranges. The broker still answers
 * version 1 as before; a client falls back to it against a broker that predates version 2.
 */
export const DESCRIBE_TOPIC_QUARANTINE_VERSION = 2;

/**
 * DescribeTopic version 3 adds each partition's leader, replicas and ISR, and says whether its
 * offsets are known (cluster mode asks them of the leaders). Versions 1 and 2 stay served.
 */
export const DESCRIBE_TOPIC_LEADERS_VERSION = 3;

/**
 * ListGroups and DescribeGroup version 2 add each group's kind (native or Kafka) and protocol type.
 * The broker still answers version 1 as before; a client falls back to it against an older broker.
 */
export const GROUP_KIND_VERSION = 2;

const apiNames = new Map<number, string>(Object.entries(ApiKey).map(([name, key]) => [key, name]));

/** The name of an apiKey (`PRODUCE`), or `API_<n>` for one this version does not know. */
export function apiName(apiKey: number): string {
  return apiNames.get(apiKey) ?? `API_${apiKey}`;
}

/** Produce `acks`: when the broker answers. */
export const Acks = {
  /** No response at all, success or failure. */
  NONE: 0,
  /** Once appended per the partition's flush policy. */
  LEADER: 1,
  /** After an fsync covering the batches. */
  DURABLE: 2,
  /** Once every in-sync replica has the batches (cluster mode; on a single node, as LEADER). */
  ALL: 3,
} as const;
export type AcksValue = (typeof Acks)[keyof typeof Acks];

/** ListOffsets `spec`: which offset to look up. */
export const OffsetSpec = {
  /** The log start offset. */
  EARLIEST: 0,
  /** The high watermark. */
  LATEST: 1,
  /** The first offset whose record timestamp is >= the given timestamp. */
  TIMESTAMP: 2,
} as const;
export type OffsetSpecValue = (typeof OffsetSpec)[keyof typeof OffsetSpec];

/** Bytes of the frame size field, which counts the bytes that follow it. */
export const SIZE_FIELD_BYTES = 4;
/** apiKey u16 | apiVersion u16 | correlationId u32, after the size field. */
export const REQUEST_HEADER_BYTES = 8;
/** correlationId u32 | errorCode u16, after the size field. */
export const RESPONSE_HEADER_BYTES = 6;

export const DEFAULT_MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** Room in a frame for everything but the records: header, topic name, other fields. */
export const FRAME_OVERHEAD_BYTES = 64 * 1024;

/** The largest frame (size field value) a broker accepts for a given maximum batch size. */
export function maxFrameBytesFor(maxBatchBytes: number): number {
  return maxBatchBytes + FRAME_OVERHEAD_BYTES;
}
