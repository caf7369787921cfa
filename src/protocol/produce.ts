/**
 * 5 Produce, version 1.
 *
 *   request  body = topic string | partition u32 | acks u8 | timeoutMs u32 | records bytes
 *   response body = baseOffset u64 | lastOffset u64
 *
 * `records` holds one or more whole batches (docs/format.md). The decoder hands them out as a view
 * of the frame, never a copy: the broker validates and stores those very bytes. The records are the
 * only large part of the request, so a producer may send the header and its batches separately
 * (`encodeProduceRequestHeader`, then the batches, e.g. with writev) instead of copying them into
 * one buffer. With acks = 0 the broker sends no response, success or failure.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { Acks, type AcksValue, ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface ProduceRequest {
  topic: string;
  partition: number;
  acks: AcksValue;
  timeoutMs: number;
  /** Whole batches; decoded as a view of the request frame. */
  records: Buffer;
}

export interface ProduceResponse {
  baseOffset: number;
  lastOffset: number;
}

/** partition u32 | acks u8 | timeoutMs u32 | records length u32 */
const FIXED_BYTES = 4 + 1 + 4 + 4;
const RESPONSE_BODY_BYTES = 8 + 8;

/**
 * Everything of a produce request up to its records: the size field counts `recordsLength` more
 * bytes, which the caller writes right after this buffer.
 */
export function encodeProduceRequestHeader(
  correlationId: number,
  topic: string,
  partition: number,
  acks: AcksValue,
  timeoutMs: number,
  recordsLength: number,
): Buffer {
  const w = requestWriter(ApiKey.PRODUCE, correlationId, stringSize(topic) + FIXED_BYTES, recordsLength);
  return w.string(topic).u32(partition).u8(acks).u32(timeoutMs).u32(recordsLength).finish();
}

/** The whole request in one buffer (the records copied once, into place). */
export function encodeProduceRequest(correlationId: number, req: ProduceRequest): Buffer {
  const w = requestWriter(
    ApiKey.PRODUCE,
    correlationId,
    stringSize(req.topic) + FIXED_BYTES + req.records.length,
  );
  w.string(req.topic).u32(req.partition).u8(req.acks).u32(req.timeoutMs).bytes(req.records);
  return w.finish();
}

export function decodeProduceRequest(frame: Buffer): ProduceRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const partition = r.u32();
  const acks = r.u8();
  const timeoutMs = r.u32();
  const records = r.bytes();
  r.done();
  if (acks > Acks.ALL) throw new ConchError(ErrorCode.INVALID_REQUEST, `acks ${acks} is not 0, 1, 2 or 3`);
  return { topic, partition, acks: acks as AcksValue, timeoutMs, records };
}

export function encodeProduceResponse(correlationId: number, res: ProduceResponse): Buffer {
  return responseWriter(correlationId, RESPONSE_BODY_BYTES).u64(res.baseOffset).u64(res.lastOffset).finish();
}

export function decodeProduceResponse(frame: Buffer): ProduceResponse {
  const r = responseBodyReader(frame);
  const baseOffset = r.u64();
  const lastOffset = r.u64();
  r.done();
  return { baseOffset, lastOffset };
}
