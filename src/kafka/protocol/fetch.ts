/**
 * 1 Fetch, versions 4-11: record batches from partitions, from an offset on, waiting up to
 * max_wait_ms for min_bytes.
 *
 *   request v4    = replica_id int32 | max_wait_ms int32 | min_bytes int32 | max_bytes int32
 *                   | isolation_level int8
 *                   | topics [topic string
 *                             | partitions [partition int32 | fetch_offset int64
 *                                           | partition_max_bytes int32]]
 *   request v5-6  = as v4, each partition: partition | fetch_offset | log_start_offset int64
 *                   | partition_max_bytes
 *   request v7-8  = replica_id | max_wait_ms | min_bytes | max_bytes | isolation_level
 *                   | session_id int32 | session_epoch int32 | topics (as v5)
 *                   | forgotten_topics_data [topic string | partitions [int32]]
 *   request v9-10 = as v7, each partition: partition | current_leader_epoch int32 | fetch_offset
 *                   | log_start_offset | partition_max_bytes
 *   request v11   = v9 | rack_id string
 *
 *   response v4   = throttle_time_ms int32
 *                   | responses [topic string
 *                                | partitions [partition_index int32 | error_code int16
 *                                              | high_watermark int64 | last_stable_offset int64
 *                                              | aborted_transactions nullable [producer_id int64
 *                                                                             | first_offset int64]
 *                                              | records nullable_bytes]]
 *   response v5-6 = as v4, log_start_offset int64 after last_stable_offset
 *   response v7-10= throttle_time_ms | error_code int16 | session_id int32 | responses (as v5)
 *   response v11  = as v7, preferred_read_replica int32 after aborted_transactions
 *
 * Fetch 4 is the first with RecordBatch v2. Conch keeps no fetch sessions: it answers session id 0,
 * which tells a client to send full requests (KIP-227).
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, encodeResponsePieces, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface FetchPartition {
  partition: number;
  /** v9+; -1 below. */
  currentLeaderEpoch: number;
  fetchOffset: number;
  /** v5+; -1 below. */
  logStartOffset: number;
  partitionMaxBytes: number;
}

export interface FetchRequest {
  replicaId: number;
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  /** 0 read uncommitted, 1 read committed. */
  isolationLevel: number;
  /** v7+; 0 and -1 below (a full request, no session). */
  sessionId: number;
  sessionEpoch: number;
  topics: { topic: string; partitions: FetchPartition[] }[];
  forgottenTopics: { topic: string; partitions: number[] }[];
  /** v11; "" below. */
  rackId: string;
}

export interface FetchPartitionResponse {
  partitionIndex: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  /** null when none (Conch has no transactions). */
  abortedTransactions: readonly { producerId: number; firstOffset: number }[] | null;
  /** v11; -1 = none. */
  preferredReadReplica: number;
  /** Whole RecordBatch v2 batches, or null: one buffer, or pieces written one after another (stored Kafka batches past their envelopes). */
  records: Uint8Array | readonly Uint8Array[] | null;
}

export interface FetchResponse {
  throttleTimeMs: number;
  /** v7+. */
  errorCode: number;
  sessionId: number;
  topics: readonly { topic: string; partitions: readonly FetchPartitionResponse[] }[];
}

export function decodeFetchRequest(h: KafkaRequestHeader): FetchRequest {
  const v = checkVersion(h, ApiKey.FETCH);
  const r = h.body;
  const replicaId = r.int32();
  const maxWaitMs = r.int32();
  const minBytes = r.int32();
  const maxBytes = r.int32();
  const isolationLevel = r.int8();
  if (isolationLevel !== 0 && isolationLevel !== 1) throw r.malformed(`isolation level ${isolationLevel}`);
  const sessionId = v >= 7 ? r.int32() : 0;
  const sessionEpoch = v >= 7 ? r.int32() : -1;
  const partitionBytes = 4 + 8 + 4 + (v >= 5 ? 8 : 0) + (v >= 9 ? 4 : 0);
  const topicCount = r.arrayCount(6);
  const topics: FetchRequest["topics"] = [];
  for (let i = 0; i < topicCount; i++) {
    const topic = r.string();
    const n = r.arrayCount(partitionBytes);
    const partitions: FetchPartition[] = [];
    for (let j = 0; j < n; j++) {
      const partition = r.int32();
      const currentLeaderEpoch = v >= 9 ? r.int32() : -1;
      const fetchOffset = r.int64();
      const logStartOffset = v >= 5 ? r.int64() : -1;
      const partitionMaxBytes = r.int32();
      partitions.push({ partition, currentLeaderEpoch, fetchOffset, logStartOffset, partitionMaxBytes });
    }
    topics.push({ topic, partitions });
  }
  const forgottenTopics: FetchRequest["forgottenTopics"] = [];
  if (v >= 7) {
    const n = r.arrayCount(6);
    for (let i = 0; i < n; i++) {
      const topic = r.string();
      const m = r.arrayCount(4);
      const partitions: number[] = [];
      for (let j = 0; j < m; j++) partitions.push(r.int32());
      forgottenTopics.push({ topic, partitions });
    }
  }
  const rackId = v >= 11 ? r.string() : "";
  r.done();
  return {
    replicaId,
    maxWaitMs,
    minBytes,
    maxBytes,
    isolationLevel,
    sessionId,
    sessionEpoch,
    topics,
    forgottenTopics,
    rackId,
  };
}

/** A one-piece record set for bytesOf; a referencing writer keeps the piece, not the array. */
const NONE = new Uint8Array(0);
const one: Uint8Array[] = [NONE];

function isPieces(records: Uint8Array | readonly Uint8Array[]): records is readonly Uint8Array[] {
  return Array.isArray(records);
}

function writeBody(w: KafkaSink, v: number, res: FetchResponse): void {
  w.int32(res.throttleTimeMs);
  if (v >= 7) {
    w.int16(res.errorCode);
    w.int32(res.sessionId);
  }
  w.arrayCount(res.topics.length);
  for (const t of res.topics) {
    w.string(t.topic);
    w.arrayCount(t.partitions.length);
    for (const p of t.partitions) {
      w.int32(p.partitionIndex);
      w.int16(p.errorCode);
      w.int64(p.highWatermark);
      w.int64(p.lastStableOffset);
      if (v >= 5) w.int64(p.logStartOffset);
      const aborted = p.abortedTransactions;
      w.arrayCount(aborted === null ? -1 : aborted.length);
      if (aborted !== null) {
        for (const a of aborted) {
          w.int64(a.producerId);
          w.int64(a.firstOffset);
        }
      }
      if (v >= 11) w.int32(p.preferredReadReplica);
      const records = p.records;
      if (records === null) w.nullableBytes(null);
      else if (isPieces(records)) w.bytesOf(records);
      else {
        // Through bytesOf, so that a referencing writer keeps it rather than copying it.
        one[0] = records;
        w.bytesOf(one);
        one[0] = NONE;
      }
    }
  }
}

export function encodeFetchResponse(correlationId: number, version: number, res: FetchResponse): Buffer {
  return encodeResponse(ApiKey.FETCH, version, correlationId, writeBody, res);
}

/**
 * The same response as `encodeFetchResponse`, as pieces the transport writes corked once it is
 * larger than JOIN_MAX_BYTES: the records are referenced, not copied (frame.ts).
 */
export function encodeFetchResponsePieces(
  correlationId: number,
  version: number,
  res: FetchResponse,
): Buffer | Buffer[] {
  return encodeResponsePieces(ApiKey.FETCH, version, correlationId, writeBody, res);
}
