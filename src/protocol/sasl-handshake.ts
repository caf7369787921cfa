/**
 * 13 SaslHandshake, version 1: picks the SASL mechanism of a login (docs/security.md), after the
 * Handshake and before SaslAuthenticate. Refused with UNSUPPORTED_SASL_MECHANISM, whose message
 * lists the mechanisms this listener offers.
 *
 *   request  body = mechanism string
 *   response body = mechanisms u32 count | mechanism string...   (offered on this listener)
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface SaslHandshakeRequest {
  mechanism: string;
}

export interface SaslHandshakeResponse {
  mechanisms: string[];
}

export function encodeSaslHandshakeRequest(correlationId: number, req: SaslHandshakeRequest): Buffer {
  return requestWriter(ApiKey.SASL_HANDSHAKE, correlationId, stringSize(req.mechanism))
    .string(req.mechanism)
    .finish();
}

export function decodeSaslHandshakeRequest(frame: Buffer): SaslHandshakeRequest {
  const r = requestBodyReader(frame);
  const mechanism = r.string();
  r.done();
  return { mechanism };
}

export function encodeSaslHandshakeResponse(correlationId: number, res: SaslHandshakeResponse): Buffer {
  let size = 4;
  for (const m of res.mechanisms) size += stringSize(m);
  const w = responseWriter(correlationId, size).count(res.mechanisms.length);
  for (const m of res.mechanisms) w.string(m);
  return w.finish();
}

export function decodeSaslHandshakeResponse(frame: Buffer): SaslHandshakeResponse {
  const r = responseBodyReader(frame);
  const n = r.count(2);
  const mechanisms: string[] = [];
  for (let i = 0; i < n; i++) mechanisms.push(r.string());
  r.done();
  return { mechanisms };
}
