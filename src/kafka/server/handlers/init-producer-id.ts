/**
 * InitProducerId: a producer id for an idempotent producer (librdkafka asks for one when
 * enable.idempotence is set, kafkajs with idempotent: true). Every call gets a fresh id, unique
 * across restarts, with epoch 0 (Broker.initProducerId); the partitions then check its batches'
 * sequence numbers. A transactional id is refused: transactions are not served.
 */

import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeInitProducerIdRequest,
  encodeInitProducerIdResponse,
} from "../../protocol/init-producer-id.js";
import { kafkaErrorCode } from "../kafka-errors.js";
import type { KafkaHandler } from "../kafka-handler.js";

export const initProducerIdHandler: KafkaHandler = {
  doneWithFrame: true,
  async handle(ctx, h) {
    const req = decodeInitProducerIdRequest(h);
    let errorCode: number = KafkaErrorCode.NONE;
    let producerId = -1;
    let producerEpoch = -1;
    if (req.transactionalId !== null) errorCode = KafkaErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    else {
      try {
        ({ producerId, producerEpoch } = await ctx.broker.initProducerId());
      } catch (err) {
        errorCode = kafkaErrorCode(err);
      }
    }
    return encodeInitProducerIdResponse(h.correlationId, h.apiVersion, {
      throttleTimeMs: 0,
      errorCode,
      producerId,
      producerEpoch,
    });
  },
};
