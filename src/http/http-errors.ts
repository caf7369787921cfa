/**
 * How an error becomes an HTTP answer: the status that fits its ConchError code, and a JSON body
 * carrying the stable code name (docs/http-api.md, errors) so programs can branch on it.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

const STATUS_BY_CODE = new Map<number, number>([
  [ErrorCode.MALFORMED_REQUEST, 400],
  [ErrorCode.INVALID_REQUEST, 400],
  [ErrorCode.INVALID_TOPIC_NAME, 400],
  [ErrorCode.INVALID_PARTITIONS, 400],
  [ErrorCode.INVALID_REPLICATION_FACTOR, 400],
  [ErrorCode.INVALID_REPLICA_ASSIGNMENT, 400],
  [ErrorCode.INVALID_CONFIG, 400],
  [ErrorCode.INVALID_GROUP, 400],
  [ErrorCode.OFFSET_OUT_OF_RANGE, 400],
  [ErrorCode.UNKNOWN_API, 404],
  [ErrorCode.UNKNOWN_TOPIC, 404],
  [ErrorCode.UNKNOWN_PARTITION, 404],
  [ErrorCode.UNKNOWN_GROUP, 404],
  [ErrorCode.TOPIC_ALREADY_EXISTS, 409],
  [ErrorCode.USER_ALREADY_EXISTS, 409],
  [ErrorCode.UNKNOWN_USER, 404],
  [ErrorCode.GROUP_NOT_EMPTY, 409],
  [ErrorCode.REBALANCE_IN_PROGRESS, 409],
  [ErrorCode.AUTHENTICATION_FAILED, 401],
  [ErrorCode.TOPIC_AUTHORIZATION_FAILED, 403],
  [ErrorCode.GROUP_AUTHORIZATION_FAILED, 403],
  [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 403],
  [ErrorCode.FRAME_TOO_LARGE, 413],
  [ErrorCode.TIMEOUT, 504],
  [ErrorCode.SHUTTING_DOWN, 503],
  [ErrorCode.TOO_MANY_CONNECTIONS, 503],
]);

export interface ErrorBody {
  error: { code: string; message: string };
}

/** The HTTP status for `err`: 500 for anything that is not a ConchError with a mapped code. */
export function statusFor(err: unknown): number {
  if (err instanceof ConchError) return STATUS_BY_CODE.get(err.code) ?? 500;
  return 500;
}

/** The JSON body for `err`. Only a ConchError's message is shown: others may hold internals. */
export function errorBody(err: unknown): ErrorBody {
  if (err instanceof ConchError) return { error: { code: err.codeName, message: err.message } };
  return { error: { code: "INTERNAL", message: "internal error; see the broker's log" } };
}

export function badRequest(message: string): ConchError {
  return new ConchError(ErrorCode.INVALID_REQUEST, message);
}
