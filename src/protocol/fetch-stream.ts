/**
 * 9 FetchStream, 10 StreamCredit, 11 StreamCancel, version 1: a fetch that keeps answering.
 *
 *   FetchStream   request body = topic string | partition u32 | offset u64 | maxBytes u32 |
 *                                maxWaitMs u32 | minBytes u32 | windowBytes u32 |
 *                                group string | memberId string | generation u32
 *                 responses    = Fetch responses (fetch.ts), any number, all with the stream's
 *                                correlation id
 *   StreamCredit  request body = streamId u32 | bytes u32     (no response)
 *   StreamCancel  request body = streamId u32                 (no response)
 *
 * A stream is a long poll that re-arms itself: each time the broker answers (with data, or empty
 * once `maxWaitMs` passed without any), it fetches again from the offset after what it sent. It
 * sends at most `windowBytes` of records that the client has not credited back (StreamCredit, one
 * batch more when a single batch is larger), so a consumer that stops reading stops the stream. It
 * ends with an error response (the stream is over; the client may open another) or when the
 * client cancels it, the connection closes, or the broker shuts down. `group` is "" for a plain
 * stream; a group member's stream ends with ILLEGAL_GENERATION once it no longer owns the
 * partition. The stream id is the FetchStream request's correlation id; credit or a cancel for a
 * stream that has ended is ignored.
 */
import { ApiKey } from "./api.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface FetchStreamRequest {
  topic: string;
  partition: number;
  offset: number;
  /** The most record bytes in one response (at least one whole batch is always sent). */
  maxBytes: number;
  /** How long the broker waits for data before it sends an empty response (which keeps the stream alive). */
  maxWaitMs: number;
  minBytes: number;
  /** Record bytes the broker may send ahead of the client's credit. */
  windowBytes: number;
  /** "" for a plain stream. */
  group: string;
  memberId: string;
  generation: number;
}

export interface StreamCredit {
  streamId: number;
  bytes: number;
}

/** partition u32 | offset u64 | maxBytes u32 | maxWaitMs u32 | minBytes u32 | windowBytes u32 | generation u32 */
const FIXED_BYTES = 4 + 8 + 4 + 4 + 4 + 4 + 4;

export function encodeFetchStreamRequest(correlationId: number, req: FetchStreamRequest): Buffer {
  const size = stringSize(req.topic) + stringSize(req.group) + stringSize(req.memberId) + FIXED_BYTES;
  const w = requestWriter(ApiKey.FETCH_STREAM, correlationId, size);
  w.string(req.topic)
    .u32(req.partition)
    .u64(req.offset)
    .u32(req.maxBytes)
    .u32(req.maxWaitMs)
    .u32(req.minBytes)
    .u32(req.windowBytes)
    .string(req.group)
    .string(req.memberId)
    .u32(req.generation);
  return w.finish();
}

export function decodeFetchStreamRequest(frame: Buffer): FetchStreamRequest {
  const r = requestBodyReader(frame);
  const req: FetchStreamRequest = {
    topic: r.string(),
    partition: r.u32(),
    offset: r.u64(),
    maxBytes: r.u32(),
    maxWaitMs: r.u32(),
    minBytes: r.u32(),
    windowBytes: r.u32(),
    group: r.string(),
    memberId: r.string(),
    generation: r.u32(),
  };
  r.done();
  return req;
}

export function encodeStreamCredit(correlationId: number, credit: StreamCredit): Buffer {
  return requestWriter(ApiKey.STREAM_CREDIT, correlationId, 8)
    .u32(credit.streamId)
    .u32(credit.bytes)
    .finish();
}

export function decodeStreamCredit(frame: Buffer): StreamCredit {
  const r = requestBodyReader(frame);
  const credit = { streamId: r.u32(), bytes: r.u32() };
  r.done();
  return credit;
}

export function encodeStreamCancel(correlationId: number, streamId: number): Buffer {
  return requestWriter(ApiKey.STREAM_CANCEL, correlationId, 4).u32(streamId).finish();
}

export function decodeStreamCancel(frame: Buffer): number {
  const r = requestBodyReader(frame);
  const streamId = r.u32();
  r.done();
  return streamId;
}
