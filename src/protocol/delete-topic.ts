/**
 * 2 DeleteTopic, version 1.
 *
 *   request  body = topic string
 *   response body = (empty)
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface DeleteTopicRequest {
  topic: string;
}

export function encodeDeleteTopicRequest(correlationId: number, req: DeleteTopicRequest): Buffer {
  return requestWriter(ApiKey.DELETE_TOPIC, correlationId, stringSize(req.topic)).string(req.topic).finish();
}

export function decodeDeleteTopicRequest(frame: Buffer): DeleteTopicRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  r.done();
  return { topic };
}

export const encodeDeleteTopicResponse = encodeEmptyResponse;
export const decodeDeleteTopicResponse = decodeEmptyResponse;
