// `npm run bench`: Conch, NATS JetStream and Redis Streams, the same workloads, one after another
// on this machine, plus the machine's own disk and loopback ceilings. Prints one table and writes
// bench/results/latest.json and docs/bench-chart.svg. See docs/performance.md for the method.
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, release, totalmem } from "node:os";
import { dirname } from "node:path";
import { type DiskCeiling, measureDisk } from "./suite/ceilings.js";
import { renderChart } from "./suite/chart.js";
import type { SystemId } from "./suite/clients.js";
import { errorText, withDeadline } from "./suite/deadline.js";
import {
  type ExchangeCeiling,
  type LoopbackCeiling,
  measureDurableExchange,
  measureExchange,
  measureLoopback,
  measureRoundTrips,
  type RoundTripCeiling,
} from "./suite/exchange-ceiling.js";
import { usToMs } from "./suite/format-number.js";
import { installPeers } from "./suite/install-peers.js";
import { kafkaTargets, renderKafkaTargets } from "./suite/kafka-targets.js";
import { runSession, sessions } from "./suite/measure.js";
import { parseOptions } from "./suite/options.js";
import { dropPageCache } from "./suite/page-cache.js";
import { type Measurement, summarize } from "./suite/results.js";
import { killAllServers } from "./suite/server-process.js";
import { SERVERS } from "./suite/servers.js";
import { clearSpentData } from "./suite/spent-data.js";
import { renderTable } from "./suite/table.js";
import { killAllWorkers } from "./suite/worker-run.js";
import { DURABLE_IN_FLIGHT_ENV } from "./suite/workloads/durable.js";
import { WORKLOADS, workloadById } from "./suite/workloads/index.js";
import { latency } from "./suite/workloads/latency.js";
import type { WorkloadId } from "./suite/workloads/workload.js";

const options = parseOptions(process.argv.slice(2));
// The workers inherit it; workload 4 reads it (bench/suite/workloads/durable.ts).
process.env[DURABLE_IN_FLIGHT_ENV] = String(options.durableInFlight);
const log = (line: string) => process.stderr.write(`${line}\n`);

function killAll(): void {
  killAllWorkers();
  killAllServers();
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}
process.on("exit", killAll);

// consume reads what produce wrote: asking for it brings produce along.
const wanted = new Set<WorkloadId>(options.workloads);
for (const id of options.workloads) {
  const after = workloadById(id).after;
  if (after) wanted.add(after);
}
const workloads = WORKLOADS.filter((w) => wanted.has(w.id));

interface SystemInfo {
  name: string;
  version?: string;
  client?: string;
  unavailable?: string;
  durability: { interval: string; durable: string };
}

interface Ceilings {
  disk?: DiskCeiling;
  loopback?: LoopbackCeiling;
  roundTrip?: RoundTripCeiling;
  exchange?: ExchangeCeiling;
  durableExchange?: ExchangeCeiling;
}

async function ceilings(): Promise<Ceilings> {
  const out: Ceilings = {};
  try {
    out.disk = await withDeadline("disk ceiling", 180_000, measureDisk());
    log(
      `disk: ${out.disk.sequentialMBps.toFixed(0)} MB/s (1 GiB in 1 MiB writes + fdatasync); ` +
        (out.disk.coldReadMBps === undefined
          ? "cold read: not measured (the page cache could not be dropped); "
          : `cold read ${out.disk.coldReadMBps.toFixed(0)} MB/s (the same file in 1 MiB reads, its pages dropped first); `) +
        (out.disk.coldReadDirectMBps === undefined
          ? ""
          : `cold read with direct I/O ${out.disk.coldReadDirectMBps.toFixed(0)} MB/s; `) +
        `4 KiB write + fdatasync: ${out.disk.syncWriteMedianUs.toFixed(0)} us`,
    );
  } catch (err) {
    log(`disk ceiling not measured: ${errorText(err)}`);
  }
  try {
    out.loopback = await withDeadline("loopback ceiling", 120_000, measureLoopback());
    log(`loopback TCP from one Node process to another: ${out.loopback.MBps.toFixed(0)} MB/s`);
  } catch (err) {
    log(`loopback ceiling not measured: ${errorText(err)}`);
  }
  try {
    const r = await withDeadline("round-trip ceiling", 60_000, measureRoundTrips());
    out.roundTrip = r;
    log(
      `loopback round trip of ${r.bytes} bytes every ${r.paceMs} ms between two Node processes: ` +
        `p50 ${usToMs(r.p50Us)} ms, p99 ${usToMs(r.p99Us)} ms, p99.9 ${usToMs(r.p999Us)} ms`,
    );
  } catch (err) {
    log(`round-trip ceiling not measured: ${errorText(err)}`);
  }
  try {
    const x = await withDeadline("exchange ceiling", 60_000, measureExchange());
    out.exchange = x;
    log(
      `stop-and-wait exchange between two Node processes (${x.connections} connections, ` +
        `${x.requestBytes}-byte requests, ${x.replyBytes}-byte replies): ` +
        `${Math.round(x.requestsPerSec)} requests/s, ${Math.round(x.msgsPerSec)} msg/s at workload 5's 100 per request`,
    );
  } catch (err) {
    log(`exchange ceiling not measured: ${errorText(err)}`);
  }
  try {
    const x = await withDeadline("durable exchange ceiling", 60_000, measureDurableExchange());
    out.durableExchange = x;
    log(
      `stop-and-wait exchange shaped like workload 4b (${x.connections} connections, ` +
        `${x.requestBytes}-byte requests, ${x.replyBytes}-byte replies, no disk): ` +
        `${Math.round(x.requestsPerSec)} requests/s, CPU per request ${x.clientCpuUsPerRequest.toFixed(1)} us ` +
        `in the client and ${x.serverCpuUsPerRequest?.toFixed(1) ?? "?"} us in the server`,
    );
  } catch (err) {
    log(`workload 4b's exchange ceiling not measured: ${errorText(err)}`);
  }
  return out;
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadAtStart = loadavg();
  let install = "skipped (--no-install)";
  if (options.install) {
    log("installing peers (bench/peers/install.sh) ...");
    install = await installPeers();
    log(`  ${install}`);
  }
  log(
    dropPageCache()
      ? "page cache dropped: no recently freed inode left for the first runs' creates to step over"
      : "page cache not dropped (needs root): files removed in the last minutes may slow the first runs' creates",
  );
  const { disk, loopback, roundTrip, exchange, durableExchange } = options.ceilings ? await ceilings() : {};

  const systems: Partial<Record<SystemId, SystemInfo>> = {};
  const available = new Set<SystemId>();
  for (const id of options.systems) {
    const spec = SERVERS[id];
    const probe = await spec.probe();
    if (probe.ok) available.add(id);
    systems[id] = {
      name: spec.name,
      ...(probe.ok ? { version: probe.version, client: probe.client } : { unavailable: probe.reason }),
      durability: { interval: spec.describe("interval"), durable: spec.describe("durable") },
    };
    log(`${spec.name}: ${probe.ok ? `${probe.version}, ${probe.client}` : probe.reason}`);
  }

  // Runs interleave the systems (run 1: Conch, NATS, Redis; run 2: ...) so that a change in the
  // machine's load over time spreads over all of them instead of landing on one.
  const measurements: Measurement[] = [];
  for (let run = 1; run <= options.runs; run++) {
    for (const system of options.systems) {
      if (!available.has(system)) {
        const reason = systems[system]?.unavailable ?? "unavailable";
        for (const w of workloads)
          measurements.push({ system, workload: w.id, run, status: "skipped", reason });
        continue;
      }
      for (const session of sessions(workloads)) {
        const ctx = {
          system,
          spec: SERVERS[system],
          run,
          scale: options.scale,
          log,
          roundTripBeforeLatency: options.ceilings,
        };
        measurements.push(...(await runSession(ctx, session)));
      }
    }
    const waited = await clearSpentData(run < options.runs);
    // No freed inode of this sitting's removal left for the next sitting's creates (spent-data.ts).
    if (run === options.runs) dropPageCache();
    log(
      `[run ${run}] data ${run < options.runs ? "emptied" : "removed"}; the disk settled after ${(waited / 1000).toFixed(1)} s`,
    );
  }

  const summaries = summarize(measurements);
  const systemNames = Object.fromEntries(options.systems.map((id) => [id, SERVERS[id].name])) as Record<
    SystemId,
    string
  >;
  const workloadTitles = Object.fromEntries(WORKLOADS.map((w) => [w.id, w.title])) as Record<
    WorkloadId,
    string
  >;
  const ids = workloads.map((w) => w.id);
  const table = renderTable({
    summaries,
    systemNames,
    workloadTitles,
    workloads: ids,
    systems: options.systems,
    disk,
    loopback,
    roundTrip,
    exchange,
    durableExchange,
    latencyRate: latency.params(options.scale).rate,
  });
  const targets = kafkaTargets(summaries, ids);
  const targetText = renderKafkaTargets(targets);
  console.log(targetText ? `${table}\n\n${targetText}` : table);

  const report = {
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? "unknown",
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      kernel: release(),
      node: process.version,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadavg(),
    },
    options: { scale: options.scale, runs: options.runs },
    install,
    ceilings: {
      disk: disk ?? null,
      loopback: loopback ?? null,
      roundTrip: roundTrip ?? null,
      exchange: exchange ?? null,
      durableExchange: durableExchange ?? null,
    },
    systems,
    workloads: workloads.map((w) => ({
      id: w.id,
      title: w.title,
      method: w.method,
      durability: w.durability,
      params: w.params(options.scale),
    })),
    summaries,
    measurements,
    table,
    kafkaTargets: targets,
  };
  await mkdir(dirname(options.out), { recursive: true });
  await writeFile(options.out, `${JSON.stringify(report, null, 2)}\n`);
  log(`results: ${options.out}`);

  const others = summaries.flatMap((x) => (x.otherCpuShare === undefined ? [] : [x.otherCpuShare * 100]));
  const shared =
    others.length > 0
      ? `; other processes used ${Math.min(...others).toFixed(0)}-${Math.max(...others).toFixed(0)}% of the CPU`
      : "";
  const subtitle =
    `scale ${options.scale}, median of ${options.runs} run(s), ${report.machine.cpus} cores, ` +
    `Node ${process.version}, ${startedAt.slice(0, 10)}${shared}`;
  await mkdir(dirname(options.chart), { recursive: true });
  await writeFile(
    options.chart,
    renderChart({
      summaries,
      systems: options.systems,
      systemNames,
      workloads: ids,
      workloadTitles,
      subtitle,
      latencyRate: latency.params(options.scale).rate,
    }),
  );
  log(`chart: ${options.chart}`);
}

main().catch((err: unknown) => {
  log(`bench failed: ${errorText(err)}`);
  killAll();
  process.exit(1);
});
