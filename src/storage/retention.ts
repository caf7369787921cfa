/**
 * Which closed segments retention deletes: from the oldest on, while the oldest one's newest record
 * is older than retentionMs, or while the partition holds more than retentionBytes. The active
 * segment is never deleted, so a log always has somewhere to append.
 */
import type { LogConfig } from "./config.js";
import type { Segment } from "./segment.js";

/** How many of the oldest segments to delete at `nowMs`. */
export function segmentsToDelete(
  segments: readonly Segment[],
  config: Pick<LogConfig, "retentionMs" | "retentionBytes" | "cleanupPolicy">,
  nowMs: number,
): number {
  // A log that is only compacted keeps what compaction keeps, whatever its age or size.
  if (config.cleanupPolicy === "compact") return 0;
  let total = 0;
  for (const seg of segments) total += seg.size;
  let n = 0;
  while (n < segments.length - 1) {
    const seg = segments[n]!;
    const tooOld = config.retentionMs >= 0 && nowMs - seg.maxTimestampMs > config.retentionMs;
    const tooBig = config.retentionBytes >= 0 && total > config.retentionBytes;
    if (!tooOld && !tooBig) break;
    total -= seg.size;
    n++;
  }
  return n;
}
