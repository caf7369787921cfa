/**
 * 4 DescribeTopic, version 1 (version 2, with quarantined ranges, is describe-topic-v2.ts).
 *
 *   request  body = topic string
 *   response body = topic string
 *                 | partitions array<(partition u32 | logStartOffset u64 | highWatermark u64)>
 *                 | configs array<(key string, value string)>
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { configsSize, readConfigs, type TopicConfigs, writeConfigs } from "./topic-configs.js";
import { stringSize } from "./wire-writer.js";

export interface DescribeTopicRequest {
  topic: string;
}

export interface PartitionDescription {
  partition: number;
  logStartOffset: number;
  highWatermark: number;
  /**
   * Version 2: the partition's quarantined ranges, oldest first (empty when none). Absent in a
   * version 1 response: a broker that old does not report them.
   */
  quarantined?: QuarantinedRangeInfo[];
}

/** Offsets of stored data that failed its check, where they are stored, and what the check said. */
export interface QuarantinedRangeInfo {
  firstOffset: number;
  lastOffset: number;
  /** The segment file holding them (or, when a segment file is missing, the one before the gap). */
  segment: string;
  reason: string;
}

export interface DescribeTopicResponse {
  topic: string;
  partitions: PartitionDescription[];
  configs: TopicConfigs;
}

const PARTITION_BYTES = 4 + 8 + 8;

export function encodeDescribeTopicRequest(correlationId: number, req: DescribeTopicRequest): Buffer {
  return requestWriter(ApiKey.DESCRIBE_TOPIC, correlationId, stringSize(req.topic))
    .string(req.topic)
    .finish();
}

export function decodeDescribeTopicRequest(frame: Buffer): DescribeTopicRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  r.done();
  return { topic };
}

export function encodeDescribeTopicResponse(correlationId: number, res: DescribeTopicResponse): Buffer {
  const size = stringSize(res.topic) + 4 + res.partitions.length * PARTITION_BYTES + configsSize(res.configs);
  const w = responseWriter(correlationId, size).string(res.topic).count(res.partitions.length);
  for (const p of res.partitions) w.u32(p.partition).u64(p.logStartOffset).u64(p.highWatermark);
  writeConfigs(w, res.configs);
  return w.finish();
}

export function decodeDescribeTopicResponse(frame: Buffer): DescribeTopicResponse {
  const r = responseBodyReader(frame);
  const topic = r.string();
  const n = r.count(PARTITION_BYTES);
  const partitions = new Array<PartitionDescription>(n);
  for (let i = 0; i < n; i++) {
    const partition = r.u32();
    const logStartOffset = r.u64();
    const highWatermark = r.u64();
    partitions[i] = { partition, logStartOffset, highWatermark };
  }
  const configs = readConfigs(r);
  r.done();
  return { topic, partitions, configs };
}
