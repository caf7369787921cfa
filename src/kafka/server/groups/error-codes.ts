/**
 * The one mapping from Conch's domain errors to Kafka's error codes for the group APIs. The
 * coordinator speaks ConchError; only the Kafka handlers know Kafka's numbers.
 */
import { ConchError, ErrorCode } from "../../../format/errors.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";

const TO_KAFKA = new Map<number, number>([
  [ErrorCode.UNKNOWN_MEMBER, KafkaErrorCode.UNKNOWN_MEMBER_ID],
  [ErrorCode.ILLEGAL_GENERATION, KafkaErrorCode.ILLEGAL_GENERATION],
  [ErrorCode.REBALANCE_IN_PROGRESS, KafkaErrorCode.REBALANCE_IN_PROGRESS],
  [ErrorCode.NOT_COORDINATOR, KafkaErrorCode.NOT_COORDINATOR],
  // A broker that is stopping: the client looks for the coordinator again and retries.
  [ErrorCode.SHUTTING_DOWN, KafkaErrorCode.COORDINATOR_NOT_AVAILABLE],
  [ErrorCode.INVALID_GROUP, KafkaErrorCode.INVALID_GROUP_ID],
  [ErrorCode.INCONSISTENT_GROUP_PROTOCOL, KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL],
  [ErrorCode.INVALID_SESSION_TIMEOUT, KafkaErrorCode.INVALID_SESSION_TIMEOUT],
  [ErrorCode.GROUP_NOT_EMPTY, KafkaErrorCode.NON_EMPTY_GROUP],
  [ErrorCode.UNKNOWN_GROUP, KafkaErrorCode.GROUP_ID_NOT_FOUND],
  [ErrorCode.UNKNOWN_TOPIC, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
  [ErrorCode.UNKNOWN_PARTITION, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
  [ErrorCode.INVALID_TOPIC_NAME, KafkaErrorCode.INVALID_TOPIC_EXCEPTION],
  [ErrorCode.INVALID_REQUEST, KafkaErrorCode.INVALID_REQUEST],
  [ErrorCode.TIMEOUT, KafkaErrorCode.REQUEST_TIMED_OUT],
  [ErrorCode.STORAGE_ERROR, KafkaErrorCode.KAFKA_STORAGE_ERROR],
]);

/**
 * The Kafka error code for a ConchError a group call threw (UNKNOWN_SERVER_ERROR for a code not in
 * the table). Anything else is a bug: it is thrown on, for the session to log.
 */
export function kafkaGroupError(err: unknown): number {
  if (err instanceof ConchError) return TO_KAFKA.get(err.code) ?? KafkaErrorCode.UNKNOWN_SERVER_ERROR;
  throw err;
}
