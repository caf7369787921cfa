import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import type { SystemId } from "./clients.js";
import { errorText, sleep, withDeadline } from "./deadline.js";
import { measureRoundTrips } from "./exchange-ceiling.js";
import { thousands, usToMs } from "./format-number.js";
import { gcShare } from "./gc-snapshot.js";
import { machineBusySeconds, processCpuSeconds, processRssBytes } from "./proc-cpu.js";
import type { Measurement } from "./results.js";
import { STALL_MS, watchStalls } from "./stall-watch.js";
import type { RunningServer, ServerSpec } from "./types.js";
import { runWorker } from "./worker-run.js";
import { totalMessages, type Workload } from "./workloads/workload.js";

export interface SessionContext {
  system: SystemId;
  spec: ServerSpec;
  run: number;
  scale: number;
  log: (line: string) => void;
  /** Measure a bare round trip before each run of workload 3 (off with --no-ceilings). */
  roundTripBeforeLatency?: boolean;
}

/** Workloads that share one server start: a workload with `after` joins its predecessor's session. */
export function sessions(list: readonly Workload[]): Workload[][] {
  const out: Workload[][] = [];
  for (const w of list) {
    const last = out[out.length - 1];
    if (w.after && last?.some((x) => x.id === w.after)) last.push(w);
    else out.push([w]);
  }
  return out;
}

/**
 * Generous: a system slower than 10,000 msg/s (1,000 msg/s when every message waits for an fsync),
 * or a fixed-rate run that cannot drain, is reported as timed out rather than waited for.
 */
export function timeLimitMs(w: Workload, scale: number): number {
  const p = w.params(scale);
  const slowest = p.rate > 0 ? p.rate : w.durability === "durable" ? 1_000 : 10_000;
  return 60_000 + (totalMessages(p) / slowest) * 1000;
}

/**
 * The p99 of a bare round trip at workload 3's pace, measured before a session that runs workload
 * 3 and before its server starts, so each run's latency can be read against the machine of that
 * moment; null when not asked for or not measured.
 */
async function roundTripBefore(ctx: SessionContext, session: readonly Workload[]): Promise<number | null> {
  if (ctx.roundTripBeforeLatency !== true || !session.some((w) => w.id === "latency")) return null;
  try {
    const r = await withDeadline("round trip", 30_000, measureRoundTrips(ROUND_TRIP_SECONDS));
    ctx.log(
      `[run ${ctx.run}] ${ctx.spec.name}: bare round trip before workload 3: p50 ${usToMs(r.p50Us)} ms, ` +
        `p99 ${usToMs(r.p99Us)} ms, p99.9 ${usToMs(r.p999Us)} ms`,
    );
    return r.p99Us;
  } catch (err) {
    ctx.log(
      `[run ${ctx.run}] ${ctx.spec.name}: round trip before workload 3 not measured: ${errorText(err)}`,
    );
    return null;
  }
}

/** Why the Kafka workloads do not run against a system. */
export const NO_KAFKA = "no Kafka protocol";

/** Seconds of the round trip before workload 3 (the first is warm-up). */
const ROUND_TRIP_SECONDS = 4;

/**
 * Starts a fresh server for one session, runs its workloads one by one in worker processes while
 * sampling the broker's CPU time and the machine's, and always stops the server. Never throws:
 * every outcome, failures included, becomes a Measurement.
 */
export async function runSession(ctx: SessionContext, session: readonly Workload[]): Promise<Measurement[]> {
  const { system, spec, run } = ctx;
  const out: Measurement[] = [];
  const mark = (list: readonly Workload[], status: "skipped" | "failed", reason: string) => {
    for (const w of list) out.push({ system, workload: w.id, run, status, reason });
  };
  const durability = session[0]!.durability;
  const unsupported =
    spec.servesKafka !== true && session.some((w) => w.needsKafka) ? NO_KAFKA : spec.unsupported(durability);
  if (unsupported) {
    mark(session, "skipped", unsupported);
    return out;
  }
  const roundTrip = await roundTripBefore(ctx, session);
  let server: Awaited<ReturnType<ServerSpec["start"]>>;
  try {
    server = await spec.start(durability);
  } catch (err) {
    mark(session, "failed", `server did not start: ${errorText(err)}`);
    ctx.log(`[run ${run}] ${spec.name}: server did not start: ${errorText(err)}`);
    return out;
  }
  try {
    let previousOk = true;
    for (const w of session) {
      if (w.after && !previousOk) {
        mark([w], "skipped", `needs a successful ${w.after} run first`);
        continue;
      }
      const cannot = w.notFor?.[system];
      if (cannot !== undefined) {
        mark([w], "skipped", cannot);
        continue;
      }
      const m = await measureOne(ctx, w, server);
      if (w.id === "latency" && m.status === "ok" && roundTrip !== null) m.roundTripP99Us = roundTrip;
      previousOk = m.status === "ok";
      out.push(m);
    }
  } finally {
    await server.stop();
  }
  return out;
}

async function measureOne(ctx: SessionContext, w: Workload, server: RunningServer): Promise<Measurement> {
  const { system, spec, run } = ctx;
  const { pid, endpoint, kafka } = server;
  const gcBefore = (await server.gcSnapshot?.()) ?? null;
  const cpuBefore = processCpuSeconds(pid);
  const busyBefore = machineBusySeconds();
  const wallBefore = performance.now();
  const stopWatching = watchStalls();
  const result = await runWorker(
    { system, workload: w.id, endpoint, ...(kafka ? { kafka } : {}), scale: ctx.scale },
    timeLimitMs(w, ctx.scale),
  );
  const stalls = stopWatching();
  const cpuAfter = processCpuSeconds(pid);
  const busyAfter = machineBusySeconds();
  const wallSeconds = (performance.now() - wallBefore) / 1000;
  if (!result.ok) {
    ctx.log(`[run ${run}] ${spec.name} ${w.title}: failed: ${result.error}`);
    return { system, workload: w.id, run, status: "failed", reason: result.error };
  }
  const o = result.outcome;
  const brokerCpu = cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null;
  const otherCpuShare =
    busyBefore !== null && busyAfter !== null && brokerCpu !== null && o.workerCpuSeconds !== undefined
      ? Math.max(0, busyAfter - busyBefore - brokerCpu - o.workerCpuSeconds) / (wallSeconds * cpus().length)
      : null;
  const m: Measurement = {
    system,
    workload: w.id,
    run,
    status: "ok",
    messages: o.messages,
    payloadBytes: o.payloadBytes,
    seconds: o.seconds,
    msgsPerSec: o.messages / o.seconds,
    payloadMBps: o.payloadBytes / 1e6 / o.seconds,
    clientCpuSeconds: o.clientCpuSeconds,
    brokerCpuSeconds: brokerCpu,
    otherCpuShare,
    machineStalls: stalls.count,
    machineStallLongestMs: stalls.longestMs,
    ...(o.latencyUs ? { latencyUs: o.latencyUs } : {}),
    ...(o.transferUs ? { transferUs: o.transferUs } : {}),
    ...(o.warmMsgsPerSec !== undefined ? { warmMsgsPerSec: o.warmMsgsPerSec } : {}),
    ...(o.messagesSent !== undefined ? { messagesSent: o.messagesSent } : {}),
    ...(o.soloMsgsPerSec !== undefined ? { soloMsgsPerSec: o.soloMsgsPerSec } : {}),
    ...(o.soloLatencyUs ? { soloLatencyUs: o.soloLatencyUs } : {}),
    ...(o.readableMsgsPerSec !== undefined ? { readableMsgsPerSec: o.readableMsgsPerSec } : {}),
  };
  const gcAfter = gcBefore === null ? null : ((await server.gcSnapshot?.()) ?? null);
  const gc = gcBefore && gcAfter ? gcShare(gcBefore, gcAfter) : null;
  if (gc !== null && gcBefore && gcAfter) {
    m.brokerGcShare = gc;
    m.brokerGcCount = gcAfter.gcCount - gcBefore.gcCount;
  }
  const idle = w.idleSeconds === undefined ? "" : await measureIdle(m, pid, w.idleSeconds);
  const lat = o.latencyUs
    ? `, p50 ${usToMs(o.latencyUs.p50)} ms, p99 ${usToMs(o.latencyUs.p99)} ms, p99.9 ${usToMs(o.latencyUs.p999)} ms`
    : "";
  const transfer = o.transferUs
    ? ` (send call to receipt: p50 ${usToMs(o.transferUs.p50)} ms, p99 ${usToMs(o.transferUs.p99)} ms)`
    : "";
  const warm =
    o.warmMsgsPerSec === undefined
      ? ""
      : ` (warm, after the same workload again: ${thousands(o.warmMsgsPerSec)} msgs/s)`;
  const readable =
    o.readableMsgsPerSec === undefined
      ? ""
      : ` (until every message was readable: ${thousands(o.readableMsgsPerSec)} msgs/s)`;
  const soloLatency = o.soloLatencyUs
    ? ` (alone before: p50 ${usToMs(o.soloLatencyUs.p50)} ms, p99 ${usToMs(o.soloLatencyUs.p99)} ms)`
    : "";
  const solo =
    o.soloMsgsPerSec === undefined
      ? ""
      : ` (alone just before: ${thousands(o.soloMsgsPerSec)} msgs/s, ${((m.msgsPerSec! / o.soloMsgsPerSec) * 100).toFixed(0)}% kept)`;
  const others =
    otherCpuShare === null ? "" : `; other processes used ${(otherCpuShare * 100).toFixed(0)}% of the CPU`;
  const gcText =
    gc === null ? "" : `; broker GC ${(gc * 100).toFixed(1)}% of its CPU (${m.brokerGcCount} collections)`;
  const stallText =
    stalls.count === 0
      ? ""
      : `; the machine stalled ${stalls.count} times for ${STALL_MS} ms or more (longest ${stalls.longestMs} ms)`;
  ctx.log(
    `[run ${run}] ${spec.name} ${w.title}: ${thousands(m.msgsPerSec ?? 0)} msgs/s in ${o.seconds.toFixed(1)} s${warm}${readable}${solo}${lat}${soloLatency}${transfer}${others}${stallText}${gcText}${idle}`,
  );
  return m;
}

/** Seconds after a workload before the idle broker's CPU is counted: its last acknowledgements out. */
const SETTLE_SECONDS = 2;

/**
 * Leaves the broker idle for `seconds` after SETTLE_SECONDS, counting its CPU from /proc/<pid>/stat,
 * then reads its resident memory; records both in `m` and returns them in words for the log.
 */
async function measureIdle(m: Measurement, pid: number, seconds: number): Promise<string> {
  await sleep(SETTLE_SECONDS * 1000);
  const before = processCpuSeconds(pid);
  const start = performance.now();
  await sleep(seconds * 1000);
  const after = processCpuSeconds(pid);
  const rss = processRssBytes(pid);
  const wall = (performance.now() - start) / 1000;
  if (before !== null && after !== null) m.idleCpuShare = (after - before) / wall;
  if (rss !== null) m.brokerRssBytes = rss;
  const cpu = m.idleCpuShare === undefined ? "?" : `${(m.idleCpuShare * 100).toFixed(2)}% of a core`;
  const mib = rss === null ? "?" : `${(rss / 2 ** 20).toFixed(0)} MiB`;
  return `; then idle ${seconds} s: broker CPU ${cpu}, RSS ${mib}`;
}
