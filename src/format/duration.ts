/**
 * Durations that become timers. Node's setTimeout and setInterval take at most 2^31-1 ms and fire
 * a longer delay after 1 ms instead (with a TimeoutOverflowWarning each time), so a duration from
 * a request or a setting is checked against this ceiling where it comes in, never clamped later.
 */
import { ConchError, ErrorCode } from "./errors.js";

/** The longest delay a Node timer honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `ms` when it is an integer from `min` to `max` (at most MAX_TIMER_MS); otherwise throws
 * INVALID_REQUEST naming the field.
 */
export function checkDurationMs(name: string, ms: number, min = 0, max = MAX_TIMER_MS): number {
  if (!Number.isInteger(ms) || ms < min || ms > max) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `${name} must be from ${min} to ${max} ms, not ${ms}`);
  }
  return ms;
}
