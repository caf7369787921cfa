/**
 * 6 Fetch, versions 1 and 2.
 *
 *   request  body = topic string | partition u32 | offset u64 | maxBytes u32 | maxWaitMs u32 | minBytes u32
 *                 [version 2: | group string | memberId string | generation u32]
 *   response body = highWatermark u64 | logStartOffset u64 | records bytes
 *
 * Version 2 is a group member fetching as the partition's owner (docs/groups.md): the broker answers
 * ILLEGAL_GENERATION unless that member owns the partition in that generation. A request without a
 * group is encoded at version 1.
 *
 * The records are stored batches exactly as the log holds them. The broker never copies them into
 * a response: it writes `encodeFetchResponseHeader(...)` and then the stored buffer(s) (cork, two
 * writes, uncork). The decoder hands the records out as a view of the response frame.
 */

import { JOIN_MAX_BYTES } from "../net/socket-writes.js";
import { ApiKey, FETCH_GROUP_VERSION } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestApiVersion, requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface FetchRequest {
  topic: string;
  partition: number;
  offset: number;
  maxBytes: number;
  maxWaitMs: number;
  minBytes: number;
  /** Version 2: the group the fetching member belongs to; absent or "" for a plain fetch. */
  group?: string;
  memberId?: string;
  generation?: number;
}

export interface FetchResponse {
  highWatermark: number;
  logStartOffset: number;
  /** Whole stored batches; decoded as a view of the response frame. */
  records: Buffer;
}

/** partition u32 | offset u64 | maxBytes u32 | maxWaitMs u32 | minBytes u32 */
const REQUEST_FIXED_BYTES = 4 + 8 + 4 + 4 + 4;
/** highWatermark u64 | logStartOffset u64 | records length u32 */
const RESPONSE_PREFIX_BYTES = 8 + 8 + 4;

export function encodeFetchRequest(correlationId: number, req: FetchRequest): Buffer {
  const group = req.group ?? "";
  const size = stringSize(req.topic) + REQUEST_FIXED_BYTES;
  if (group === "") {
    const w = requestWriter(ApiKey.FETCH, correlationId, size);
    w.string(req.topic)
      .u32(req.partition)
      .u64(req.offset)
      .u32(req.maxBytes)
      .u32(req.maxWaitMs)
      .u32(req.minBytes);
    return w.finish();
  }
  const memberId = req.memberId ?? "";
  const groupSize = stringSize(group) + stringSize(memberId) + 4;
  const w = requestWriter(ApiKey.FETCH, correlationId, size + groupSize, 0, FETCH_GROUP_VERSION);
  w.string(req.topic)
    .u32(req.partition)
    .u64(req.offset)
    .u32(req.maxBytes)
    .u32(req.maxWaitMs)
    .u32(req.minBytes)
    .string(group)
    .string(memberId)
    .u32(req.generation ?? 0);
  return w.finish();
}

export function decodeFetchRequest(frame: Buffer): FetchRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const partition = r.u32();
  const offset = r.u64();
  const maxBytes = r.u32();
  const maxWaitMs = r.u32();
  const minBytes = r.u32();
  if (requestApiVersion(frame) < FETCH_GROUP_VERSION) {
    r.done();
    return { topic, partition, offset, maxBytes, maxWaitMs, minBytes };
  }
  const group = r.string();
  const memberId = r.string();
  const generation = r.u32();
  r.done();
  return { topic, partition, offset, maxBytes, maxWaitMs, minBytes, group, memberId, generation };
}

/**
 * The response up to its records (30 bytes): the size field counts `recordsLength` more bytes,
 * which the caller writes right after this buffer.
 */
export function encodeFetchResponseHeader(
  correlationId: number,
  highWatermark: number,
  logStartOffset: number,
  recordsLength: number,
): Buffer {
  const w = responseWriter(correlationId, RESPONSE_PREFIX_BYTES, recordsLength);
  return w.u64(highWatermark).u64(logStartOffset).u32(recordsLength).finish();
}

/** The whole response in one buffer (the records copied once, into place). */
export function encodeFetchResponse(correlationId: number, res: FetchResponse): Buffer {
  const w = responseWriter(correlationId, RESPONSE_PREFIX_BYTES + res.records.length);
  return w.u64(res.highWatermark).u64(res.logStartOffset).bytes(res.records).finish();
}

/**
 * The response as the broker writes it: one buffer with the records copied in when they are small
 * (socket-writes.ts), else the header and the records' own buffer, to be written together.
 */
export function fetchResponseBuffers(correlationId: number, res: FetchResponse): Buffer | Buffer[] {
  if (res.records.length <= JOIN_MAX_BYTES) return encodeFetchResponse(correlationId, res);
  return [
    encodeFetchResponseHeader(correlationId, res.highWatermark, res.logStartOffset, res.records.length),
    res.records,
  ];
}

export function decodeFetchResponse(frame: Buffer): FetchResponse {
  const r = responseBodyReader(frame);
  const highWatermark = r.u64();
  const logStartOffset = r.u64();
  const records = r.bytes();
  r.done();
  return { highWatermark, logStartOffset, records };
}
