// `npm run bench:startup`: how long a broker holding many partitions takes to open and serve, after
// a clean stop and after SIGKILL. Fills a data directory in-process (one topic, 10,000 partitions,
// PER_PARTITION bytes each), then starts `conch broker` on it again and again and times each start
// from spawn to the first acknowledged produce, with the page cache dropped before each start when
// the process may (root). STARTUP_COMPARE_BIN=<another build's bin/conch.js> starts that build too,
// in turn with this one on the same data (the order alternating run by run), so that two builds
// are compared in one sitting. Each start also reports the broker's CPU time up to that point
// (from /proc). After a clean stop's start, once every log is open (a lazy build's background
// opener done), one message goes to every partition (so each log has a tail past its checkpoint
// when the SIGKILL comes) and the broker is left idle for
// STARTUP_IDLE_S seconds (default 10), its CPU and RSS read. STARTUP_RUNS (default 3);
// STARTUP_DATA_DIR=<dir> fills <dir>/data once and keeps it, later runs reuse it.
// After SIGKILL the start is timed the same way, and then to every log open (the background
// opener's line, for a build that recovers lazily), and that broker's clean stop (SIGTERM to exit,
// every log open, each recovered after the kill). See docs/performance/scale.md, "Start-up with
// 10,000 partitions" and its second, third and fourth rounds.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pino } from "pino";
import { Broker } from "../src/broker/broker.js";
import { BatchBuilder } from "../src/format/batch-builder.js";
import { createClient } from "../src/index.js";
import { brokerArgs, cpuMs, rssMiB } from "./broker-process.js";
import { median } from "./suite/results.js";

const PARTITIONS = Number(process.env.STARTUP_PARTITIONS ?? 10_000);
const PER_PARTITION = Number(process.env.STARTUP_BYTES_PER_PARTITION ?? 200 * 1024);
const RUNS = Number(process.env.STARTUP_RUNS ?? 3);
/** A data directory filled by an earlier run (kept, not removed): the fill is skipped. */
const KEPT_DIR = process.env.STARTUP_DATA_DIR;
/** Seconds the broker is left idle after the produce to every partition, its CPU and RSS read meanwhile. */
const IDLE_S = Number(process.env.STARTUP_IDLE_S ?? 10);
const TOPIC = "startup";
const BIN = resolve(import.meta.dirname, "../../bin/conch.js");
const COMPARE_BIN = process.env.STARTUP_COMPARE_BIN;
const RECORD = Buffer.alloc(1024, 7);

async function fill(dataDir: string): Promise<void> {
  const broker = await Broker.open({ dataDir, maxPartitions: PARTITIONS + 100 }, pino({ level: "warn" }));
  await broker.createTopic(TOPIC, PARTITIONS);
  const builder = new BatchBuilder({ slabBytes: 64 * 1024 });
  // 16 records of 1 KiB a batch, to every partition in turn, a partition's appends awaited together.
  const batches = Math.ceil(PER_PARTITION / (16 * RECORD.length));
  for (let p = 0; p < PARTITIONS; p++) {
    const appends: Promise<unknown>[] = [];
    for (let b = 0; b < batches; b++) {
      for (let i = 0; i < 16; i++) builder.add(RECORD, null, Date.now());
      appends.push(broker.produce(TOPIC, p, Buffer.from(builder.finish()), "leader"));
    }
    await Promise.all(appends);
  }
  await broker.close();
}

function dropCaches(): boolean {
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "3");
    return true;
  } catch {
    return false;
  }
}

interface Start {
  child: ChildProcess;
  port: number;
  /** What the broker wrote to stdout so far. */
  output: { text: string };
  /** From spawn to the first acknowledged produce, and to the listening line. */
  ms: number;
  listenMs: number;
  /** The broker's CPU time when the produce was acknowledged. */
  cpuMs: number;
}

/** Starts the broker of `bin`; resolves with it and the ms from spawn to the first acknowledged produce. */
async function start(dataDir: string, bin: string): Promise<Start> {
  const t0 = performance.now();
  const child = spawn(process.execPath, brokerArgs(bin, dataDir, PARTITIONS + 100), {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const output = { text: "" };
  const port = await new Promise<number>((ok, fail) => {
    child.stdout!.on("data", (d: Buffer) => {
      output.text += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(output.text);
      if (m) ok(Number(m[1]));
    });
    child.once("exit", (code) => fail(new Error(`broker exited with ${code}: ${output.text}`)));
  });
  const listenMs = performance.now() - t0;
  const client = createClient({ brokers: [`127.0.0.1:${port}`] });
  await client.producer().send(TOPIC, { value: "up", partition: PARTITIONS - 1 });
  const ms = performance.now() - t0;
  const cpu = cpuMs(child.pid);
  await client.close();
  return { child, port, output, ms, listenMs, cpuMs: cpu };
}

/**
 * Before the SIGKILL: one message to every partition, acknowledged, so every log is open (a build
 * that opens lazily has opened them all) and holds a tail its last checkpoint does not cover.
 * Resolves with the ms this took.
 */
async function touchAll(b: Start): Promise<number> {
  const t0 = performance.now();
  const client = createClient({ brokers: [`127.0.0.1:${b.port}`] });
  const messages = Array.from({ length: PARTITIONS }, (_, partition) => ({ value: "tail", partition }));
  await client.producer().sendBatch(TOPIC, messages);
  await client.close();
  return performance.now() - t0;
}

/**
 * Waits until a broker that opened lazily says its background opener has opened every partition
 * (at once for one that opened them all before it listened); resolves with the ms waited. Only
 * then is every partition produced to: one request to 10,000 partitions not open yet waits for
 * all their opens, longer than the client's request timeout on a loaded machine.
 */
async function allOpen(b: Start): Promise<number> {
  const t0 = performance.now();
  if (b.output.text.includes('"lazyTopics":1')) {
    while (!b.output.text.includes("every partition log holding data is open")) {
      await new Promise((ok) => b.child.stdout!.once("data", ok));
    }
  }
  return performance.now() - t0;
}

/** The broker's CPU over IDLE_S seconds of nothing to do (share of one core), and its RSS after, in MiB. */
async function idle(b: Start): Promise<{ cpuShare: number; rssMiB: number }> {
  const before = cpuMs(b.child.pid);
  await new Promise((ok) => setTimeout(ok, IDLE_S * 1000));
  const cpuShare = (cpuMs(b.child.pid) - before) / (IDLE_S * 1000);
  return { cpuShare, rssMiB: rssMiB(b.child.pid) };
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((ok) => {
    child.once("exit", () => ok());
    child.kill(signal);
  });
}

async function main(): Promise<void> {
  const dir = KEPT_DIR ?? (await mkdtemp(join(tmpdir(), "conch-startup-")));
  const dataDir = join(dir, "data");
  try {
    if (KEPT_DIR === undefined || !existsSync(dataDir)) {
      const t = performance.now();
      await fill(dataDir);
      const gib = (PARTITIONS * PER_PARTITION) / 2 ** 30;
      console.log(
        `filled ${PARTITIONS} partitions, ${gib.toFixed(2)} GiB, in ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );
    }
    const builds = COMPARE_BIN === undefined ? [BIN] : [BIN, COMPARE_BIN];
    // A data directory per build, copies of one fill: each start after a clean stop follows a stop
    // by the same build, so that it finds what that build's stop leaves (a manifest or none, an
    // index or none), not what the fill or a kill left: one unmeasured start and stop first.
    const dirs = builds.map((_, i) => (i === 0 ? dataDir : join(dir, `data-${i}`)));
    for (const [i, d] of dirs.entries()) {
      if (!existsSync(d)) execFileSync("cp", ["-a", dataDir, d]);
      const b = await start(d, builds[i]!);
      await allOpen(b);
      await stop(b.child, "SIGTERM");
    }
    const clean = builds.map((): number[] => []);
    const crashed = builds.map((): number[] => []);
    const stops = builds.map((): number[] => []);
    for (let run = 1; run <= RUNS; run++) {
      const order = run % 2 === 1 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
      for (const i of order) {
        const name = builds.length > 1 ? ` ${builds[i]}` : "";
        // After a clean stop (the fill's, then the previous start's SIGTERM).
        const cold = dropCaches();
        let b = await start(dirs[i]!, builds[i]!);
        clean[i]!.push(b.ms);
        console.log(
          `run ${run}${name} after a clean stop: listening ${b.listenMs.toFixed(0)} ms, serving ${b.ms.toFixed(0)} ms, broker CPU ${b.cpuMs} ms${cold ? " (page cache dropped)" : ""}`,
        );
        const opened = b.ms + (await allOpen(b));
        const touched = await touchAll(b);
        const quiet = await idle(b);
        console.log(
          `run ${run}${name} every log open ${opened.toFixed(0)} ms from spawn; one message to each partition ${touched.toFixed(0)} ms; then idle ${IDLE_S} s: CPU ${(100 * quiet.cpuShare).toFixed(2)}% of a core, RSS ${quiet.rssMiB.toFixed(0)} MiB`,
        );
        await stop(b.child, "SIGKILL");
        dropCaches();
        b = await start(dirs[i]!, builds[i]!);
        crashed[i]!.push(b.ms);
        // A build that recovers lazily after a crash (fourth round) has more to open in the background.
        const recovered = b.ms + (await allOpen(b));
        console.log(
          `run ${run}${name} after SIGKILL: listening ${b.listenMs.toFixed(0)} ms, serving ${b.ms.toFixed(0)} ms, broker CPU ${b.cpuMs} ms; every log open ${recovered.toFixed(0)} ms from spawn, broker CPU ${cpuMs(b.child.pid)} ms`,
        );
        // A clean stop with every log open (each recovered by this start: the last wrote to each).
        const t = performance.now();
        await stop(b.child, "SIGTERM");
        stops[i]!.push(performance.now() - t);
        console.log(`run ${run}${name} clean stop (SIGTERM to exit) ${stops[i]!.at(-1)!.toFixed(0)} ms`);
      }
    }
    builds.forEach((bin, i) => {
      console.log(
        `median of ${RUNS}${builds.length > 1 ? ` (${bin})` : ""}: after a clean stop ${median(clean[i]!).toFixed(0)} ms, after SIGKILL ${median(crashed[i]!).toFixed(0)} ms, clean stop ${median(stops[i]!).toFixed(0)} ms`,
      );
    });
  } finally {
    if (KEPT_DIR === undefined) await rm(dir, { recursive: true, force: true });
  }
}

await main();
