/**
 * 1 CreateTopic, version 1.
 *
 *   request  body = topic string | partitions u32 | configs array<(key string, value string)>
 *   response body = (empty)
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { configsSize, readConfigs, type TopicConfigs, writeConfigs } from "./topic-configs.js";
import { stringSize } from "./wire-writer.js";

export interface CreateTopicRequest {
  topic: string;
  partitions: number;
  configs: TopicConfigs;
}

export function encodeCreateTopicRequest(correlationId: number, req: CreateTopicRequest): Buffer {
  const w = requestWriter(
    ApiKey.CREATE_TOPIC,
    correlationId,
    stringSize(req.topic) + 4 + configsSize(req.configs),
  );
  w.string(req.topic).u32(req.partitions);
  writeConfigs(w, req.configs);
  return w.finish();
}

export function decodeCreateTopicRequest(frame: Buffer): CreateTopicRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const partitions = r.u32();
  const configs = readConfigs(r);
  r.done();
  return { topic, partitions, configs };
}

export const encodeCreateTopicResponse = encodeEmptyResponse;
export const decodeCreateTopicResponse = decodeEmptyResponse;
