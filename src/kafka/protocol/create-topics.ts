/**
 * 19 CreateTopics, versions 0-4: admin clients create topics (sent to the controller).
 *
 *   request v0    = topics [name string | num_partitions int32 | replication_factor int16
 *                           | assignments [partition_index int32 | broker_ids [int32]]
 *                           | configs [name string | value nullable_string]]
 *                   | timeout_ms int32
 *   request v1-4  = v0 | validate_only boolean
 *   response v0   = topics [name string | error_code int16]
 *   response v1   = topics [name string | error_code int16 | error_message nullable_string]
 *   response v2-4 = throttle_time_ms int32 | topics (as v1)
 *
 * num_partitions -1 (v4: the broker's default) or explicit assignments are the client's choice;
 * the decoder passes them on for the broker to accept or refuse.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";
import { type TopicErrors, writeTopicErrors } from "./topic-errors.js";

export interface CreatableTopic {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  assignments: { partitionIndex: number; brokerIds: number[] }[];
  configs: { name: string; value: string | null }[];
}

export interface CreateTopicsRequest {
  topics: CreatableTopic[];
  timeoutMs: number;
  /** v1+; false below. */
  validateOnly: boolean;
}

export type CreateTopicsResponse = TopicErrors;

export function decodeCreateTopicsRequest(h: KafkaRequestHeader): CreateTopicsRequest {
  const v = checkVersion(h, ApiKey.CREATE_TOPICS);
  const r = h.body;
  const n = r.arrayCount(2 + 4 + 2 + 4 + 4);
  const topics: CreatableTopic[] = [];
  for (let i = 0; i < n; i++) {
    const name = r.string();
    const numPartitions = r.int32();
    const replicationFactor = r.int16();
    const a = r.arrayCount(8);
    const assignments: CreatableTopic["assignments"] = [];
    for (let j = 0; j < a; j++) {
      const partitionIndex = r.int32();
      const b = r.arrayCount(4);
      const brokerIds: number[] = [];
      for (let k = 0; k < b; k++) brokerIds.push(r.int32());
      assignments.push({ partitionIndex, brokerIds });
    }
    const c = r.arrayCount(4);
    const configs: CreatableTopic["configs"] = [];
    for (let j = 0; j < c; j++) {
      const configName = r.string();
      configs.push({ name: configName, value: r.nullableString() });
    }
    topics.push({ name, numPartitions, replicationFactor, assignments, configs });
  }
  const timeoutMs = r.int32();
  const validateOnly = v >= 1 ? r.boolean() : false;
  r.done();
  return { topics, timeoutMs, validateOnly };
}

export function encodeCreateTopicsResponse(
  correlationId: number,
  version: number,
  res: CreateTopicsResponse,
): Buffer {
  return encodeResponse(ApiKey.CREATE_TOPICS, version, correlationId, writeBody, res);
}

function writeBody(w: KafkaSink, v: number, res: CreateTopicsResponse): void {
  writeTopicErrors(w, v >= 2, v >= 1, res);
}
