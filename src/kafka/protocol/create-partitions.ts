/**
 * 37 CreatePartitions, versions 0-1: admin clients add partitions to topics.
 *
 *   request v0-1  = topics [name string | count int32 | assignments nullable [broker_ids [int32]]]
 *                   | timeout_ms int32 | validate_only boolean
 *   response v0-1 = throttle_time_ms int32
 *                   | results [name string | error_code int16 | error_message nullable_string]
 *
 * `count` is the new total number of partitions, not the number added.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";
import { type TopicErrors, writeTopicErrors } from "./topic-errors.js";

export interface CreatePartitionsTopic {
  name: string;
  count: number;
  /** One list of broker ids per new partition; null = the broker places them. */
  assignments: number[][] | null;
}

export interface CreatePartitionsRequest {
  topics: CreatePartitionsTopic[];
  timeoutMs: number;
  validateOnly: boolean;
}

export type CreatePartitionsResponse = TopicErrors;

export function decodeCreatePartitionsRequest(h: KafkaRequestHeader): CreatePartitionsRequest {
  checkVersion(h, ApiKey.CREATE_PARTITIONS);
  const r = h.body;
  const n = r.arrayCount(2 + 4 + 4);
  const topics: CreatePartitionsTopic[] = [];
  for (let i = 0; i < n; i++) {
    const name = r.string();
    const count = r.int32();
    const a = r.nullableArrayCount(4);
    let assignments: number[][] | null = null;
    if (a >= 0) {
      assignments = [];
      for (let j = 0; j < a; j++) {
        const b = r.arrayCount(4);
        const brokerIds: number[] = [];
        for (let k = 0; k < b; k++) brokerIds.push(r.int32());
        assignments.push(brokerIds);
      }
    }
    topics.push({ name, count, assignments });
  }
  const timeoutMs = r.int32();
  const validateOnly = r.boolean();
  r.done();
  return { topics, timeoutMs, validateOnly };
}

function writeBody(w: KafkaSink, _v: number, res: CreatePartitionsResponse): void {
  writeTopicErrors(w, true, true, res);
}

export function encodeCreatePartitionsResponse(
  correlationId: number,
  version: number,
  res: CreatePartitionsResponse,
): Buffer {
  return encodeResponse(ApiKey.CREATE_PARTITIONS, version, correlationId, writeBody, res);
}
