/**
 * 20 DeleteTopics, versions 0-3: admin clients delete topics (sent to the controller).
 *
 *   request v0-3  = topic_names [string] | timeout_ms int32
 *   response v0   = responses [name string | error_code int16]
 *   response v1-3 = throttle_time_ms int32 | responses (as v0)
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";
import { type TopicErrors, writeTopicErrors } from "./topic-errors.js";

export interface DeleteTopicsRequest {
  topicNames: string[];
  timeoutMs: number;
}

/** Error messages are not part of DeleteTopics before v5: they are not written. */
export type DeleteTopicsResponse = TopicErrors;

export function decodeDeleteTopicsRequest(h: KafkaRequestHeader): DeleteTopicsRequest {
  checkVersion(h, ApiKey.DELETE_TOPICS);
  const r = h.body;
  const n = r.arrayCount(2);
  const topicNames: string[] = [];
  for (let i = 0; i < n; i++) topicNames.push(r.string());
  const timeoutMs = r.int32();
  r.done();
  return { topicNames, timeoutMs };
}

function writeBody(w: KafkaSink, v: number, res: DeleteTopicsResponse): void {
  writeTopicErrors(w, v >= 1, false, res);
}

export function encodeDeleteTopicsResponse(
  correlationId: number,
  version: number,
  res: DeleteTopicsResponse,
): Buffer {
  return encodeResponse(ApiKey.DELETE_TOPICS, version, correlationId, writeBody, res);
}
