/**
 * 36 SaslAuthenticate, versions 0-1: one SASL token each way, after a SaslHandshake v1 (KIP-152).
 *
 *   request v0-1  = auth_bytes bytes
 *   response v0   = error_code int16 | error_message nullable_string | auth_bytes bytes
 *   response v1   = v0 | session_lifetime_ms int64       (0: the session does not expire)
 *
 * v2 is flexible and not served. The token is bounded here, before anyone reads it: a SCRAM
 * message is at most a few hundred bytes, so a larger one is refused as malformed.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

/** The largest SASL token accepted (the native protocol's bound, docs/security.md). */
export const MAX_KAFKA_SASL_TOKEN_BYTES = 4096;

export interface SaslAuthenticateRequest {
  /** A view of the request frame. */
  authBytes: Buffer;
}

export interface SaslAuthenticateResponse {
  errorCode: number;
  errorMessage: string | null;
  authBytes: Buffer;
  /** v1; 0 when the session does not expire. */
  sessionLifetimeMs: number;
}

export function decodeSaslAuthenticateRequest(h: KafkaRequestHeader): SaslAuthenticateRequest {
  checkVersion(h, ApiKey.SASL_AUTHENTICATE);
  const r = h.body;
  const authBytes = r.bytes();
  if (authBytes.length > MAX_KAFKA_SASL_TOKEN_BYTES) {
    throw r.malformed(`a ${authBytes.length}-byte SASL token (at most ${MAX_KAFKA_SASL_TOKEN_BYTES})`);
  }
  r.done();
  return { authBytes };
}

function writeBody(w: KafkaSink, v: number, res: SaslAuthenticateResponse): void {
  w.int16(res.errorCode);
  w.nullableString(res.errorMessage);
  w.bytes(res.authBytes);
  if (v >= 1) w.int64(res.sessionLifetimeMs);
}

export function encodeSaslAuthenticateResponse(
  correlationId: number,
  version: number,
  res: SaslAuthenticateResponse,
): Buffer {
  return encodeResponse(ApiKey.SASL_AUTHENTICATE, version, correlationId, writeBody, res);
}
