import { performance } from "node:perf_hooks";
import { reapedChildrenCpuSeconds } from "./proc-cpu.js";

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

/**
 * Like startClock, with the CPU time of the child processes reaped during the span added (the
 * kernel counts a child's CPU for its parent once the child is waited for): read it after every
 * child the span ran has exited.
 */
export function startClockWithChildren(): () => Span {
  const own = startClock();
  const children = reapedChildrenCpuSeconds() ?? 0;
  return () => {
    const span = own();
    return {
      seconds: span.seconds,
      cpuSeconds: span.cpuSeconds + ((reapedChildrenCpuSeconds() ?? 0) - children),
    };
  };
}
