/**
 * What a benchmark measures besides its own work: a latency histogram (HdrHistogram, microsecond
 * resolution), the share of wall time spent in garbage collection (PerformanceObserver 'gc'
 * entries), and the final one-line report.
 */
import { PerformanceObserver, performance } from "node:perf_hooks";
import * as hdr from "hdr-histogram-js";

export interface BenchReport {
  messages: number;
  seconds: number;
  msgs_per_s: number;
  mb_per_s: number;
  p50_ms: number | null;
  p99_ms: number | null;
  p999_ms: number | null;
  gc_share: number;
}

/** Latencies recorded in microseconds, reported in milliseconds. */
export class LatencyRecorder {
  #histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });

  /** Records the time since `startedAt` (a performance.now() reading). */
  recordSince(startedAt: number): void {
    this.recordMs(performance.now() - startedAt);
  }

  recordMs(ms: number): void {
    this.#histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
  }

  get count(): number {
    return this.#histogram.totalCount;
  }

  /** The latency at `percentile` (0-100) in ms, or null when nothing was recorded. */
  percentileMs(percentile: number): number | null {
    if (this.#histogram.totalCount === 0) return null;
    return this.#histogram.getValueAtPercentile(percentile) / 1000;
  }

  destroy(): void {
    this.#histogram.destroy();
  }
}

/** Sums the duration of every GC pause of this process between start() and stop(). */
export class GcMeter {
  #observer: PerformanceObserver | null = null;
  #gcMs = 0;

  start(): void {
    this.#observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.#gcMs += entry.duration;
    });
    this.#observer.observe({ entryTypes: ["gc"] });
  }

  /** Stops observing; entries are delivered asynchronously, so the caller awaits the last ones. */
  async stop(): Promise<number> {
    await new Promise((resolve) => setImmediate(resolve));
    this.#observer?.disconnect();
    this.#observer = null;
    return this.#gcMs;
  }
}

export function buildReport(
  messages: number,
  bytes: number,
  seconds: number,
  latency: LatencyRecorder | null,
  gcMs: number,
): BenchReport {
  return {
    messages,
    seconds: round(seconds, 3),
    msgs_per_s: round(messages / seconds, 1),
    mb_per_s: round(bytes / 1e6 / seconds, 2),
    p50_ms: latency ? rounded(latency.percentileMs(50)) : null,
    p99_ms: latency ? rounded(latency.percentileMs(99)) : null,
    p999_ms: latency ? rounded(latency.percentileMs(99.9)) : null,
    gc_share: round(gcMs / 1000 / seconds, 4),
  };
}

/** The report as people read it (stderr) when --json is not given. */
export function formatReport(name: string, r: BenchReport): string {
  const ms = (v: number | null): string => (v === null ? "n/a" : `${v} ms`);
  return (
    `${name}: ${r.messages} messages in ${r.seconds} s = ${r.msgs_per_s} msg/s, ${r.mb_per_s} MB/s; ` +
    `latency p50 ${ms(r.p50_ms)}, p99 ${ms(r.p99_ms)}, p99.9 ${ms(r.p999_ms)}; ` +
    `gc ${(r.gc_share * 100).toFixed(1)}% of wall time\n`
  );
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

function rounded(v: number | null): number | null {
  return v === null ? null : round(v, 3);
}
