/**
 * 19 ReplicaFetch, version 1: a follower's fetch stream from its partition's leader (cluster mode,
 * docs/cluster.md).
 *
 *   request  body = topic string | partition u32 | replicaId u32 | currentLeaderEpoch u32 |
 *                   fetchOffset u64 | lastFetchedEpoch u32 | maxBytes u32 | maxWaitMs u32 |
 *                   windowBytes u32
 *   response body = leaderEpoch u32 | highWatermark u64 | logStartOffset u64 |
 *                   diverging u8 | divergingEpoch u32 | divergingEndOffset u64 |
 *                   epochs count u32 [epoch u32 | startOffset u64]* | records bytes
 *
 * Like FetchStream (fetch-stream.ts): the leader pushes responses, all with the request's
 * correlation id, while the follower's uncredited records stay under `windowBytes`; StreamCredit
 * and StreamCancel (keys 10, 11) take the stream id. The follower credits the bytes of a response
 * once it has stored them, so credit also tells the leader how far the follower's log reaches (its
 * log end, from which the leader's high watermark follows).
 *
 * `lastFetchedEpoch` is the epoch of the follower's last stored batch, NO_EPOCH (0xffffffff) when it
 * has none. When the leader's log parts from the follower's before `fetchOffset`, the first
 * response has `diverging` 1, no records, and says where: `divergingEpoch` is the largest epoch at
 * or below `lastFetchedEpoch` on the leader (NO_EPOCH when none), `divergingEndOffset` where it ends
 * there (the follower truncates to it and opens a new stream); the stream ends after it. A
 * `fetchOffset` below the leader's log start is answered the same way with NO_EPOCH and the log
 * start as `divergingEndOffset`, past the follower's end: it empties its log to start there. Otherwise
 * `diverging` is 0, `divergingEpoch` NO_EPOCH and `divergingEndOffset` 0. `epochs` are the leader-epoch entries covering the records sent (the
 * one holding their first offset and any starting among them), for the follower's own epoch file.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

/** "No epoch": the follower has stored nothing yet, or the leader has no epoch at or below the one asked. */
export const NO_EPOCH = 0xffff_ffff;

export interface ReplicaFetchRequest {
  topic: string;
  partition: number;
  replicaId: number;
  currentLeaderEpoch: number;
  fetchOffset: number;
  lastFetchedEpoch: number;
  maxBytes: number;
  maxWaitMs: number;
  windowBytes: number;
}

export interface EpochStart {
  epoch: number;
  startOffset: number;
}

export interface ReplicaFetchResponse {
  leaderEpoch: number;
  highWatermark: number;
  logStartOffset: number;
  diverging: boolean;
  divergingEpoch: number;
  divergingEndOffset: number;
  epochs: EpochStart[];
  /** Whole stored batches; decoded as a view of the response frame. */
  records: Buffer;
}

/** partition u32 | replicaId u32 | currentLeaderEpoch u32 | fetchOffset u64 | lastFetchedEpoch u32 | maxBytes u32 | maxWaitMs u32 | windowBytes u32 */
const REQUEST_FIXED_BYTES = 4 + 4 + 4 + 8 + 4 + 4 + 4 + 4;
/** leaderEpoch u32 | highWatermark u64 | logStartOffset u64 | diverging u8 | divergingEpoch u32 | divergingEndOffset u64 | count u32 */
const RESPONSE_FIXED_BYTES = 4 + 8 + 8 + 1 + 4 + 8 + 4;
const EPOCH_BYTES = 4 + 8;
/** records length u32 */
const RECORDS_LENGTH_BYTES = 4;

export function encodeReplicaFetchRequest(correlationId: number, req: ReplicaFetchRequest): Buffer {
  const w = requestWriter(ApiKey.REPLICA_FETCH, correlationId, stringSize(req.topic) + REQUEST_FIXED_BYTES);
  w.string(req.topic)
    .u32(req.partition)
    .u32(req.replicaId)
    .u32(req.currentLeaderEpoch)
    .u64(req.fetchOffset)
    .u32(req.lastFetchedEpoch)
    .u32(req.maxBytes)
    .u32(req.maxWaitMs)
    .u32(req.windowBytes);
  return w.finish();
}

export function decodeReplicaFetchRequest(frame: Buffer): ReplicaFetchRequest {
  const r = requestBodyReader(frame);
  const req: ReplicaFetchRequest = {
    topic: r.string(),
    partition: r.u32(),
    replicaId: r.u32(),
    currentLeaderEpoch: r.u32(),
    fetchOffset: r.u64(),
    lastFetchedEpoch: r.u32(),
    maxBytes: r.u32(),
    maxWaitMs: r.u32(),
    windowBytes: r.u32(),
  };
  r.done();
  return req;
}

/**
 * The response up to and including its records' length field: the size field counts the records
 * too, which the caller writes right after this buffer (uncopied, as a fetch response's).
 */
export function encodeReplicaFetchResponseHeader(
  correlationId: number,
  res: Omit<ReplicaFetchResponse, "records">,
  recordsLength: number,
): Buffer {
  const body = RESPONSE_FIXED_BYTES + res.epochs.length * EPOCH_BYTES + RECORDS_LENGTH_BYTES;
  const w = responseWriter(correlationId, body, recordsLength);
  w.u32(res.leaderEpoch)
    .u64(res.highWatermark)
    .u64(res.logStartOffset)
    .u8(res.diverging ? 1 : 0)
    .u32(res.divergingEpoch)
    .u64(res.divergingEndOffset)
    .u32(res.epochs.length);
  for (const e of res.epochs) w.u32(e.epoch).u64(e.startOffset);
  return w.u32(recordsLength).finish();
}

/** The whole response in one buffer (for tests and fixtures; the broker writes header and records apart). */
export function encodeReplicaFetchResponse(correlationId: number, res: ReplicaFetchResponse): Buffer {
  return Buffer.concat([
    encodeReplicaFetchResponseHeader(correlationId, res, res.records.length),
    res.records,
  ]);
}

export function decodeReplicaFetchResponse(frame: Buffer): ReplicaFetchResponse {
  const r = responseBodyReader(frame);
  const leaderEpoch = r.u32();
  const highWatermark = r.u64();
  const logStartOffset = r.u64();
  const flag = r.u8();
  if (flag > 1) throw new ConchError(ErrorCode.MALFORMED_REQUEST, `diverging must be 0 or 1, got ${flag}`);
  const divergingEpoch = r.u32();
  const divergingEndOffset = r.u64();
  const count = r.count(EPOCH_BYTES);
  const epochs: EpochStart[] = [];
  for (let i = 0; i < count; i++) epochs.push({ epoch: r.u32(), startOffset: r.u64() });
  const records = r.bytes();
  r.done();
  return {
    leaderEpoch,
    highWatermark,
    logStartOffset,
    diverging: flag === 1,
    divergingEpoch,
    divergingEndOffset,
    epochs,
    records,
  };
}
