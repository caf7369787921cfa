/**
 * 14 SaslAuthenticate, version 1: one message of the SASL exchange chosen by SaslHandshake (one
 * for PLAIN, two for SCRAM), answered with the server's message (empty for PLAIN). A failed login
 * is answered AUTHENTICATION_FAILED and the connection closes.
 *
 *   request  body = authBytes bytes
 *   response body = authBytes bytes
 *
 * The broker refuses authBytes over MAX_SASL_MESSAGE_BYTES before decoding them.
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { bytesSize } from "./wire-writer.js";

/** The largest SASL message either side sends (a SCRAM message is at most 2048 bytes). */
export const MAX_SASL_MESSAGE_BYTES = 4096;

export function encodeSaslAuthenticateRequest(correlationId: number, authBytes: Uint8Array): Buffer {
  return requestWriter(ApiKey.SASL_AUTHENTICATE, correlationId, bytesSize(authBytes.length))
    .bytes(authBytes)
    .finish();
}

/** The client's message, as a view of the frame. */
export function decodeSaslAuthenticateRequest(frame: Buffer): Buffer {
  const r = requestBodyReader(frame);
  const authBytes = r.bytes();
  r.done();
  return authBytes;
}

export function encodeSaslAuthenticateResponse(correlationId: number, authBytes: Uint8Array): Buffer {
  return responseWriter(correlationId, bytesSize(authBytes.length)).bytes(authBytes).finish();
}

export function decodeSaslAuthenticateResponse(frame: Buffer): Buffer {
  const r = responseBodyReader(frame);
  const authBytes = r.bytes();
  r.done();
  return authBytes;
}
