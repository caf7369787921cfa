/**
 * Fetch with long polling: read at an offset and, while fewer than `minBytes` are available, wait
 * for the partition's high watermark to move (PartitionLog.waitForData) and read again, until enough
 * arrived, `maxWaitMs` passed, the caller aborted, or the topic closed. Every wait is registered with
 * the log and removed when it ends, so a client that goes away leaves nothing behind.
 */
import type { PartitionLog, ReadResult } from "../storage/partition-log.js";
import { Wakeup } from "../storage/wakeup.js";
import { onAbort } from "./abort-fanout.js";

/** setTimeout's ceiling; a longer wait would fire at once. */
const MAX_WAIT_MS = 2 ** 31 - 1;

/**
 * `closed` is the topic's signal: when it fires during a wait, the fetch fails with its reason (a
 * ConchError: UNKNOWN_TOPIC after a delete, SHUTTING_DOWN when the broker stops). When `signal` fires
 * the fetch resolves at once with what the last read returned.
 */
export async function fetchWithWait(
  log: PartitionLog,
  offset: number,
  maxBytes: number,
  maxWaitMs: number,
  minBytes: number,
  signal: AbortSignal | undefined,
  closed: AbortSignal,
): Promise<ReadResult> {
  // A reader keeping up is served from the tail cache without a promise (readNow).
  let result = log.readNow(offset, maxBytes) ?? (await log.read(offset, maxBytes));
  // A read may return less than maxBytes only when less is there, so asking for more than maxBytes
  // would always wait out the full time for nothing.
  const wanted = Math.max(1, Math.min(minBytes, maxBytes));
  if (result.records.length >= wanted || maxWaitMs <= 0 || signal?.aborted === true) return result;
  if (closed.aborted) throw closed.reason;

  const deadline = performance.now() + Math.min(maxWaitMs, MAX_WAIT_MS);
  // Not an AbortController: see wakeup.ts.
  const wake = new Wakeup();
  const abortWake = (): void => wake.wake();
  // Shared signals (the connection's, the topic's) get one listener each, whatever the number of
  // waits on them: see abort-fanout.ts.
  const unsubscribeSignal = signal === undefined ? null : onAbort(signal, abortWake);
  const unsubscribeClosed = onAbort(closed, abortWake);
  try {
    for (;;) {
      const remaining = Math.ceil(deadline - performance.now());
      if (remaining <= 0) break;
      // Resolves once the high watermark passes what the last read saw: new data is visible.
      await log.waitForData(result.highWatermark, remaining, wake);
      if (closed.aborted) throw closed.reason;
      if (wake.woken) break;
      result = log.readNow(offset, maxBytes) ?? (await log.read(offset, maxBytes));
      if (result.records.length >= wanted) break;
    }
  } finally {
    unsubscribeSignal?.();
    unsubscribeClosed();
  }
  return result;
}
