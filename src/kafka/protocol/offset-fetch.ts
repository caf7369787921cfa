/**
 * 9 OffsetFetch, versions 1-5: a group's committed offsets.
 *
 *   request v1    = group_id string | topics [name string | partition_indexes [int32]]
 *   request v2-5  = group_id string | topics nullable [...]     (null = every committed partition)
 *   response v1   = topics [name string
 *                           | partitions [partition_index int32 | committed_offset int64
 *                                         | metadata nullable_string | error_code int16]]
 *   response v2   = v1 | error_code int16
 *   response v3-4 = throttle_time_ms int32 | v2
 *   response v5   = as v3, each partition: partition_index | committed_offset
 *                   | committed_leader_epoch int32 | metadata | error_code
 *
 * A partition with no committed offset answers offset -1 and no error. v6+ is flexible and is not
 * advertised: librdkafka would use it.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface OffsetFetchRequest {
  groupId: string;
  /** null = every partition the group has committed (v2+). */
  topics: { name: string; partitionIndexes: number[] }[] | null;
}

export interface OffsetFetchPartition {
  partitionIndex: number;
  committedOffset: number;
  /** v5; -1 = unknown. */
  committedLeaderEpoch: number;
  metadata: string | null;
  errorCode: number;
}

export interface OffsetFetchResponse {
  throttleTimeMs: number;
  topics: readonly { name: string; partitions: readonly OffsetFetchPartition[] }[];
  /** v2+: an error for the whole request. */
  errorCode: number;
}

export function decodeOffsetFetchRequest(h: KafkaRequestHeader): OffsetFetchRequest {
  const v = checkVersion(h, ApiKey.OFFSET_FETCH);
  const r = h.body;
  const groupId = r.string();
  const n = v >= 2 ? r.nullableArrayCount(6) : r.arrayCount(6);
  let topics: OffsetFetchRequest["topics"] = null;
  if (n >= 0) {
    topics = [];
    for (let i = 0; i < n; i++) {
      const name = r.string();
      const m = r.arrayCount(4);
      const partitionIndexes: number[] = [];
      for (let j = 0; j < m; j++) partitionIndexes.push(r.int32());
      topics.push({ name, partitionIndexes });
    }
  }
  r.done();
  return { groupId, topics };
}

function writeBody(w: KafkaSink, v: number, res: OffsetFetchResponse): void {
  if (v >= 3) w.int32(res.throttleTimeMs);
  w.arrayCount(res.topics.length);
  for (const t of res.topics) {
    w.string(t.name);
    w.arrayCount(t.partitions.length);
    for (const p of t.partitions) {
      w.int32(p.partitionIndex);
      w.int64(p.committedOffset);
      if (v >= 5) w.int32(p.committedLeaderEpoch);
      w.nullableString(p.metadata);
      w.int16(p.errorCode);
    }
  }
  if (v >= 2) w.int16(res.errorCode);
}

export function encodeOffsetFetchResponse(
  correlationId: number,
  version: number,
  res: OffsetFetchResponse,
): Buffer {
  return encodeResponse(ApiKey.OFFSET_FETCH, version, correlationId, writeBody, res);
}
