/**
 * 22 InitProducerId, versions 0-1: a producer id and epoch for idempotent (or transactional)
 * producing.
 *
 *   request v0-1  = transactional_id nullable_string | transaction_timeout_ms int32
 *   response v0-1 = throttle_time_ms int32 | error_code int16 | producer_id int64 | producer_epoch int16
 *
 * v2+ is flexible and is not advertised. Only an idempotent producer (transactional id null) is
 * meant to be served; a broker refuses a transactional id.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface InitProducerIdRequest {
  transactionalId: string | null;
  transactionTimeoutMs: number;
}

export interface InitProducerIdResponse {
  throttleTimeMs: number;
  errorCode: number;
  producerId: number;
  producerEpoch: number;
}

export function decodeInitProducerIdRequest(h: KafkaRequestHeader): InitProducerIdRequest {
  checkVersion(h, ApiKey.INIT_PRODUCER_ID);
  const r = h.body;
  const transactionalId = r.nullableString();
  const transactionTimeoutMs = r.int32();
  r.done();
  return { transactionalId, transactionTimeoutMs };
}

function writeBody(w: KafkaSink, _v: number, res: InitProducerIdResponse): void {
  w.int32(res.throttleTimeMs);
  w.int16(res.errorCode);
  w.int64(res.producerId);
  w.int16(res.producerEpoch);
}

export function encodeInitProducerIdResponse(
  correlationId: number,
  version: number,
  res: InitProducerIdResponse,
): Buffer {
  return encodeResponse(ApiKey.INIT_PRODUCER_ID, version, correlationId, writeBody, res);
}
