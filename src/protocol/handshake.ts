/**
 * 0 Handshake, version 1: the first request on every connection.
 *
 *   request  body = minVersion u16 | maxVersion u16 | clientId string
 *   response body = version u16 | maxFrameBytes u32 | maxBatchBytes u32
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface HandshakeRequest {
  minVersion: number;
  maxVersion: number;
  clientId: string;
}

export interface HandshakeResponse {
  /** The highest protocol version both sides support. */
  version: number;
  maxFrameBytes: number;
  maxBatchBytes: number;
}

const RESPONSE_BODY_BYTES = 2 + 4 + 4;

export function encodeHandshakeRequest(correlationId: number, req: HandshakeRequest): Buffer {
  const w = requestWriter(ApiKey.HANDSHAKE, correlationId, 4 + stringSize(req.clientId));
  return w.u16(req.minVersion).u16(req.maxVersion).string(req.clientId).finish();
}

export function decodeHandshakeRequest(frame: Buffer): HandshakeRequest {
  const r = requestBodyReader(frame);
  const minVersion = r.u16();
  const maxVersion = r.u16();
  const clientId = r.string();
  r.done();
  return { minVersion, maxVersion, clientId };
}

export function encodeHandshakeResponse(correlationId: number, res: HandshakeResponse): Buffer {
  const w = responseWriter(correlationId, RESPONSE_BODY_BYTES);
  return w.u16(res.version).u32(res.maxFrameBytes).u32(res.maxBatchBytes).finish();
}

export function decodeHandshakeResponse(frame: Buffer): HandshakeResponse {
  const r = responseBodyReader(frame);
  const version = r.u16();
  const maxFrameBytes = r.u32();
  const maxBatchBytes = r.u32();
  r.done();
  return { version, maxFrameBytes, maxBatchBytes };
}
