/**
 * Topic administration: one request each, on the client's shared connection.
 * Errors come back as ConchError with the broker's code (TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC,
 * INVALID_CONFIG, ...).
 */

import { decodeAlterTopicResponse, encodeAlterTopicRequest } from "../protocol/alter-topic.js";
import { OffsetSpec } from "../protocol/api.js";
import {
  decodeCreatePartitionsResponse,
  encodeCreatePartitionsRequest,
} from "../protocol/create-partitions.js";
import { decodeCreateTopicResponse, encodeCreateTopicRequest } from "../protocol/create-topic.js";
import { decodeDeleteTopicResponse, encodeDeleteTopicRequest } from "../protocol/delete-topic.js";
import { type DescribeTopicResponse, figuresUnknownError } from "../protocol/describe-topic.js";
import { decodeListOffsetsResponse, encodeListOffsetsRequest } from "../protocol/list-offsets.js";
import { decodeListTopicsResponse, encodeListTopicsRequest } from "../protocol/list-topics.js";
import {
  decodeReassignPartitionsResponse,
  encodeReassignPartitionsRequest,
  type PartitionReassignment,
} from "../protocol/reassign-partitions.js";
import type { ConnectionManager } from "./connection-manager.js";
import { describeTopicNewest } from "./describe-topic-versions.js";
import type { StartPosition } from "./partition-fetcher.js";

export type {
  DescribeTopicResponse as TopicDescription,
  QuarantinedRangeInfo,
} from "../protocol/describe-topic.js";

/** Topic configs by key: cleanup.policy, retention.ms, retention.bytes, segment.bytes, flush, ... */
export type TopicConfigs = Record<string, string>;

export interface CreateTopicOptions {
  /** Default 1. */
  partitions?: number;
  configs?: TopicConfigs;
}

export interface OffsetLookup {
  /** False when a timestamp lookup found no record at or after the time; offset is then the end. */
  found: boolean;
  offset: number;
}

export interface AdminCallOptions {
  signal?: AbortSignal;
}

export class Admin {
  #manager: ConnectionManager;

  constructor(manager: ConnectionManager) {
    this.#manager = manager;
  }

  async createTopic(
    topic: string,
    options: CreateTopicOptions = {},
    call: AdminCallOptions = {},
  ): Promise<void> {
    const req = { topic, partitions: options.partitions ?? 1, configs: options.configs ?? {} };
    await this.#manager.request(encodeCreateTopicRequest, req, decodeCreateTopicResponse, call);
  }

  async deleteTopic(topic: string, call: AdminCallOptions = {}): Promise<void> {
    await this.#manager.request(encodeDeleteTopicRequest, { topic }, decodeDeleteTopicResponse, call);
  }

  async listTopics(call: AdminCallOptions = {}): Promise<string[]> {
    const res = await this.#manager.request(noBody, undefined, decodeListTopicsResponse, call);
    return res.topics;
  }

  /**
   * The topic's partitions, each with its leader, replicas and in-sync replicas, its offsets and
   * its quarantined ranges (stored data that failed its check), and the topic's configs. In cluster
   * mode any broker describes any topic, asking each partition's leader for its figures: a
   * partition whose leader did not answer in time has `figuresKnown: false` and offsets of -1
   * (UNKNOWN_OFFSET; `requireFigures` refuses such a description). So has a partition a single-node
   * broker is still recovering after a crash: the answer comes at once rather than after the
   * recovery. Against older brokers it asks at version 2, then 1: the partitions then come without
   * placement (and, at 1, without ranges), and such a broker waits for the recovery.
   */
  describeTopic(topic: string, call: AdminCallOptions = {}): Promise<DescribeTopicResponse> {
    return describeTopicNewest(this.#manager, topic, call);
  }

  /** Changes the given configs; others keep their values. */
  async alterTopic(topic: string, configs: TopicConfigs, call: AdminCallOptions = {}): Promise<void> {
    await this.#manager.request(encodeAlterTopicRequest, { topic, configs }, decodeAlterTopicResponse, call);
  }

  /**
   * Grows a topic to `partitions` partitions in all (the new total, not the number to add);
   * existing partitions keep their data and a topic never shrinks (INVALID_PARTITIONS). Producers
   * and consumers of this or any client see the new partitions at their next metadata refresh.
   */
  async createPartitions(topic: string, partitions: number, call: AdminCallOptions = {}): Promise<void> {
    await this.#manager.request(
      encodeCreatePartitionsRequest,
      { topic, partitions },
      decodeCreatePartitionsResponse,
      call,
    );
  }

  /**
   * Cluster mode: moves each partition to its new replica list, the preferred leader first
   * (docs/cluster.md, "Reassignment"). Resolves once the moves are recorded; the new replicas then
   * catch up, join the ISR and the old ones are dropped while producers and consumers keep running.
   */
  async reassignPartitions(moves: PartitionReassignment[], call: AdminCallOptions = {}): Promise<void> {
    await this.#manager.request(
      encodeReassignPartitionsRequest,
      { moves },
      decodeReassignPartitionsResponse,
      call,
    );
  }

  /**
   * An offset of a partition: "earliest" (the log start), "latest" (the high watermark: the next
   * offset to be written) or `{ timestamp }` (the first record at or after it, in ms).
   */
  listOffsets(
    topic: string,
    partition: number,
    at: Exclude<StartPosition, { offset: number }>,
    call: AdminCallOptions = {},
  ): Promise<OffsetLookup> {
    const spec =
      at === "earliest" ? OffsetSpec.EARLIEST : at === "latest" ? OffsetSpec.LATEST : OffsetSpec.TIMESTAMP;
    const timestampMs = typeof at === "object" ? at.timestamp : 0;
    return this.#manager.request(
      encodeListOffsetsRequest,
      { topic, partition, spec, timestampMs },
      decodeListOffsetsResponse,
      call,
    );
  }
}

/**
 * Throws the retriable TIMEOUT when a partition's offsets are not known (cluster mode: its leader
 * did not answer the broker asked in time, or it has none; a single node: still recovering it
 * after a crash): for callers that compute from them.
 */
export function requireFigures(view: DescribeTopicResponse): void {
  const missing = view.partitions.find((p) => p.figuresKnown === false);
  if (missing === undefined) return;
  throw figuresUnknownError(view.topic, missing.partition, missing.leaderId ?? -1);
}

function noBody(correlationId: number): Buffer {
  return encodeListTopicsRequest(correlationId);
}
