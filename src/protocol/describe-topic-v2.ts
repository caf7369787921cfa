/**
 * 4 DescribeTopic, version 2: version 1 with each partition's quarantined ranges (stored data that
 * failed its check; docs/design.md, "Recovery and damaged data").
 *
 *   request  body = topic string                                              (as version 1)
 *   response body = topic string
 *                 | partitions array<(partition u32 | logStartOffset u64 | highWatermark u64
 *                     | quarantined array<(firstOffset u64 | lastOffset u64 | segment string | reason string)>)>
 *                 | configs array<(key string, value string)>
 */
import { ApiKey, DESCRIBE_TOPIC_QUARANTINE_VERSION } from "./api.js";
import type { DescribeTopicRequest, DescribeTopicResponse, QuarantinedRangeInfo } from "./describe-topic.js";
import { responseBodyReader } from "./error-response.js";
import { requestWriter, responseWriter } from "./frame.js";
import { configsSize, readConfigs, writeConfigs } from "./topic-configs.js";
import type { WireReader } from "./wire-reader.js";
import { stringSize, type WireWriter } from "./wire-writer.js";

/** partition u32 | logStartOffset u64 | highWatermark u64 | quarantined count u32 */
const PARTITION_BYTES = 4 + 8 + 8 + 4;
/** firstOffset u64 | lastOffset u64 | two empty strings */
const RANGE_MIN_BYTES = 8 + 8 + 2 + 2;

export function encodeDescribeTopicRequestV2(correlationId: number, req: DescribeTopicRequest): Buffer {
  const size = stringSize(req.topic);
  return requestWriter(ApiKey.DESCRIBE_TOPIC, correlationId, size, 0, DESCRIBE_TOPIC_QUARANTINE_VERSION)
    .string(req.topic)
    .finish();
}

/** The bytes of a partition's quarantined ranges past their count (versions 2 and 3). */
export function rangesSize(ranges: readonly QuarantinedRangeInfo[]): number {
  let size = 0;
  for (const q of ranges) size += 16 + stringSize(q.segment) + stringSize(q.reason);
  return size;
}

export function writeRanges(w: WireWriter, ranges: readonly QuarantinedRangeInfo[]): void {
  w.count(ranges.length);
  for (const q of ranges) w.u64(q.firstOffset).u64(q.lastOffset).string(q.segment).string(q.reason);
}

export function readRanges(r: WireReader): QuarantinedRangeInfo[] {
  const m = r.count(RANGE_MIN_BYTES);
  const ranges = new Array<QuarantinedRangeInfo>(m);
  for (let j = 0; j < m; j++) {
    const firstOffset = r.u64();
    const lastOffset = r.u64();
    const segment = r.string();
    const reason = r.string();
    ranges[j] = { firstOffset, lastOffset, segment, reason };
  }
  return ranges;
}

export function encodeDescribeTopicResponseV2(correlationId: number, res: DescribeTopicResponse): Buffer {
  let size = stringSize(res.topic) + 4 + res.partitions.length * PARTITION_BYTES + configsSize(res.configs);
  for (const p of res.partitions) size += rangesSize(p.quarantined ?? []);
  const w = responseWriter(correlationId, size).string(res.topic).count(res.partitions.length);
  for (const p of res.partitions) {
    w.u32(p.partition).u64(p.logStartOffset).u64(p.highWatermark);
    writeRanges(w, p.quarantined ?? []);
  }
  writeConfigs(w, res.configs);
  return w.finish();
}

export function decodeDescribeTopicResponseV2(frame: Buffer): DescribeTopicResponse {
  const r = responseBodyReader(frame);
  const topic = r.string();
  const n = r.count(PARTITION_BYTES);
  const partitions = new Array<DescribeTopicResponse["partitions"][number]>(n);
  for (let i = 0; i < n; i++) {
    const partition = r.u32();
    const logStartOffset = r.u64();
    const highWatermark = r.u64();
    const quarantined = readRanges(r);
    partitions[i] = { partition, logStartOffset, highWatermark, quarantined };
  }
  const configs = readConfigs(r);
  r.done();
  return { topic, partitions, configs };
}
