/**
 * Watches for stalls of the whole machine while a workload runs. The harness's own process is idle
 * then (it waits for the worker), so a 10 ms timer of its that fires late was held off by the
 * machine: its CPUs taken by something else, or the virtual machine paused. Such a stall holds
 * every process at once, broker and clients alike (docs/performance/scale.md, "Workload 8: old data
 * read past the page cache"), and one of a few hundred milliseconds sets a latency run's p99 on
 * its own; the count and the longest are reported beside the run's figures.
 */

const TICK_MS = 10;
/** Lateness at or over this counts as a stall. */
export const STALL_MS = 50;

export interface Stalls {
  /** Ticks that came STALL_MS or more late. */
  count: number;
  /** The latest tick's lateness, in ms (0 when none was late by a whole tick). */
  longestMs: number;
}

/** Starts watching; the function returned stops and says what was seen. */
export function watchStalls(): () => Stalls {
  const seen: Stalls = { count: 0, longestMs: 0 };
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - TICK_MS;
    last = now;
    if (late > seen.longestMs) seen.longestMs = late;
    if (late >= STALL_MS) seen.count++;
  }, TICK_MS);
  return () => {
    clearInterval(timer);
    return { count: seen.count, longestMs: Math.round(seen.longestMs) };
  };
}
