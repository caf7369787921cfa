import { ConchError, ErrorCode } from "../format/errors.js";

/** A STORAGE_ERROR naming what failed, with the system error as its cause. */
export function storageError(what: string, cause: unknown): ConchError {
  if (cause instanceof ConchError) return cause;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new ConchError(ErrorCode.STORAGE_ERROR, `${what}: ${detail}`, { cause });
}

/**
 * A stored batch whose header the read path cannot walk (sizes, magic, offsets out of line with
 * the segment): CORRUPT_BATCH on the wire, so the reader learns its data is damaged instead of
 * waiting for data that never comes. Says which segment file and byte, for the broker's log.
 */
export class CorruptDataError extends ConchError {
  readonly segment: string;
  readonly position: number;

  constructor(segment: string, position: number, what: string) {
    super(ErrorCode.CORRUPT_BATCH, `${what} in segment ${segment} at byte ${position}`);
    this.segment = segment;
    this.position = position;
  }
}
