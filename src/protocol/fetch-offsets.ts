/**
 * 24 FetchOffsets, version 1: a group's committed offsets.
 *
 *   request  body = group string | partitions array<(topic string | partition u32)>
 *   response body = offsets array<(topic string | partition u32 | offset i64)>
 *
 * An empty `partitions` asks for every offset the group has committed. The response has one entry
 * per partition asked for, in the same order; `offset` is the next offset the group will read, or
 * -1 ("none") when nothing was committed for that partition.
 */
import { ApiKey } from "./api.js";
import type { PartitionOffset } from "./commit-offsets.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface GroupTopicPartition {
  topic: string;
  partition: number;
}

export interface FetchOffsetsRequest {
  group: string;
  partitions: GroupTopicPartition[];
}

export interface FetchOffsetsResponse {
  /** offset -1: none committed. */
  offsets: PartitionOffset[];
}

const MIN_PARTITION_BYTES = 2 + 4;
const MIN_OFFSET_BYTES = 2 + 4 + 8;

export function encodeFetchOffsetsRequest(correlationId: number, req: FetchOffsetsRequest): Buffer {
  let size = stringSize(req.group) + 4;
  for (const p of req.partitions) size += stringSize(p.topic) + 4;
  const w = requestWriter(ApiKey.FETCH_OFFSETS, correlationId, size)
    .string(req.group)
    .count(req.partitions.length);
  for (const p of req.partitions) w.string(p.topic).u32(p.partition);
  return w.finish();
}

export function decodeFetchOffsetsRequest(frame: Buffer): FetchOffsetsRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  const n = r.count(MIN_PARTITION_BYTES);
  const partitions = new Array<GroupTopicPartition>(n);
  for (let i = 0; i < n; i++) {
    const topic = r.string();
    const partition = r.u32();
    partitions[i] = { topic, partition };
  }
  r.done();
  return { group, partitions };
}

export function encodeFetchOffsetsResponse(correlationId: number, res: FetchOffsetsResponse): Buffer {
  let size = 4;
  for (const o of res.offsets) size += stringSize(o.topic) + 12;
  const w = responseWriter(correlationId, size).count(res.offsets.length);
  for (const o of res.offsets) w.string(o.topic).u32(o.partition).i64(o.offset);
  return w.finish();
}

export function decodeFetchOffsetsResponse(frame: Buffer): FetchOffsetsResponse {
  const r = responseBodyReader(frame);
  const n = r.count(MIN_OFFSET_BYTES);
  const offsets = new Array<PartitionOffset>(n);
  for (let i = 0; i < n; i++) {
    const topic = r.string();
    const partition = r.u32();
    const offset = r.i64();
    offsets[i] = { topic, partition, offset };
  }
  r.done();
  return { offsets };
}
