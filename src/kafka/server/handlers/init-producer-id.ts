/**
 * InitProducerId: a producer id for an idempotent producer (librdkafka asks for one when
 * enable.idempotence is set). Conch hands out ids and epoch 0 and stores the batches, but does not
 * yet check producer ids and sequence numbers: a retried batch can still be stored twice. Full
 * idempotence (per-partition sequence tracking, deduplication) comes later. A transactional id is
 * refused: transactions are not served.
 */

import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeInitProducerIdRequest,
  encodeInitProducerIdResponse,
} from "../../protocol/init-producer-id.js";
import type { KafkaHandler } from "../kafka-handler.js";

/**
 * Ids start from the time the broker started, in ms, so that ids handed out before a restart are
 * not handed out again soon after it (none is stored yet).
 */
let nextProducerId = Date.now();

export const initProducerIdHandler: KafkaHandler = {
  doneWithFrame: true,
  handle(_ctx, h) {
    const req = decodeInitProducerIdRequest(h);
    const refused = req.transactionalId !== null;
    return encodeInitProducerIdResponse(h.correlationId, h.apiVersion, {
      throttleTimeMs: 0,
      errorCode: refused ? KafkaErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : KafkaErrorCode.NONE,
      producerId: refused ? -1 : nextProducerId++,
      producerEpoch: refused ? -1 : 0,
    });
  },
};
