/**
 * 7 ListOffsets, version 1.
 *
 *   request  body = topic string | partition u32 | spec u8 | timestampMs u64
 *   response body = found u8 | offset u64
 *
 * spec: 0 = earliest (log start offset), 1 = latest (high watermark), 2 = the first offset whose
 * record timestamp is >= timestampMs (timestampMs is ignored, and sent as 0, for the other specs).
 * found = 0 when no record has such a timestamp; offset is then the high watermark.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { ApiKey, OffsetSpec, type OffsetSpecValue } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface ListOffsetsRequest {
  topic: string;
  partition: number;
  spec: OffsetSpecValue;
  timestampMs: number;
}

export interface ListOffsetsResponse {
  found: boolean;
  offset: number;
}

/** partition u32 | spec u8 | timestampMs u64 */
const REQUEST_FIXED_BYTES = 4 + 1 + 8;
const RESPONSE_BODY_BYTES = 1 + 8;

export function encodeListOffsetsRequest(correlationId: number, req: ListOffsetsRequest): Buffer {
  const w = requestWriter(ApiKey.LIST_OFFSETS, correlationId, stringSize(req.topic) + REQUEST_FIXED_BYTES);
  return w.string(req.topic).u32(req.partition).u8(req.spec).u64(req.timestampMs).finish();
}

export function decodeListOffsetsRequest(frame: Buffer): ListOffsetsRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const partition = r.u32();
  const spec = r.u8();
  const timestampMs = r.u64();
  r.done();
  if (spec > OffsetSpec.TIMESTAMP)
    throw new ConchError(ErrorCode.INVALID_REQUEST, `offset spec ${spec} is not 0, 1 or 2`);
  return { topic, partition, spec: spec as OffsetSpecValue, timestampMs };
}

export function encodeListOffsetsResponse(correlationId: number, res: ListOffsetsResponse): Buffer {
  return responseWriter(correlationId, RESPONSE_BODY_BYTES)
    .u8(res.found ? 1 : 0)
    .u64(res.offset)
    .finish();
}

export function decodeListOffsetsResponse(frame: Buffer): ListOffsetsResponse {
  const r = responseBodyReader(frame);
  const found = r.u8();
  const offset = r.u64();
  r.done();
  if (found > 1) throw new ConchError(ErrorCode.MALFORMED_REQUEST, `malformed response: found = ${found}`);
  return { found: found === 1, offset };
}
