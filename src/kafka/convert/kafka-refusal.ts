/**
 * A Kafka request refused for a reason Conch's own codes cannot say (a compressed batch, a
 * replication factor other than 1), carrying the Kafka error code to answer with (server/kafka-errors.ts).
 */
import { ConchError, ErrorCode } from "../../format/errors.js";

export class KafkaRefusal extends ConchError {
  readonly kafkaCode: number;

  constructor(kafkaCode: number, message: string, code: number = ErrorCode.INVALID_BATCH) {
    super(code, message);
    this.kafkaCode = kafkaCode;
  }
}
