/**
 * Stable error codes shared by every layer and sent on the wire (docs/protocol.md).
 * Numbers never change meaning; new codes are only ever added.
 */
export const ErrorCode = {
  NONE: 0,
  INTERNAL: 1,
  MALFORMED_REQUEST: 2,
  UNSUPPORTED_VERSION: 3,
  UNKNOWN_API: 4,
  HANDSHAKE_REQUIRED: 5,
  INVALID_TOPIC_NAME: 6,
  TOPIC_ALREADY_EXISTS: 7,
  UNKNOWN_TOPIC: 8,
  UNKNOWN_PARTITION: 9,
  INVALID_PARTITIONS: 10,
  INVALID_CONFIG: 11,
  OFFSET_OUT_OF_RANGE: 12,
  CORRUPT_BATCH: 13,
  INVALID_BATCH: 14,
  BATCH_TOO_LARGE: 15,
  FRAME_TOO_LARGE: 16,
  TIMEOUT: 17,
  STORAGE_ERROR: 18,
  SHUTTING_DOWN: 19,
  TOO_MANY_CONNECTIONS: 20,
  INVALID_REQUEST: 21,
  /** Stored data failed its check (a quarantined range); reading it again gives the same answer. */
  CORRUPT_DATA: 22,
  /** A batch's compression codec is unknown, or its library is not installed here. */
  UNSUPPORTED_COMPRESSION: 23,
  UNKNOWN_MEMBER: 30,
  ILLEGAL_GENERATION: 31,
  REBALANCE_IN_PROGRESS: 32,
  GROUP_NOT_EMPTY: 33,
  NOT_COORDINATOR: 34,
  UNKNOWN_GROUP: 35,
  INVALID_GROUP: 36,
  /** A member of one kind of group (native, Kafka) joins a group of the other, or shares no protocol with it. */
  INCONSISTENT_GROUP_PROTOCOL: 37,
  /** A Kafka member's session or rebalance timeout is outside the broker's range. */
  INVALID_SESSION_TIMEOUT: 38,
  // 40-49: security (docs/security.md).
  /** Bad credentials, unknown user, or a SASL message that does not parse; one answer for all. */
  AUTHENTICATION_FAILED: 40,
  /** A request the connection's authentication state does not allow (anything before it is done). */
  ILLEGAL_SASL_STATE: 41,
  UNSUPPORTED_SASL_MECHANISM: 42,
  TOPIC_AUTHORIZATION_FAILED: 43,
  GROUP_AUTHORIZATION_FAILED: 44,
  CLUSTER_AUTHORIZATION_FAILED: 45,
  USER_ALREADY_EXISTS: 46,
  UNKNOWN_USER: 47,
  // 50-59: replication (docs/cluster.md); all retriable: refresh metadata and try again.
  /** This broker does not lead the partition (it follows, or holds no replica): ask another. */
  NOT_LEADER: 50,
  /** The request's leader epoch is older than this replica's (or newer: it has not caught up). */
  FENCED_LEADER_EPOCH: 51,
  /** acks "all" with fewer in-sync replicas than the topic's min.insync.replicas. */
  NOT_ENOUGH_REPLICAS: 52,
  /** The offset is in the log but not yet replicated (between the high watermark and the log end). */
  OFFSET_NOT_AVAILABLE: 53,

  // 60-69: cluster metadata (docs/cluster.md).
  /** A replication factor below 1, or above the number of live brokers (1 on a single-node broker). */
  INVALID_REPLICATION_FACTOR: 60,
  /** A replica list that names a broker twice, no broker, or a broker that is not registered. */
  INVALID_REPLICA_ASSIGNMENT: 61,

  // 70-79: idempotent producers (docs/protocol.md).
  /** A batch's sequence number is not the one after the producer's last stored batch. */
  OUT_OF_ORDER_SEQUENCE: 70,
  /** A batch carries an older epoch than the partition has seen for its producer id: it is fenced. */
  INVALID_PRODUCER_EPOCH: 71,
  /** The partition has no state for the producer id (never seen, or expired) and the sequence is not 0. */
  UNKNOWN_PRODUCER_ID: 72,
  // Client-side only: never sent by a broker.
  CONNECTION_CLOSED: 100,
  ABORTED: 101,
  /** A producer's queue of sends waiting for buffer memory is full; retry once sends complete. */
  BUFFER_FULL: 102,
  /** The TLS handshake failed: the broker's certificate is not trusted, or it refused ours. */
  TLS_FAILED: 103,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;
export type ErrorCodeNumber = (typeof ErrorCode)[ErrorCodeName];

const namesByNumber = new Map<number, ErrorCodeName>(
  (Object.keys(ErrorCode) as ErrorCodeName[]).map((name) => [ErrorCode[name], name]),
);

/** The name of a numeric code, or `UNKNOWN_<n>` for a code this version does not know. */
export function errorName(code: number): string {
  return namesByNumber.get(code) ?? `UNKNOWN_${code}`;
}

/** Whether a retry of the same request may succeed. */
export function isRetriable(code: number): boolean {
  return (
    code === ErrorCode.TIMEOUT ||
    code === ErrorCode.SHUTTING_DOWN ||
    code === ErrorCode.CONNECTION_CLOSED ||
    code === ErrorCode.REBALANCE_IN_PROGRESS ||
    code === ErrorCode.NOT_COORDINATOR ||
    code === ErrorCode.BUFFER_FULL ||
    (code >= ErrorCode.NOT_LEADER && code <= ErrorCode.OFFSET_NOT_AVAILABLE)
  );
}

/** The one error class of Conch: a stable numeric `code`, its `codeName`, and a one-line message. */
export class ConchError extends Error {
  readonly code: number;
  readonly codeName: string;

  constructor(code: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConchError";
    this.code = code;
    this.codeName = errorName(code);
  }

  get retriable(): boolean {
    return isRetriable(this.code);
  }
}
