import { performance } from "node:perf_hooks";

/** Wall time and this process's CPU time over one measured span. */
export interface Span {
  seconds: number;
  cpuSeconds: number;
}

export function startClock(): () => Span {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { seconds: (performance.now() - wall) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
  };
}
