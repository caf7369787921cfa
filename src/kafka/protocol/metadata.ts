/**
 * 3 Metadata, versions 0-6: brokers, the controller, and each topic's partitions and leaders.
 *
 *   request v0   = topics [name string]                   (empty = all topics)
 *   request v1-3 = topics nullable [name string]          (null = all topics, empty = none)
 *   request v4-6 = v1 | allow_auto_topic_creation boolean
 *
 *   response v0  = brokers [node_id int32 | host string | port int32]
 *                  | topics [error_code int16 | name string
 *                            | partitions [error_code int16 | partition_index int32 | leader_id int32
 *                                          | replica_nodes [int32] | isr_nodes [int32]]]
 *   response v1  = brokers [node_id | host | port | rack nullable_string] | controller_id int32
 *                  | topics [error_code | name | is_internal boolean | partitions (as v0)]
 *   response v2  = brokers | cluster_id nullable_string | controller_id | topics (as v1)
 *   response v3-4= throttle_time_ms int32 | v2
 *   response v5-6= v3, each partition ending with offline_replicas [int32]
 *
 * librdkafka uses up to 4, kafka-python's admin up to 5 (and needs v1's controller id), kafkajs up
 * to 6 (the same bytes as 5).
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface MetadataRequest {
  /** null = every topic. */
  topics: string[] | null;
  /** v4+; true below (older brokers always auto-created). */
  allowAutoTopicCreation: boolean;
}

export interface MetadataBroker {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface MetadataPartition {
  errorCode: number;
  partitionIndex: number;
  leaderId: number;
  replicaNodes: readonly number[];
  isrNodes: readonly number[];
  offlineReplicas: readonly number[];
}

export interface MetadataTopic {
  errorCode: number;
  name: string;
  isInternal: boolean;
  partitions: readonly MetadataPartition[];
}

export interface MetadataResponse {
  throttleTimeMs: number;
  brokers: readonly MetadataBroker[];
  clusterId: string | null;
  controllerId: number;
  topics: readonly MetadataTopic[];
}

export function decodeMetadataRequest(h: KafkaRequestHeader): MetadataRequest {
  const v = checkVersion(h, ApiKey.METADATA);
  const r = h.body;
  const n = v === 0 ? r.arrayCount(2) : r.nullableArrayCount(2);
  let topics: string[] | null = null;
  // v0 had no null: an empty list meant every topic.
  if (n > 0 || (n === 0 && v > 0)) {
    topics = [];
    for (let i = 0; i < n; i++) topics.push(r.string());
  }
  const allowAutoTopicCreation = v >= 4 ? r.boolean() : true;
  r.done();
  return { topics, allowAutoTopicCreation };
}

function int32Array(w: KafkaSink, values: readonly number[]): void {
  w.arrayCount(values.length);
  for (const x of values) w.int32(x);
}

function writeBody(w: KafkaSink, v: number, res: MetadataResponse): void {
  if (v >= 3) w.int32(res.throttleTimeMs);
  w.arrayCount(res.brokers.length);
  for (const b of res.brokers) {
    w.int32(b.nodeId);
    w.string(b.host);
    w.int32(b.port);
    if (v >= 1) w.nullableString(b.rack);
  }
  if (v >= 2) w.nullableString(res.clusterId);
  if (v >= 1) w.int32(res.controllerId);
  w.arrayCount(res.topics.length);
  for (const t of res.topics) {
    w.int16(t.errorCode);
    w.string(t.name);
    if (v >= 1) w.boolean(t.isInternal);
    w.arrayCount(t.partitions.length);
    for (const p of t.partitions) {
      w.int16(p.errorCode);
      w.int32(p.partitionIndex);
      w.int32(p.leaderId);
      int32Array(w, p.replicaNodes);
      int32Array(w, p.isrNodes);
      if (v >= 5) int32Array(w, p.offlineReplicas);
    }
  }
}

export function encodeMetadataResponse(
  correlationId: number,
  version: number,
  res: MetadataResponse,
): Buffer {
  return encodeResponse(ApiKey.METADATA, version, correlationId, writeBody, res);
}
