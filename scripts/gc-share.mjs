// Preload that measures a Node process's GC: `node --import ./scripts/gc-share.mjs <script>`.
// On SIGUSR2, and at exit, it prints one line to stderr:
//   gc-share {"wallMs":..,"cpuMs":..,"gcMs":..,"gcCount":..}
// with totals since start (cpuMs is process.cpuUsage: every thread of the process). Take the
// difference of two lines around a measured span; GC share = gcMs / cpuMs over that span.
// `gcMs` sums the durations of PerformanceObserver "gc" entries (main-thread pauses).
import { PerformanceObserver, performance } from "node:perf_hooks";

let gcMs = 0;
let gcCount = 0;
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcMs += entry.duration;
    gcCount++;
  }
});
observer.observe({ entryTypes: ["gc"] });

function report() {
  const cpu = process.cpuUsage();
  const line = { wallMs: performance.now(), cpuMs: (cpu.user + cpu.system) / 1000, gcMs, gcCount };
  process.stderr.write(`gc-share ${JSON.stringify(line)}\n`);
}

process.on("SIGUSR2", report);
process.on("exit", report);
