/**
 * throttle_time_ms in an encoded Produce or Fetch response, written in place once a quota says how
 * long (docs/kafka.md, "Quotas"), so the encoders stay ignorant of quotas:
 *
 *   Produce v1+  the last 4 bytes of the frame (after the responses)
 *   Fetch v1+    the first field of the body: after the size and the correlation id, at byte 8
 *
 * KIP-219: from Produce v6 and Fetch v8 a client waits out the throttle itself, so a broker answers
 * at once and mutes the connection; before them the broker holds the response for the throttle.
 */
import { ApiKey } from "./api-keys.js";

/** Size field and correlation id: where a non-flexible response's body starts. */
const BODY_AT = 8;

/**
 * Writes `ms` into the frame's throttle_time_ms; false for an API or version without one here
 * (Produce v0, advertised and refused, has none: its last bytes are a base offset).
 */
export function setThrottleTime(apiKey: number, version: number, frame: Buffer, ms: number): boolean {
  if (apiKey === ApiKey.PRODUCE && version >= 1 && frame.length >= BODY_AT + 4) {
    frame.writeInt32BE(ms, frame.length - 4);
    return true;
  }
  if (apiKey === ApiKey.FETCH && frame.length >= BODY_AT + 4) {
    frame.writeInt32BE(ms, BODY_AT);
    return true;
  }
  return false;
}

/** Whether a client of this API version waits out the throttle itself (KIP-219). */
export function clientWaitsOutThrottle(apiKey: number, version: number): boolean {
  if (apiKey === ApiKey.PRODUCE) return version >= 6;
  if (apiKey === ApiKey.FETCH) return version >= 8;
  return false;
}
