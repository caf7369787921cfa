/**
 * 0 Produce, versions 0-7: record batches (RecordBatch v2, record-batch.ts) for partitions.
 *
 *   request v0-2  = acks int16 | timeout_ms int32 | topic_data (as v3)
 *   request v3-7  = transactional_id nullable_string | acks int16 | timeout_ms int32
 *                   | topic_data [name string
 *                                 | partition_data [index int32 | records nullable_bytes]]
 *   response v0   = responses [name string
 *                              | partition_responses [index int32 | error_code int16 | base_offset int64]]
 *   response v1   = as v0 | throttle_time_ms int32
 *   response v2-4 = responses [name string
 *                              | partition_responses [index int32 | error_code int16
 *                                                     | base_offset int64 | log_append_time_ms int64]]
 *                   | throttle_time_ms int32
 *   response v5-7 = as v3, each partition ending with log_start_offset int64
 *
 * v0-2 carry message sets v0/v1, which Conch does not store: they are decoded only so that every
 * partition can be answered UNSUPPORTED_VERSION (PRODUCE_FIRST_SERVED), in the shape of the
 * version asked. They are advertised because librdkafka compresses only when Produce v0 is in the
 * broker's range (docs/kafka.md, "Versions").
 * v4-7 change no bytes of the request: v4 adds KAFKA_STORAGE_ERROR, v5 the log start offset, v6
 * throttling after the response, v7 zstd. Produce 3 is the first with RecordBatch v2 (headers).
 * `records` is a view of the request frame, never a copy: the broker validates and stores those
 * bytes. With acks = 0 the broker sends no response at all.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

/** The first Produce version whose batches are stored; below it every partition is refused. */
export const PRODUCE_FIRST_SERVED = 3;

export interface ProducePartitionData {
  index: number;
  /** Whole RecordBatch v2 batches, as a view of the request frame; null when the client sent none. */
  records: Buffer | null;
}

export interface ProduceTopicData {
  name: string;
  partitions: ProducePartitionData[];
}

export interface ProduceRequest {
  transactionalId: string | null;
  /** 0 (no response), 1 (leader) or -1 (all in-sync replicas); anything else is for the broker to refuse. */
  acks: number;
  timeoutMs: number;
  topics: ProduceTopicData[];
}

export interface ProducePartitionResponse {
  index: number;
  errorCode: number;
  baseOffset: number;
  /** -1 unless the topic stamps log-append time. */
  logAppendTimeMs: number;
  /** v5+. */
  logStartOffset: number;
}

export interface ProduceResponse {
  topics: readonly { name: string; partitions: readonly ProducePartitionResponse[] }[];
  throttleTimeMs: number;
}

export function decodeProduceRequest(h: KafkaRequestHeader): ProduceRequest {
  const v = checkVersion(h, ApiKey.PRODUCE);
  const r = h.body;
  const transactionalId = v >= 3 ? r.nullableString() : null;
  // Any other acks is well-formed bytes: the broker answers INVALID_REQUIRED_ACKS, as Kafka does.
  const acks = r.int16();
  const timeoutMs = r.int32();
  const topicCount = r.arrayCount(6);
  const topics: ProduceTopicData[] = [];
  for (let i = 0; i < topicCount; i++) {
    const name = r.string();
    const partitionCount = r.arrayCount(8);
    const partitions: ProducePartitionData[] = [];
    for (let j = 0; j < partitionCount; j++) {
      const index = r.int32();
      partitions.push({ index, records: r.nullableBytes() });
    }
    topics.push({ name, partitions });
  }
  r.done();
  return { transactionalId, acks, timeoutMs, topics };
}

function writeBody(w: KafkaSink, v: number, res: ProduceResponse): void {
  w.arrayCount(res.topics.length);
  for (const t of res.topics) {
    w.string(t.name);
    w.arrayCount(t.partitions.length);
    for (const p of t.partitions) {
      w.int32(p.index);
      w.int16(p.errorCode);
      w.int64(p.baseOffset);
      if (v >= 2) w.int64(p.logAppendTimeMs);
      if (v >= 5) w.int64(p.logStartOffset);
    }
  }
  if (v >= 1) w.int32(res.throttleTimeMs);
}

export function encodeProduceResponse(correlationId: number, version: number, res: ProduceResponse): Buffer {
  return encodeResponse(ApiKey.PRODUCE, version, correlationId, writeBody, res);
}
