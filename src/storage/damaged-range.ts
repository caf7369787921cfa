/**
 * Quarantined ranges: bytes of a segment that failed their check (docs/design.md, recovery). Every
 * batch outside a range stays readable at its offset; a read of an offset inside one fails with
 * CORRUPT_DATA, or skips past it when the topic says `corrupt.data=skip`.
 */
import { basename } from "node:path";
import { ConchError, ErrorCode } from "../format/errors.js";

export interface DamagedRange {
  /** Byte position of the damage in the segment file, and its length (0: a segment file is missing). */
  position: number;
  length: number;
  /** The offsets the damaged bytes held; lastOffset < firstOffset when they held none. */
  firstOffset: number;
  lastOffset: number;
  /** What the check said. */
  reason: string;
}

/** A damaged range as the log reports it: the segment file named. */
export interface QuarantinedRange extends DamagedRange {
  segment: string;
}

/** The range holding `offset`, if any. */
export function rangeAt(ranges: readonly DamagedRange[], offset: number): DamagedRange | undefined {
  for (const r of ranges) if (offset >= r.firstOffset && offset <= r.lastOffset) return r;
  return undefined;
}

/** Where reading from `position` must stop: the start of the first range at or after it, else `limit`. */
export function readLimitFrom(ranges: readonly DamagedRange[], position: number, limit: number): number {
  for (const r of ranges) if (r.position >= position && r.length > 0) return Math.min(r.position, limit);
  return limit;
}

/** The range starting at `position`, if any (a scan that reached it jumps over it). */
export function rangeStartingAt(ranges: readonly DamagedRange[], position: number): DamagedRange | undefined {
  for (const r of ranges) if (r.position === position && r.length > 0) return r;
  return undefined;
}

export function describeRange(walPath: string, r: DamagedRange): QuarantinedRange {
  return { segment: basename(walPath), ...r };
}

export function corruptData(walPath: string, r: DamagedRange): ConchError {
  return new ConchError(
    ErrorCode.CORRUPT_DATA,
    `offsets ${r.firstOffset}-${r.lastOffset} are quarantined: ${r.reason} ` +
      `(${walPath}, bytes ${r.position}-${r.position + r.length})`,
  );
}

/**
 * Thrown by a read that found a batch failing its check where no range was known yet; the log
 * rescans the segment and answers the read again. A CORRUPT_DATA error if it ever gets further.
 */
export class DamageFound extends ConchError {
  readonly walPath: string;
  readonly position: number;

  constructor(walPath: string, position: number, detail: string) {
    super(
      ErrorCode.CORRUPT_DATA,
      `stored data failed its check: ${detail} in ${walPath} at byte ${position}`,
    );
    this.walPath = walPath;
    this.position = position;
  }
}
