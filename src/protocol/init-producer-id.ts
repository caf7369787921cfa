/**
 * 15 InitProducerId, version 1: an id and epoch for an idempotent producer (docs/protocol.md),
 * which it then writes into each batch with a sequence number per partition.
 *
 *   request  body = (empty)
 *   response body = producerId u64 | producerEpoch u16
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";

export interface InitProducerIdResponse {
  producerId: number;
  producerEpoch: number;
}

export function encodeInitProducerIdRequest(correlationId: number): Buffer {
  return requestWriter(ApiKey.INIT_PRODUCER_ID, correlationId, 0).finish();
}

/** The request has no body; this only checks that it has none. */
export function decodeInitProducerIdRequest(frame: Buffer): void {
  requestBodyReader(frame).done();
}

export function encodeInitProducerIdResponse(correlationId: number, res: InitProducerIdResponse): Buffer {
  return responseWriter(correlationId, 10).u64(res.producerId).u16(res.producerEpoch).finish();
}

export function decodeInitProducerIdResponse(frame: Buffer): InitProducerIdResponse {
  const r = responseBodyReader(frame);
  const producerId = r.u64();
  const producerEpoch = r.u16();
  r.done();
  return { producerId, producerEpoch };
}
