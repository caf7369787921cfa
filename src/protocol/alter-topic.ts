/**
 * 8 AlterTopic, version 1.
 *
 *   request  body = topic string | configs array<(key string, value string)>
 *   response body = (empty)
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { configsSize, readConfigs, type TopicConfigs, writeConfigs } from "./topic-configs.js";
import { stringSize } from "./wire-writer.js";

export interface AlterTopicRequest {
  topic: string;
  configs: TopicConfigs;
}

export function encodeAlterTopicRequest(correlationId: number, req: AlterTopicRequest): Buffer {
  const w = requestWriter(
    ApiKey.ALTER_TOPIC,
    correlationId,
    stringSize(req.topic) + configsSize(req.configs),
  );
  w.string(req.topic);
  writeConfigs(w, req.configs);
  return w.finish();
}

export function decodeAlterTopicRequest(frame: Buffer): AlterTopicRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const configs = readConfigs(r);
  r.done();
  return { topic, configs };
}

export const encodeAlterTopicResponse = encodeEmptyResponse;
export const decodeAlterTopicResponse = decodeEmptyResponse;
