/**
 * Conch's errors as Kafka error codes, at the Kafka front-end's edge: one table for every handler,
 * the data and admin APIs and the group APIs alike, so every handler answers the same failure
 * with the same code, one a Kafka client knows how to act on (retry, refresh metadata, find the
 * coordinator again, give up).
 *
 * What Conch's codes cannot say (a compressed batch, a replication factor other than 1) is thrown
 * as a KafkaRefusal, which carries its Kafka code itself.
 */
import { ConchError, ErrorCode } from "../../format/errors.js";
import { KafkaRefusal } from "../convert/kafka-refusal.js";
import { KafkaErrorCode } from "../protocol/error-codes.js";

export { KafkaRefusal };

const BY_CONCH_CODE = new Map<number, number>([
  [ErrorCode.NONE, KafkaErrorCode.NONE],
  [ErrorCode.MALFORMED_REQUEST, KafkaErrorCode.INVALID_REQUEST],
  [ErrorCode.UNSUPPORTED_VERSION, KafkaErrorCode.UNSUPPORTED_VERSION],
  [ErrorCode.INVALID_TOPIC_NAME, KafkaErrorCode.INVALID_TOPIC_EXCEPTION],
  [ErrorCode.TOPIC_ALREADY_EXISTS, KafkaErrorCode.TOPIC_ALREADY_EXISTS],
  [ErrorCode.UNKNOWN_TOPIC, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
  [ErrorCode.UNKNOWN_PARTITION, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
  [ErrorCode.INVALID_PARTITIONS, KafkaErrorCode.INVALID_PARTITIONS],
  [ErrorCode.INVALID_CONFIG, KafkaErrorCode.INVALID_CONFIG],
  [ErrorCode.INVALID_REPLICATION_FACTOR, KafkaErrorCode.INVALID_REPLICATION_FACTOR],
  [ErrorCode.INVALID_REPLICA_ASSIGNMENT, KafkaErrorCode.INVALID_REPLICA_ASSIGNMENT],
  [ErrorCode.OFFSET_OUT_OF_RANGE, KafkaErrorCode.OFFSET_OUT_OF_RANGE],
  [ErrorCode.CORRUPT_BATCH, KafkaErrorCode.CORRUPT_MESSAGE],
  [ErrorCode.INVALID_BATCH, KafkaErrorCode.CORRUPT_MESSAGE],
  [ErrorCode.CORRUPT_DATA, KafkaErrorCode.CORRUPT_MESSAGE],
  [ErrorCode.UNSUPPORTED_COMPRESSION, KafkaErrorCode.UNSUPPORTED_COMPRESSION_TYPE],
  [ErrorCode.BATCH_TOO_LARGE, KafkaErrorCode.MESSAGE_TOO_LARGE],
  [ErrorCode.FRAME_TOO_LARGE, KafkaErrorCode.MESSAGE_TOO_LARGE],
  [ErrorCode.TIMEOUT, KafkaErrorCode.REQUEST_TIMED_OUT],
  [ErrorCode.STORAGE_ERROR, KafkaErrorCode.KAFKA_STORAGE_ERROR],
  // A client told "not the leader" refreshes its metadata and retries: what a restart needs.
  // (From a group API it is COORDINATOR_NOT_AVAILABLE instead: see kafkaGroupErrorCode.)
  [ErrorCode.SHUTTING_DOWN, KafkaErrorCode.NOT_LEADER_OR_FOLLOWER],
  [ErrorCode.INVALID_REQUEST, KafkaErrorCode.INVALID_REQUEST],
  [ErrorCode.NOT_LEADER, KafkaErrorCode.NOT_LEADER_OR_FOLLOWER],
  [ErrorCode.FENCED_LEADER_EPOCH, KafkaErrorCode.FENCED_LEADER_EPOCH],
  [ErrorCode.NOT_ENOUGH_REPLICAS, KafkaErrorCode.NOT_ENOUGH_REPLICAS],
  [ErrorCode.OFFSET_NOT_AVAILABLE, KafkaErrorCode.OFFSET_NOT_AVAILABLE],
  [ErrorCode.UNKNOWN_MEMBER, KafkaErrorCode.UNKNOWN_MEMBER_ID],
  [ErrorCode.ILLEGAL_GENERATION, KafkaErrorCode.ILLEGAL_GENERATION],
  [ErrorCode.REBALANCE_IN_PROGRESS, KafkaErrorCode.REBALANCE_IN_PROGRESS],
  [ErrorCode.GROUP_NOT_EMPTY, KafkaErrorCode.NON_EMPTY_GROUP],
  [ErrorCode.NOT_COORDINATOR, KafkaErrorCode.NOT_COORDINATOR],
  [ErrorCode.UNKNOWN_GROUP, KafkaErrorCode.GROUP_ID_NOT_FOUND],
  [ErrorCode.INVALID_GROUP, KafkaErrorCode.INVALID_GROUP_ID],
  [ErrorCode.INCONSISTENT_GROUP_PROTOCOL, KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL],
  [ErrorCode.INVALID_SESSION_TIMEOUT, KafkaErrorCode.INVALID_SESSION_TIMEOUT],
  [ErrorCode.AUTHENTICATION_FAILED, KafkaErrorCode.SASL_AUTHENTICATION_FAILED],
  [ErrorCode.ILLEGAL_SASL_STATE, KafkaErrorCode.ILLEGAL_SASL_STATE],
  [ErrorCode.UNSUPPORTED_SASL_MECHANISM, KafkaErrorCode.UNSUPPORTED_SASL_MECHANISM],
  [ErrorCode.TOPIC_AUTHORIZATION_FAILED, KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED],
  [ErrorCode.GROUP_AUTHORIZATION_FAILED, KafkaErrorCode.GROUP_AUTHORIZATION_FAILED],
  [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, KafkaErrorCode.CLUSTER_AUTHORIZATION_FAILED],
  [ErrorCode.OUT_OF_ORDER_SEQUENCE, KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER],
  [ErrorCode.INVALID_PRODUCER_EPOCH, KafkaErrorCode.INVALID_PRODUCER_EPOCH],
  [ErrorCode.UNKNOWN_PRODUCER_ID, KafkaErrorCode.UNKNOWN_PRODUCER_ID],
]);

/** The Kafka error code for `err`: UNKNOWN_SERVER_ERROR for anything that is not a ConchError. */
export function kafkaErrorCode(err: unknown): number {
  if (err instanceof KafkaRefusal) return err.kafkaCode;
  if (err instanceof ConchError) return BY_CONCH_CODE.get(err.code) ?? KafkaErrorCode.UNKNOWN_SERVER_ERROR;
  return KafkaErrorCode.UNKNOWN_SERVER_ERROR;
}

/**
 * The Kafka error code for a ConchError a group API's coordinator call threw: the table above,
 * except that a stopping broker is COORDINATOR_NOT_AVAILABLE, on which a group member looks for
 * the coordinator again and retries. Anything but a ConchError is a bug: it is thrown on, for the
 * session to log and close the connection.
 */
export function kafkaGroupErrorCode(err: unknown): number {
  if (!(err instanceof ConchError)) throw err;
  if (err.code === ErrorCode.SHUTTING_DOWN) return KafkaErrorCode.COORDINATOR_NOT_AVAILABLE;
  return kafkaErrorCode(err);
}

/** A message for a Kafka response's error_message field: a ConchError's own, else a generic one. */
export function kafkaErrorMessage(err: unknown): string {
  return err instanceof ConchError ? err.message : "internal broker error";
}
