/**
 * 12 CreatePartitions, version 1: grows a topic to `partitions` partitions in all (the new total,
 * as Kafka's CreatePartitions counts). Existing partitions keep their data; a topic never shrinks.
 *
 *   request  body = topic string | partitions u32
 *   response body = (empty)
 *
 * Refused with UNKNOWN_TOPIC, and INVALID_PARTITIONS when `partitions` is not above the current
 * count, above 10000, or past the broker's maxPartitions. Producers and consumers learn the new
 * count at their next metadata refresh.
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface CreatePartitionsRequest {
  topic: string;
  /** The topic's partition count once grown. */
  partitions: number;
}

export function encodeCreatePartitionsRequest(correlationId: number, req: CreatePartitionsRequest): Buffer {
  return requestWriter(ApiKey.CREATE_PARTITIONS, correlationId, stringSize(req.topic) + 4)
    .string(req.topic)
    .u32(req.partitions)
    .finish();
}

export function decodeCreatePartitionsRequest(frame: Buffer): CreatePartitionsRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const partitions = r.u32();
  r.done();
  return { topic, partitions };
}

export const encodeCreatePartitionsResponse = encodeEmptyResponse;
export const decodeCreatePartitionsResponse = decodeEmptyResponse;
