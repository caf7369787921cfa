/**
 * 4 DescribeTopic, version 3: version 2 with each partition's leader, leader epoch, replicas and
 * in-sync replicas, as Metadata gives them, and a flag saying whether its offsets and quarantined
 * ranges are known (docs/cluster.md, "Listing and describing"). The request says whose partitions:
 * the cluster's (scope 0), or only the figures of the partitions the broker asked leads (scope 1,
 * what a broker asks of a leader; the others come back unknown).
 *
 *   request  body = topic string | scope u8
 *   response body = topic string
 *                 | partitions array<(partition u32 | leaderId u32 (NO_BROKER: offline) | leaderEpoch u32
 *                     | replicas array<u32> | isr array<u32> | figuresKnown u8
 *                     | logStartOffset u64 | logEndOffset u64 | highWatermark u64 | sizeBytes u64 | segments u32
 *                     | quarantined array<(firstOffset u64 | lastOffset u64 | segment string | reason string)>)>
 *                 | configs array<(key string, value string)>
 *
 * A partition whose figures are not known has figuresKnown 0, its figures 0 on the wire
 * (UNKNOWN_OFFSET for the offsets once decoded, the others left out) and no ranges.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { ApiKey, DESCRIBE_TOPIC_LEADERS_VERSION } from "./api.js";
import {
  DescribeScope,
  type DescribeTopicRequest,
  type DescribeTopicResponse,
  type PartitionDescription,
  UNKNOWN_OFFSET,
} from "./describe-topic.js";
import { rangesSize, readRanges, writeRanges } from "./describe-topic-v2.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { brokerIdFromWire, brokerIdToWire, readBrokerIds } from "./metadata.js";
import { configsSize, readConfigs, writeConfigs } from "./topic-configs.js";
import { stringSize } from "./wire-writer.js";

/** partition | leaderId | leaderEpoch | replicas count | isr count | figuresKnown | 3 offsets | size | segments | ranges count */
const PARTITION_BYTES = 4 + 4 + 4 + 4 + 4 + 1 + 8 + 8 + 8 + 8 + 4 + 4;

export function encodeDescribeTopicRequestV3(correlationId: number, req: DescribeTopicRequest): Buffer {
  return requestWriter(
    ApiKey.DESCRIBE_TOPIC,
    correlationId,
    stringSize(req.topic) + 1,
    0,
    DESCRIBE_TOPIC_LEADERS_VERSION,
  )
    .string(req.topic)
    .u8(req.scope ?? DescribeScope.CLUSTER)
    .finish();
}

export function decodeDescribeTopicRequestV3(frame: Buffer): Required<DescribeTopicRequest> {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const scope = r.u8();
  r.done();
  if (scope !== DescribeScope.CLUSTER && scope !== DescribeScope.LED_HERE)
    throw new ConchError(ErrorCode.INVALID_REQUEST, `describe scope ${scope} is not 0 or 1`);
  return { topic, scope };
}

export function encodeDescribeTopicResponseV3(correlationId: number, res: DescribeTopicResponse): Buffer {
  let size = stringSize(res.topic) + 4 + res.partitions.length * PARTITION_BYTES + configsSize(res.configs);
  for (const p of res.partitions) {
    size += 4 * ((p.replicas?.length ?? 0) + (p.isr?.length ?? 0));
    size += rangesSize(p.quarantined ?? []);
  }
  const w = responseWriter(correlationId, size).string(res.topic).count(res.partitions.length);
  for (const p of res.partitions) {
    const replicas = p.replicas ?? [];
    const isr = p.isr ?? [];
    w.u32(p.partition)
      .u32(brokerIdToWire(p.leaderId ?? -1))
      .u32(p.leaderEpoch ?? 0)
      .count(replicas.length);
    for (const id of replicas) w.u32(id);
    w.count(isr.length);
    for (const id of isr) w.u32(id);
    const known = p.figuresKnown !== false;
    w.u8(known ? 1 : 0)
      .u64(known ? p.logStartOffset : 0)
      .u64(known ? (p.logEndOffset ?? p.highWatermark) : 0)
      .u64(known ? p.highWatermark : 0)
      .u64(known ? (p.sizeBytes ?? 0) : 0)
      .u32(known ? (p.segments ?? 0) : 0);
    writeRanges(w, known ? (p.quarantined ?? []) : []);
  }
  writeConfigs(w, res.configs);
  return w.finish();
}

export function decodeDescribeTopicResponseV3(frame: Buffer): DescribeTopicResponse {
  const r = responseBodyReader(frame);
  const topic = r.string();
  const n = r.count(PARTITION_BYTES);
  const partitions = new Array<PartitionDescription>(n);
  for (let i = 0; i < n; i++) {
    const partition = r.u32();
    const leaderId = brokerIdFromWire(r.u32());
    const leaderEpoch = r.u32();
    const replicas = readBrokerIds(r);
    const isr = readBrokerIds(r);
    const flag = r.u8();
    if (flag > 1)
      throw new ConchError(ErrorCode.MALFORMED_REQUEST, `figuresKnown must be 0 or 1, got ${flag}`);
    const figuresKnown = flag === 1;
    const logStartOffset = r.u64();
    const logEndOffset = r.u64();
    const highWatermark = r.u64();
    const sizeBytes = r.u64();
    const segments = r.u32();
    const quarantined = readRanges(r);
    partitions[i] = {
      partition,
      logStartOffset: figuresKnown ? logStartOffset : UNKNOWN_OFFSET,
      highWatermark: figuresKnown ? highWatermark : UNKNOWN_OFFSET,
      figuresKnown,
      leaderId,
      leaderEpoch,
      replicas,
      isr,
      ...(figuresKnown ? { logEndOffset, sizeBytes, segments, quarantined } : {}),
    };
  }
  const configs = readConfigs(r);
  r.done();
  return { topic, partitions, configs };
}
