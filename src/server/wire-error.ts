/**
 * What a failure is answered with on the wire: a ConchError's own code and message when the code
 * is one the broker may send; anything else is INTERNAL with a fixed message, since its text may
 * hold what the client should not see (paths, stack details), and is logged instead.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

/** Codes from here on are made by the client alone (a timeout, a closed connection). */
const FIRST_CLIENT_ONLY_CODE = 100;

const INTERNAL_MESSAGE = "internal broker error";

/** Whether `err` is answered with its own code and message. */
export function isWireError(err: unknown): err is ConchError {
  return err instanceof ConchError && err.code > ErrorCode.NONE && err.code < FIRST_CLIENT_ONLY_CODE;
}

export function wireErrorCode(err: unknown): number {
  return isWireError(err) ? err.code : ErrorCode.INTERNAL;
}

export function wireErrorMessage(err: unknown): string {
  return isWireError(err) ? err.message : INTERNAL_MESSAGE;
}
