import { parseArgs } from "node:util";
import type { SystemId } from "./clients.js";
import { DEFAULT_DURABLE_IN_FLIGHT } from "./workloads/durable.js";
import type { WorkloadId } from "./workloads/workload.js";

export interface SuiteOptions {
  scale: number;
  runs: number;
  systems: SystemId[];
  workloads: WorkloadId[];
  install: boolean;
  ceilings: boolean;
  out: string;
  chart: string;
  /** Send calls each producer of workload 4 keeps unacknowledged (1 = stop-and-wait, the default). */
  durableInFlight: number;
}

const SYSTEMS: SystemId[] = ["conch", "nats", "redis"];
const WORKLOAD_IDS: WorkloadId[] = [
  "produce",
  "consume",
  "kafka-produce",
  "kafka-consume",
  "kafka-consume-2",
  "latency",
  "durable",
  "durable-wait",
  "hermit",
  "hermit-pipelined",
  "partitions-1",
  "partitions-10k",
  "connections-1k",
  "cold-read",
];

const USAGE = `npm run bench -- [options]
  --scale N        multiply message counts by N (default 1; 0.05 for a quick run)
  --runs N         run everything N times and report medians (default 3)
  --systems a,b    any of ${SYSTEMS.join(",")} (default all)
  --workloads a,b  any of ${WORKLOAD_IDS.join(",")} (default all)
  --no-install     do not run bench/peers/install.sh first
  --no-ceilings    skip the disk and loopback measurements
  --out PATH       results JSON (default bench/results/latest.json)
  --chart PATH     SVG chart (default docs/bench-chart.svg)
  --durable-in-flight N  calls each producer of workload 4 keeps in flight (default ${DEFAULT_DURABLE_IN_FLIGHT};
                   workload durable-wait is always 1)`;

export function parseOptions(argv: string[]): SuiteOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      scale: { type: "string", default: "1" },
      runs: { type: "string", default: "3" },
      systems: { type: "string", default: SYSTEMS.join(",") },
      workloads: { type: "string", default: WORKLOAD_IDS.join(",") },
      "no-install": { type: "boolean", default: false },
      "no-ceilings": { type: "boolean", default: false },
      out: { type: "string", default: "bench/results/latest.json" },
      chart: { type: "string", default: "docs/bench-chart.svg" },
      "durable-in-flight": { type: "string", default: String(DEFAULT_DURABLE_IN_FLIGHT) },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const scale = Number(values.scale);
  const runs = Number(values.runs);
  if (!(scale > 0 && scale <= 10)) throw new Error(`--scale must be in (0, 10], got ${values.scale}`);
  if (!(Number.isInteger(runs) && runs >= 1 && runs <= 20)) throw new Error(`--runs must be 1..20`);
  const durableInFlight = Number(values["durable-in-flight"]);
  if (!(Number.isInteger(durableInFlight) && durableInFlight >= 1 && durableInFlight <= 10_000)) {
    throw new Error(`--durable-in-flight must be 1..10000`);
  }
  return {
    scale,
    runs,
    systems: pick(values.systems, SYSTEMS, "--systems"),
    workloads: pick(values.workloads, WORKLOAD_IDS, "--workloads"),
    install: !values["no-install"],
    ceilings: !values["no-ceilings"],
    out: values.out,
    chart: values.chart,
    durableInFlight,
  };
}

function pick<T extends string>(list: string, allowed: readonly T[], flag: string): T[] {
  const chosen = list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const c of chosen) if (!allowed.includes(c as T)) throw new Error(`${flag}: unknown ${c}`);
  // Keep the canonical order whatever order was typed.
  return allowed.filter((a) => chosen.includes(a));
}
