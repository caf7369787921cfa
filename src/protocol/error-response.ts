/**
 * Error responses, and the check every response decoder makes first.
 *
 *   error response = size u32 | correlationId u32 | errorCode u16 (> 0) | message string
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { RESPONSE_HEADER_BYTES, SIZE_FIELD_BYTES } from "./api.js";
import { hasResponseHeader, responseCorrelationId, responseErrorCode } from "./frame.js";
import { WireReader } from "./wire-reader.js";
import { WireWriter } from "./wire-writer.js";

/** 16,383 characters of at most 4 UTF-8 bytes each always fit a u16-length string. */
const MAX_MESSAGE_CHARS = 16_383;

/** The whole error response message. A message too long for a string is cut, never refused. */
export function encodeErrorResponse(correlationId: number, code: number, message: string): Buffer {
  if (code <= ErrorCode.NONE || code > 0xffff) throw new RangeError(`${code} is not an error code`);
  let text = message;
  let len = Buffer.byteLength(text, "utf8");
  if (len > 0xffff) {
    text = text.slice(0, MAX_MESSAGE_CHARS);
    len = Buffer.byteLength(text, "utf8");
  }
  const w = new WireWriter(SIZE_FIELD_BYTES + RESPONSE_HEADER_BYTES + 2 + len);
  return w
    .u32(RESPONSE_HEADER_BYTES + 2 + len)
    .u32(correlationId)
    .u16(code)
    .string(text)
    .finish();
}

/** The error an error response frame carries, rebuilt with the broker's code and message. */
export function decodeErrorResponse(frame: Buffer): ConchError {
  if (!hasResponseHeader(frame)) throw malformedResponse(frame);
  const code = responseErrorCode(frame);
  if (code === ErrorCode.NONE) {
    throw new ConchError(ErrorCode.MALFORMED_REQUEST, "malformed response: not an error response");
  }
  const r = new WireReader(frame, RESPONSE_HEADER_BYTES, frame.length, "response");
  const message = r.string();
  r.done();
  return new ConchError(code, message);
}

/** The error a response frame carries, or null for a success. */
export function responseError(frame: Buffer): ConchError | null {
  if (!hasResponseHeader(frame)) throw malformedResponse(frame);
  return responseErrorCode(frame) === ErrorCode.NONE ? null : decodeErrorResponse(frame);
}

/**
 * A reader over a success response's body. An error response is thrown as the ConchError it
 * carries, so a caller can never mistake an error message for a body.
 */
export function responseBodyReader(frame: Buffer): WireReader {
  if (!hasResponseHeader(frame)) throw malformedResponse(frame);
  if (responseErrorCode(frame) !== ErrorCode.NONE) throw decodeErrorResponse(frame);
  return new WireReader(frame, RESPONSE_HEADER_BYTES, frame.length, "response");
}

function malformedResponse(frame: Buffer): ConchError {
  const id = frame.length >= 4 ? ` (correlation id ${responseCorrelationId(frame)})` : "";
  return new ConchError(
    ErrorCode.MALFORMED_REQUEST,
    `malformed response: frame of ${frame.length} bytes${id}`,
  );
}
