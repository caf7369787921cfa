import { ConchError, ErrorCode } from "../format/errors.js";

/** A STORAGE_ERROR naming what failed, with the system error as its cause. */
export function storageError(what: string, cause: unknown): ConchError {
  if (cause instanceof ConchError) return cause;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new ConchError(ErrorCode.STORAGE_ERROR, `${what}: ${detail}`, { cause });
}
