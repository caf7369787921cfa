/**
 * Request and response frame headers (docs/protocol.md, "Frames"). A *frame* here is what the
 * FrameParser yields: the bytes after the 4-byte size field. Encoders produce whole wire messages,
 * size field included.
 *
 *   request  = size u32 | apiKey u16 | apiVersion u16 | correlationId u32 | body
 *   response = size u32 | correlationId u32 | errorCode u16 | body
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { readU16, readU32 } from "../format/u64.js";
import {
  API_VERSION,
  type ApiKeyNumber,
  REQUEST_HEADER_BYTES,
  RESPONSE_HEADER_BYTES,
  SIZE_FIELD_BYTES,
} from "./api.js";
import { WireReader } from "./wire-reader.js";
import { WireWriter } from "./wire-writer.js";

// Positions inside a request frame.
const API_KEY_AT = 0;
const API_VERSION_AT = 2;
const REQUEST_CORRELATION_AT = 4;
// Positions inside a response frame.
const RESPONSE_CORRELATION_AT = 0;
const ERROR_CODE_AT = 4;

/** Whether a request frame is long enough to hold its header (and so has a correlation id to answer). */
export function hasRequestHeader(frame: Uint8Array): boolean {
  return frame.length >= REQUEST_HEADER_BYTES;
}

export function requestApiKey(frame: Uint8Array): number {
  return readU16(frame, API_KEY_AT);
}

export function requestApiVersion(frame: Uint8Array): number {
  return readU16(frame, API_VERSION_AT);
}

export function requestCorrelationId(frame: Uint8Array): number {
  return readU32(frame, REQUEST_CORRELATION_AT);
}

/** Whether a response frame is long enough to hold its header. */
export function hasResponseHeader(frame: Uint8Array): boolean {
  return frame.length >= RESPONSE_HEADER_BYTES;
}

export function responseCorrelationId(frame: Uint8Array): number {
  return readU32(frame, RESPONSE_CORRELATION_AT);
}

export function responseErrorCode(frame: Uint8Array): number {
  return readU16(frame, ERROR_CODE_AT);
}

/**
 * A writer for a whole request message of `bodyBytes` body bytes (plus `trailingBytes` that the
 * caller sends separately, such as a produce request's records), with its size field and header
 * already written at the request type's current version (or `apiVersion`, for a request type that
 * is sent at more than one).
 */
export function requestWriter(
  apiKey: ApiKeyNumber,
  correlationId: number,
  bodyBytes: number,
  trailingBytes = 0,
  apiVersion: number = API_VERSION[apiKey],
): WireWriter {
  const w = new WireWriter(SIZE_FIELD_BYTES + REQUEST_HEADER_BYTES + bodyBytes);
  w.u32(REQUEST_HEADER_BYTES + bodyBytes + trailingBytes);
  return w.u16(apiKey).u16(apiVersion).u32(correlationId);
}

/**
 * A writer for a whole success response of `bodyBytes` body bytes (plus `trailingBytes` that the
 * caller sends separately, such as a fetch response's records), with its size field and header written.
 */
export function responseWriter(correlationId: number, bodyBytes: number, trailingBytes = 0): WireWriter {
  const w = new WireWriter(SIZE_FIELD_BYTES + RESPONSE_HEADER_BYTES + bodyBytes);
  return w
    .u32(RESPONSE_HEADER_BYTES + bodyBytes + trailingBytes)
    .u32(correlationId)
    .u16(ErrorCode.NONE);
}

/** A reader over a request frame's body; throws MALFORMED_REQUEST when the frame has no whole header. */
export function requestBodyReader(frame: Buffer): WireReader {
  if (!hasRequestHeader(frame)) {
    throw new ConchError(ErrorCode.MALFORMED_REQUEST, `malformed request: frame of ${frame.length} bytes`);
  }
  return new WireReader(frame, REQUEST_HEADER_BYTES, frame.length, "request");
}
