/**
 * The body several responses share: an error code, preceded from version 1 on by the throttle time
 * (Heartbeat 0-3, LeaveGroup 0-2).
 *
 *   response v0  = error_code int16
 *   response v1+ = throttle_time_ms int32 | error_code int16
 */
import type { KafkaSink } from "./kafka-writer.js";

export interface ThrottledError {
  throttleTimeMs: number;
  errorCode: number;
}

export function writeThrottledError(w: KafkaSink, v: number, res: ThrottledError): void {
  if (v >= 1) w.int32(res.throttleTimeMs);
  w.int16(res.errorCode);
}
