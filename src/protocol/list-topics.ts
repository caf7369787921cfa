/**
 * 3 ListTopics, version 1.
 *
 *   request  body = (empty)
 *   response body = topics array<string>
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface ListTopicsResponse {
  topics: string[];
}

export function encodeListTopicsRequest(correlationId: number): Buffer {
  return requestWriter(ApiKey.LIST_TOPICS, correlationId, 0).finish();
}

/** The request has no body; this only checks that it has none. */
export function decodeListTopicsRequest(frame: Buffer): void {
  requestBodyReader(frame).done();
}

export function encodeListTopicsResponse(correlationId: number, res: ListTopicsResponse): Buffer {
  let size = 4;
  for (const topic of res.topics) size += stringSize(topic);
  const w = responseWriter(correlationId, size).count(res.topics.length);
  for (const topic of res.topics) w.string(topic);
  return w.finish();
}

export function decodeListTopicsResponse(frame: Buffer): ListTopicsResponse {
  const r = responseBodyReader(frame);
  const n = r.count(2);
  const topics = new Array<string>(n);
  for (let i = 0; i < n; i++) topics[i] = r.string();
  r.done();
  return { topics };
}
