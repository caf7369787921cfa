/**
 * 8 OffsetCommit, versions 2-7: a group member commits the offsets it has consumed.
 *
 *   request v2-4  = group_id string | generation_id int32 | member_id string
 *                   | retention_time_ms int64
 *                   | topics [name string
 *                             | partitions [partition_index int32 | committed_offset int64
 *                                           | committed_metadata nullable_string]]
 *   request v5    = as v2 without retention_time_ms
 *   request v6    = as v5, each partition: partition_index | committed_offset
 *                   | committed_leader_epoch int32 | committed_metadata
 *   request v7    = group_id | generation_id | member_id | group_instance_id nullable_string | topics (as v6)
 *   response v2   = topics [name string | partitions [partition_index int32 | error_code int16]]
 *   response v3-7 = throttle_time_ms int32 | topics (as v2)
 *
 * A generation of -1 with an empty member id is a commit from outside any group (a simple
 * consumer or an admin tool).
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";
import { type PartitionErrors, writePartitionErrors } from "./partition-errors.js";

export interface OffsetCommitPartition {
  partitionIndex: number;
  committedOffset: number;
  /** v6+; -1 below. */
  committedLeaderEpoch: number;
  committedMetadata: string | null;
}

export interface OffsetCommitRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  /** v7; null below. */
  groupInstanceId: string | null;
  /** v2-4; -1 (the broker's default) otherwise. */
  retentionTimeMs: number;
  topics: { name: string; partitions: OffsetCommitPartition[] }[];
}

export interface OffsetCommitResponse extends PartitionErrors {
  throttleTimeMs: number;
}

export function decodeOffsetCommitRequest(h: KafkaRequestHeader): OffsetCommitRequest {
  const v = checkVersion(h, ApiKey.OFFSET_COMMIT);
  const r = h.body;
  const groupId = r.string();
  const generationId = r.int32();
  const memberId = r.string();
  const groupInstanceId = v >= 7 ? r.nullableString() : null;
  const retentionTimeMs = v <= 4 ? r.int64() : -1;
  const topicCount = r.arrayCount(6);
  const topics: OffsetCommitRequest["topics"] = [];
  for (let i = 0; i < topicCount; i++) {
    const name = r.string();
    const n = r.arrayCount(14 + (v >= 6 ? 4 : 0));
    const partitions: OffsetCommitPartition[] = [];
    for (let j = 0; j < n; j++) {
      const partitionIndex = r.int32();
      const committedOffset = r.int64();
      const committedLeaderEpoch = v >= 6 ? r.int32() : -1;
      const committedMetadata = r.nullableString();
      partitions.push({ partitionIndex, committedOffset, committedLeaderEpoch, committedMetadata });
    }
    topics.push({ name, partitions });
  }
  r.done();
  return { groupId, generationId, memberId, groupInstanceId, retentionTimeMs, topics };
}

function writeBody(w: KafkaSink, v: number, res: OffsetCommitResponse): void {
  if (v >= 3) w.int32(res.throttleTimeMs);
  writePartitionErrors(w, res);
}

export function encodeOffsetCommitResponse(
  correlationId: number,
  version: number,
  res: OffsetCommitResponse,
): Buffer {
  return encodeResponse(ApiKey.OFFSET_COMMIT, version, correlationId, writeBody, res);
}
