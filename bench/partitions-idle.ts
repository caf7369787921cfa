// `npm run bench:partitions`: what many partitions cost a broker that is not busy. Starts `conch
// broker` on an empty data directory and, with the admin SDK, creates a topic of PARTITIONS_HALF
// partitions, then grows it to PARTITIONS (CreatePartitions), each timed with the broker's CPU for
// it (from /proc/<pid>/stat); sends one message to every partition; waits until the broker's
// follow-up work is done (owed fsyncs, the logs' three quiet checks 10 s apart, V8's memory reducer: at least 60 s,
// then until its CPU over the last PARTITIONS_SETTLE_S seconds is under 1% of a core, at most
// 120 s in all); then reads its CPU over PARTITIONS_IDLE_S
// seconds (default 30) and its RSS. PARTITIONS_COMPARE_BIN=<another build's bin/conch.js> runs that
// build too, the order alternating run by run, so two builds are compared in one sitting.
// PARTITIONS (default 10,000), PARTITIONS_RUNS (default 3). See docs/performance/scale.md.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient } from "../src/index.js";
import { brokerArgs, cpuMs, rssMiB } from "./broker-process.js";
import { median } from "./suite/results.js";

const PARTITIONS = Number(process.env.PARTITIONS ?? 10_000);
const HALF = Math.max(1, Math.floor(PARTITIONS / 2));
const RUNS = Number(process.env.PARTITIONS_RUNS ?? 3);
const IDLE_S = Number(process.env.PARTITIONS_IDLE_S ?? 30);
const SETTLE_S = Number(process.env.PARTITIONS_SETTLE_S ?? 5);
const SETTLE_LIMIT_S = 120;
/**
 * A log's quiet checks run 10 s apart from its last append, the third lets its tail cache go; and
 * 40-50 s after the writes V8's memory reducer runs a few full collections, once. The idle window
 * starts after both.
 */
const QUIET_CHECKS_S = 60;
const TOPIC = "idle";
const BIN = resolve(import.meta.dirname, "../../bin/conch.js");
const COMPARE_BIN = process.env.PARTITIONS_COMPARE_BIN;
/** A create of 10,000 partitions took minutes on a loaded machine before it was made cheap. */
const ADMIN_TIMEOUT_MS = 600_000;

const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));

async function start(dataDir: string, bin: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, brokerArgs(bin, dataDir, PARTITIONS + 100), {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let text = "";
  const port = await new Promise<number>((ok, fail) => {
    child.stdout!.on("data", (d: Buffer) => {
      if (text.length < 65536) text += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(text);
      if (m) ok(Number(m[1]));
    });
    child.once("exit", (code) => fail(new Error(`broker exited with ${code}: ${text}`)));
  });
  return { child, port };
}

interface Run {
  createMs: number;
  createCpuMs: number;
  growMs: number;
  growCpuMs: number;
  touchMs: number;
  touchCpuMs: number;
  settleS: number;
  idleShare: number;
  rss: number;
}

/**
 * Waits QUIET_CHECKS_S, then until the broker's CPU over the last SETTLE_S seconds is under 1% of
 * a core (CPU time comes in 10 ms ticks, so a window, not single seconds); resolves with the
 * seconds waited.
 */
async function settle(pid: number): Promise<number> {
  const t0 = performance.now();
  const samples = [cpuMs(pid)];
  for (;;) {
    await sleep(1000);
    samples.push(cpuMs(pid));
    const waited = (performance.now() - t0) / 1000;
    if (waited >= SETTLE_LIMIT_S) return waited;
    if (waited < QUIET_CHECKS_S || samples.length <= SETTLE_S) continue;
    const window = samples.at(-1)! - samples.at(-1 - SETTLE_S)!;
    if (window < 10 * SETTLE_S) return waited;
  }
}

async function once(bin: string): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), "conch-partitions-"));
  const { child, port } = await start(join(dir, "data"), bin);
  const pid = child.pid!;
  const client = createClient({ brokers: [`127.0.0.1:${port}`], requestTimeoutMs: ADMIN_TIMEOUT_MS });
  try {
    const admin = client.admin();
    let cpu = cpuMs(pid);
    let t = performance.now();
    await admin.createTopic(TOPIC, { partitions: HALF });
    const createMs = performance.now() - t;
    const createCpuMs = cpuMs(pid) - cpu;
    cpu = cpuMs(pid);
    t = performance.now();
    await admin.createPartitions(TOPIC, PARTITIONS);
    const growMs = performance.now() - t;
    const growCpuMs = cpuMs(pid) - cpu;
    cpu = cpuMs(pid);
    t = performance.now();
    const messages = Array.from({ length: PARTITIONS }, (_, partition) => ({ value: "idle", partition }));
    await client.producer().sendBatch(TOPIC, messages);
    const touchMs = performance.now() - t;
    const touchCpuMs = cpuMs(pid) - cpu;
    const settleS = await settle(pid);
    cpu = cpuMs(pid);
    await sleep(IDLE_S * 1000);
    const idleShare = (cpuMs(pid) - cpu) / (IDLE_S * 1000);
    return {
      createMs,
      createCpuMs,
      growMs,
      growCpuMs,
      touchMs,
      touchCpuMs,
      settleS,
      idleShare,
      rss: rssMiB(pid),
    };
  } finally {
    await client.close();
    await new Promise((ok) => {
      child.once("exit", ok);
      child.kill("SIGTERM");
    });
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const builds = COMPARE_BIN === undefined ? [BIN] : [BIN, COMPARE_BIN];
  const runs = builds.map((): Run[] => []);
  for (let run = 1; run <= RUNS; run++) {
    const order = run % 2 === 1 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
    for (const i of order) {
      const r = await once(builds[i]!);
      runs[i]!.push(r);
      console.log(
        `run ${run} ${builds[i]}: create ${HALF} partitions ${r.createMs.toFixed(0)} ms (broker CPU ${r.createCpuMs} ms), ` +
          `grow to ${PARTITIONS} ${r.growMs.toFixed(0)} ms (CPU ${r.growCpuMs} ms), one message to each ${r.touchMs.toFixed(0)} ms (CPU ${r.touchCpuMs} ms), ` +
          `settled after ${r.settleS.toFixed(0)} s, then idle ${IDLE_S} s: CPU ${(100 * r.idleShare).toFixed(2)}% of a core, RSS ${r.rss.toFixed(0)} MiB`,
      );
    }
  }
  builds.forEach((bin, i) => {
    const m = (f: (r: Run) => number): string => median(runs[i]!.map(f)).toFixed(0);
    console.log(
      `median of ${RUNS} (${bin}): create ${m((r) => r.createMs)} ms, grow ${m((r) => r.growMs)} ms, ` +
        `touch ${m((r) => r.touchMs)} ms, idle CPU ${median(runs[i]!.map((r) => 100 * r.idleShare)).toFixed(2)}% of a core, RSS ${m((r) => r.rss)} MiB`,
    );
  });
}

await main();
