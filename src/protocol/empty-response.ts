/**
 * The success response with an empty body, shared by CreateTopic, DeleteTopic and AlterTopic.
 *
 *   response = size u32 (= 6) | correlationId u32 | errorCode u16 (= 0)
 */
import { responseBodyReader } from "./error-response.js";
import { responseWriter } from "./frame.js";

export function encodeEmptyResponse(correlationId: number): Buffer {
  return responseWriter(correlationId, 0).finish();
}

/** Checks a response is an empty success; an error response is thrown as its ConchError. */
export function decodeEmptyResponse(frame: Buffer): void {
  responseBodyReader(frame).done();
}
