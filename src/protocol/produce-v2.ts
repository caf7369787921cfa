/**
 * 5 Produce, version 2: the batches of many partitions of one topic in one request, answered with
 * each partition's own result. Served by brokers that agree to protocol version 2 in the handshake
 * (api.ts, MULTI_PRODUCE_PROTOCOL_VERSION); a client falls back to version 1 (produce.ts), one
 * request per partition, against a broker that agrees only to version 1.
 *
 *   request  body = topic string | acks u8 | timeoutMs u32
 *                   | partitions array<partition u32 | records bytes>
 *   response body = partitions array<partition u32 | errorCode u16 | baseOffset i64 | lastOffset i64
 *                   | message string>
 *
 * Each entry's `records` is what version 1's `records` is: whole batches, decoded as a view of the
 * frame. The broker appends the entries in their order (one partition may appear more than once)
 * and answers them in the same order. A partition's failure (not its leader, unknown partition, a
 * refused batch) is its entry's errorCode and message, with offsets -1; the others are unaffected.
 * A failure of the whole request (malformed, ACL denied on the topic) is an error response as
 * for any request. With acks = 0 the broker sends no response.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { Acks, type AcksValue, ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

/** The apiVersion of this request. */
export const PRODUCE_MULTI_VERSION = 2;

/**
 * The most partition entries one request may carry: bounds the broker's work and the response's
 * size per request. A client splits a larger send into several requests.
 */
export const MAX_PRODUCE_PARTITIONS = 16_384;

/** One partition's batches: the shape of a producer's batch, so the client passes its own. */
export interface PartitionRecords {
  readonly partition: number;
  readonly records: Uint8Array;
}

export interface MultiProduceRequest {
  topic: string;
  acks: AcksValue;
  timeoutMs: number;
  partitions: readonly PartitionRecords[];
}

export interface PartitionProduceResult {
  partition: number;
  /** 0: stored at baseOffset..lastOffset. */
  errorCode: number;
  /** -1 when errorCode is not 0. */
  baseOffset: number;
  lastOffset: number;
  /** Why it failed, for people; empty on success. */
  message: string;
}

export interface MultiProduceResponse {
  partitions: PartitionProduceResult[];
}

/** acks u8 | timeoutMs u32 | partition count u32 */
const FIXED_BYTES = 1 + 4 + 4;
/** partition u32 | records length u32 */
const ENTRY_FIXED_BYTES = 4 + 4;
/** partition u32 | errorCode u16 | baseOffset i64 | lastOffset i64 | message length u16 */
const RESULT_FIXED_BYTES = 4 + 2 + 8 + 8 + 2;
/** A partition's error message is cut to this many characters: it is one line for people. */
const MAX_MESSAGE_CHARS = 1000;

/** The bytes of a request carrying `recordsBytes` of batches in `partitions` entries (size field included). */
export function multiProduceRequestBytes(topic: string, partitions: number, recordsBytes: number): number {
  return 4 + 8 + stringSize(topic) + FIXED_BYTES + partitions * ENTRY_FIXED_BYTES + recordsBytes;
}

/** The whole request in one buffer: each entry's records are copied once, into place. */
export function encodeMultiProduceRequest(correlationId: number, req: MultiProduceRequest): Buffer {
  const parts = req.partitions;
  if (parts.length === 0 || parts.length > MAX_PRODUCE_PARTITIONS) {
    throw new ConchError(
      ErrorCode.INVALID_REQUEST,
      `a produce request carries 1 to ${MAX_PRODUCE_PARTITIONS} partitions, not ${parts.length}`,
    );
  }
  let size = stringSize(req.topic) + FIXED_BYTES;
  for (let i = 0; i < parts.length; i++) size += ENTRY_FIXED_BYTES + parts[i]!.records.length;
  const w = requestWriter(ApiKey.PRODUCE, correlationId, size, 0, PRODUCE_MULTI_VERSION);
  w.string(req.topic).u8(req.acks).u32(req.timeoutMs).count(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    w.u32(p.partition).bytes(p.records);
  }
  return w.finish();
}

export function decodeMultiProduceRequest(frame: Buffer): MultiProduceRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const acks = r.u8();
  const timeoutMs = r.u32();
  const n = r.count(ENTRY_FIXED_BYTES);
  if (n === 0 || n > MAX_PRODUCE_PARTITIONS) {
    throw new ConchError(
      ErrorCode.INVALID_REQUEST,
      `a produce request carries 1 to ${MAX_PRODUCE_PARTITIONS} partitions, not ${n}`,
    );
  }
  if (acks > Acks.ALL) throw new ConchError(ErrorCode.INVALID_REQUEST, `acks ${acks} is not 0, 1, 2 or 3`);
  const partitions = new Array<PartitionRecords>(n);
  for (let i = 0; i < n; i++) {
    const partition = r.u32();
    partitions[i] = { partition, records: r.bytes() };
  }
  r.done();
  return { topic, acks: acks as AcksValue, timeoutMs, partitions };
}

/** A result's message as written: one line, cut to MAX_MESSAGE_CHARS. */
function wireMessage(message: string): string {
  return message.length > MAX_MESSAGE_CHARS ? message.slice(0, MAX_MESSAGE_CHARS) : message;
}

export function encodeMultiProduceResponse(correlationId: number, res: MultiProduceResponse): Buffer {
  const parts = res.partitions;
  let size = 4;
  for (let i = 0; i < parts.length; i++) {
    size += RESULT_FIXED_BYTES - 2 + stringSize(wireMessage(parts[i]!.message));
  }
  const w = responseWriter(correlationId, size).count(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    w.u32(p.partition).u16(p.errorCode).i64(p.baseOffset).i64(p.lastOffset).string(wireMessage(p.message));
  }
  return w.finish();
}

/**
 * The response `encodeMultiProduceResponse` makes when every partition succeeded: partition
 * `partitions[i]` stored `counts[i]` records from `bases[i]` on, with no message. Written from the
 * arrays, with no result object per partition (produce version 3's deferred answers).
 */
export function encodeStoredProduceResponse(
  correlationId: number,
  partitions: ArrayLike<number>,
  counts: ArrayLike<number>,
  bases: ArrayLike<number>,
): Buffer {
  const n = partitions.length;
  const w = responseWriter(correlationId, 4 + n * RESULT_FIXED_BYTES).count(n);
  for (let i = 0; i < n; i++) {
    const base = bases[i]!;
    w.u32(partitions[i]!)
      .u16(0)
      .i64(base)
      .i64(base + counts[i]! - 1)
      .string("");
  }
  return w.finish();
}

export function decodeMultiProduceResponse(frame: Buffer): MultiProduceResponse {
  const r = responseBodyReader(frame);
  const n = r.count(RESULT_FIXED_BYTES);
  const partitions = new Array<PartitionProduceResult>(n);
  for (let i = 0; i < n; i++) {
    const partition = r.u32();
    const errorCode = r.u16();
    const baseOffset = r.i64();
    const lastOffset = r.i64();
    partitions[i] = { partition, errorCode, baseOffset, lastOffset, message: r.string() };
  }
  r.done();
  return { partitions };
}
