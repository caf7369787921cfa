/**
 * 2 ListOffsets, versions 1-3: the offset for a timestamp, or the earliest (-2) or latest (-1).
 *
 *   request v1    = replica_id int32
 *                   | topics [name string | partitions [partition_index int32 | timestamp int64]]
 *   request v2-3  = replica_id int32 | isolation_level int8 | topics (as v1)
 *   response v1   = topics [name string
 *                           | partitions [partition_index int32 | error_code int16
 *                                         | timestamp int64 | offset int64]]
 *   response v2-3 = throttle_time_ms int32 | topics (as v1)
 *
 * v0 (a list of old-style offsets) is left out: every client here sends at least v1, which is what
 * `kcat -Q` needs. kafkajs asks up to v3, the same bytes as v2.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

/** The timestamps that name a position instead of a time. */
export const ListOffsetsTimestamp = { LATEST: -1, EARLIEST: -2 } as const;

export interface ListOffsetsRequest {
  replicaId: number;
  /** v2+; 0 below. */
  isolationLevel: number;
  topics: { name: string; partitions: { partitionIndex: number; timestamp: number }[] }[];
}

export interface ListOffsetsResponse {
  throttleTimeMs: number;
  topics: readonly {
    name: string;
    partitions: readonly { partitionIndex: number; errorCode: number; timestamp: number; offset: number }[];
  }[];
}

export function decodeListOffsetsRequest(h: KafkaRequestHeader): ListOffsetsRequest {
  const v = checkVersion(h, ApiKey.LIST_OFFSETS);
  const r = h.body;
  const replicaId = r.int32();
  const isolationLevel = v >= 2 ? r.int8() : 0;
  const topicCount = r.arrayCount(6);
  const topics: ListOffsetsRequest["topics"] = [];
  for (let i = 0; i < topicCount; i++) {
    const name = r.string();
    const n = r.arrayCount(12);
    const partitions: { partitionIndex: number; timestamp: number }[] = [];
    for (let j = 0; j < n; j++) {
      const partitionIndex = r.int32();
      partitions.push({ partitionIndex, timestamp: r.int64() });
    }
    topics.push({ name, partitions });
  }
  r.done();
  return { replicaId, isolationLevel, topics };
}

function writeBody(w: KafkaSink, v: number, res: ListOffsetsResponse): void {
  if (v >= 2) w.int32(res.throttleTimeMs);
  w.arrayCount(res.topics.length);
  for (const t of res.topics) {
    w.string(t.name);
    w.arrayCount(t.partitions.length);
    for (const p of t.partitions) {
      w.int32(p.partitionIndex);
      w.int16(p.errorCode);
      w.int64(p.timestamp);
      w.int64(p.offset);
    }
  }
}

export function encodeListOffsetsResponse(
  correlationId: number,
  version: number,
  res: ListOffsetsResponse,
): Buffer {
  return encodeResponse(ApiKey.LIST_OFFSETS, version, correlationId, writeBody, res);
}
