import { performance } from "node:perf_hooks";
import * as hdr from "hdr-histogram-js";
import type { LatencySummary, Producer } from "../types.js";

/** How often the paced producer sends what has fallen due. */
const TICK_MS = 1;

/** A producer at a fixed rate, recording each message's time from its scheduled send to its acknowledgement. */
export interface PacedRun {
  /** Stops sending, waits for the acknowledgements in flight, and summarizes. */
  stop(): Promise<{ sent: number; latencyUs: LatencySummary }>;
}

/**
 * Sends `payloadBytes` messages at `rate` per second: every millisecond, the messages that fell due
 * since the last tick go as one send call. A message's latency runs from the time it was scheduled
 * for (not the time it left), so a producer held up by its broker shows it.
 */
export function startPaced(producer: Producer, rate: number, payloadBytes: number): PacedRun {
  const histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 600_000_000,
    numberOfSignificantValueDigits: 3,
  });
  const payload = Buffer.alloc(payloadBytes, 0x70);
  const start = performance.now();
  const intervalMs = 1000 / rate;
  let sent = 0;
  let pending = 0;
  let failure: unknown;
  let drained: (() => void) | null = null;
  const tick = (): void => {
    const due = Math.floor((performance.now() - start) / intervalMs) + 1;
    if (due <= sent || failure !== undefined) return;
    const first = sent;
    const batch = new Array<Buffer>(due - sent).fill(payload);
    sent = due;
    pending++;
    producer.sendBatch(batch).then(
      () => {
        const now = performance.now();
        for (let i = first; i < due; i++) {
          histogram.recordValue(Math.max(1, Math.round((now - (start + i * intervalMs)) * 1000)));
        }
        if (--pending === 0) drained?.();
      },
      (err: unknown) => {
        failure ??= err;
        if (--pending === 0) drained?.();
      },
    );
  };
  const timer = setInterval(tick, TICK_MS);
  return {
    async stop() {
      clearInterval(timer);
      if (pending > 0) await new Promise<void>((resolve) => (drained = resolve));
      if (failure !== undefined) {
        histogram.destroy();
        throw failure;
      }
      const latencyUs = {
        count: histogram.totalCount,
        p50: histogram.getValueAtPercentile(50),
        p99: histogram.getValueAtPercentile(99),
        p999: histogram.getValueAtPercentile(99.9),
        max: histogram.maxValue,
      };
      histogram.destroy();
      return { sent, latencyUs };
    },
  };
}
