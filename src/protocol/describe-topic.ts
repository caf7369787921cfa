/**
 * 4 DescribeTopic, version 1 (version 2, with quarantined ranges, is describe-topic-v2.ts; version
 * 3, with each partition's leader, replicas and ISR, describe-topic-v3.ts).
 *
 *   request  body = topic string
 *   response body = topic string
 *                 | partitions array<(partition u32 | logStartOffset u64 | highWatermark u64)>
 *                 | configs array<(key string, value string)>
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { configsSize, readConfigs, type TopicConfigs, writeConfigs } from "./topic-configs.js";
import { stringSize } from "./wire-writer.js";

export interface DescribeTopicRequest {
  topic: string;
  /**
   * Version 3: the cluster's partitions with figures asked of each leader (CLUSTER, the default),
   * or the figures of the partitions the broker asked leads (LED_HERE: what a broker asks a leader).
   */
  scope?: DescribeScope;
}

export const DescribeScope = { CLUSTER: 0, LED_HERE: 1 } as const;
export type DescribeScope = (typeof DescribeScope)[keyof typeof DescribeScope];

/** logStartOffset and highWatermark of a partition whose leader's figures are not known (version 3). */
export const UNKNOWN_OFFSET = -1;

/**
 * Why a partition's offsets are not known (cluster mode; or a single-node broker, broker 0, still
 * recovering the partition after a crash), for those who need them.
 */
export function figuresUnknownError(topic: string, partition: number, leaderId: number): ConchError {
  const why =
    leaderId < 0
      ? "it has no leader"
      : `its leader, broker ${leaderId}, did not answer in time or is still recovering it after a crash; try again`;
  return new ConchError(ErrorCode.TIMEOUT, `the offsets of ${topic}/${partition} are not known here: ${why}`);
}

export interface PartitionDescription {
  partition: number;
  /** UNKNOWN_OFFSET (-1) when the broker asked does not know it (version 3: see `figuresKnown`). */
  logStartOffset: number;
  highWatermark: number;
  /**
   * Version 3: whether logStartOffset, highWatermark and quarantined are the leader's figures. False
   * in cluster mode when the leader did not answer in time or there is none (offline), and on a
   * single-node broker while the partition is still being recovered after a crash; both offsets
   * are then UNKNOWN_OFFSET. Absent from older versions, whose figures are always known.
   */
  figuresKnown?: boolean;
  /** Version 3, when the figures are known: the log end (past the high watermark while followers catch up), bytes and segment files on the leader. */
  logEndOffset?: number;
  sizeBytes?: number;
  segments?: number;
  /** Version 3: the leader's broker id (-1: offline), its epoch, the replicas and the in-sync replicas. */
  leaderId?: number;
  leaderEpoch?: number;
  replicas?: readonly number[];
  isr?: readonly number[];
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
