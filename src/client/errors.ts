/**
 * The client speaks the same typed errors as every other layer: a broker's error code is rebuilt
 * into a `ConchError` with the same `code`, so `err.code === ErrorCode.UNKNOWN_TOPIC` holds on
 * either side of the wire.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export type { ErrorCodeName, ErrorCodeNumber } from "../format/errors.js";
export { ConchError, ErrorCode, errorName, isRetriable } from "../format/errors.js";

/** The error of a wait that its AbortSignal ended; keeps the signal's reason as the cause. */
export function abortedError(signal: AbortSignal | undefined, what: string): ConchError {
  return new ConchError(ErrorCode.ABORTED, `${what} aborted`, { cause: signal?.reason });
}

/** The retriable error of a request whose connection went away before its response came. */
export function connectionClosedError(detail: string, cause?: unknown): ConchError {
  return new ConchError(ErrorCode.CONNECTION_CLOSED, `connection closed: ${detail}`, { cause });
}

/** Any thrown value as a ConchError (socket errors become CONNECTION_CLOSED). */
export function asConchError(err: unknown): ConchError {
  if (err instanceof ConchError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return connectionClosedError(message, err);
}
