import assert from "node:assert/strict";
import { test } from "node:test";
import { renderChart } from "../../bench/suite/chart.js";
import type { SystemId } from "../../bench/suite/clients.js";
import { median, summarize } from "../../bench/suite/results.js";
import { renderTable } from "../../bench/suite/table.js";
import type { WorkloadId } from "../../bench/suite/workloads/workload.js";
import { ok } from "./measurements.js";

const NAMES: Record<SystemId, string> = { conch: "Conch", nats: "NATS JetStream", redis: "Redis Streams" };
const TITLES: Record<WorkloadId, string> = {
  produce: "1. produce",
  consume: "2. consume",
  "kafka-produce": "K1. Kafka produce",
  "kafka-consume": "K2. Kafka consume",
  "kafka-consume-2": "K2b. Kafka consume, two clients",
  latency: "3. latency",
  durable: "4. durable",
  "durable-wait": "4b. durable, stop-and-wait",
  hermit: "5. HermitMQ",
  "hermit-pipelined": "5b. HermitMQ, pipelined",
  "partitions-1": "6a. keyed, 1 partition",
  "partitions-10k": "6b. keyed, 10,000 partitions",
  "connections-1k": "7. 1,000 connections",
  "cold-read": "8. cold read",
};

/** The table of Conch and Redis over `workloads`, with the ceilings in `extra`. */
function tableOf(
  summaries: ReturnType<typeof summarize>,
  workloads: WorkloadId[],
  extra: Partial<Parameters<typeof renderTable>[0]>,
): string {
  return renderTable({
    summaries,
    systemNames: NAMES,
    workloadTitles: TITLES,
    workloads,
    systems: ["conch", "redis"],
    latencyRate: 50_000,
    ...extra,
  });
}

/** An exchange ceiling of `connections` connections at `requestsPerSec`, `perRequest` messages each. */
function exchangeOf(connections: number, requestBytes: number, requestsPerSec: number, perRequest: number) {
  return {
    connections,
    requestBytes,
    replyBytes: 26,
    requests: 10,
    requestsPerSec,
    msgsPerSec: requestsPerSec * perRequest,
    clientCpuUsPerRequest: 20,
  };
}

test("median of odd and even counts", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
});

test("summarize takes medians per system and workload and per-million CPU", () => {
  const s = summarize([
    ok("redis", "produce", 1, 100),
    ok("redis", "produce", 2, 300),
    ok("redis", "produce", 3, 200),
    ok("conch", "produce", 1, 50, { brokerCpuSeconds: 1 }),
  ]);
  const redis = s.find((x) => x.system === "redis")!;
  assert.equal(redis.msgsPerSec, 200);
  assert.equal(redis.runs, 3);
  assert.equal(redis.brokerCpuPerMillion, 4);
  assert.equal(redis.clientCpuPerMillion, 2);
  assert.equal(s.find((x) => x.system === "conch")!.brokerCpuPerMillion, 1);
});

test("summarize keeps the reason when no run succeeded, and counts partial failures", () => {
  const s = summarize([
    { system: "nats", workload: "durable", run: 1, status: "skipped", reason: "cannot fsync" },
    ok("redis", "hermit", 1, 10),
    { system: "redis", workload: "hermit", run: 2, status: "failed", reason: "timed out" },
  ]);
  const nats = s.find((x) => x.system === "nats")!;
  assert.equal(nats.status, "skipped");
  assert.equal(nats.reason, "cannot fsync");
  const redis = s.find((x) => x.system === "redis")!;
  assert.equal(redis.status, "ok");
  assert.equal(redis.runsOk, 1);
  assert.match(redis.reason ?? "", /timed out/);
});

test("the table gives ratios against Conch and says why a row was not run", () => {
  const summaries = summarize([
    ok("conch", "produce", 1, 200_000),
    ok("redis", "produce", 1, 50_000),
    { system: "nats", workload: "produce", run: 1, status: "skipped", reason: "not installed" },
    ok("conch", "latency", 1, 50_000, {
      latencyUs: { count: 10, p50: 1000, p99: 2000, p999: 3000, max: 4000 },
    }),
    ok("redis", "latency", 1, 50_000, {
      latencyUs: { count: 10, p50: 1000, p99: 5000, p999: 9000, max: 9000 },
    }),
  ]);
  const table = renderTable({
    summaries,
    systemNames: NAMES,
    workloadTitles: TITLES,
    workloads: ["produce", "latency"],
    systems: ["conch", "nats", "redis"],
    disk: { sequentialMBps: 400, bytes: 1, syncWriteMedianUs: 1000, syncSamples: 1, dir: "/tmp" },
    latencyRate: 50_000,
  });
  const row = (system: string, workload: string) =>
    table.split("\n").find((l) => l.includes(system) && l.includes(workload)) ?? "";
  assert.match(row("Redis Streams", "produce"), /\| 0\.25x /);
  assert.match(row("Conch", "produce"), /\| 1\.00x /);
  // 200,000 msgs/s x 100 B = 20 MB/s = 5% of 400 MB/s
  assert.match(row("Conch", "produce"), /5\.0% disk/);
  assert.match(row("NATS JetStream", "produce"), /not run: not installed/);
  assert.match(row("Redis Streams", "latency"), /p99 2\.50x/);
  assert.match(row("Redis Streams", "latency"), /\| 5\.00 +\| 9\.00 /);
});

test("workload 3 and 5 rows are read against the bare round trip and exchange of this machine", () => {
  const summaries = summarize([
    ok("conch", "latency", 1, 50_000, {
      latencyUs: { count: 10, p50: 500, p99: 2400, p999: 3000, max: 4000 },
    }),
    ok("conch", "hermit", 1, 1_000_000),
    ok("redis", "hermit", 1, 100_000),
  ]);
  const table = tableOf(summaries, ["latency", "hermit"], {
    roundTrip: { bytes: 1766, paceMs: 0.25, count: 10, p50Us: 150, p99Us: 300, p999Us: 900 },
    exchange: exchangeOf(10, 5788, 40_000, 100),
  });
  const row = (system: string, workload: string) =>
    table.split("\n").find((l) => l.includes(system) && l.includes(workload)) ?? "";
  // 2.4 ms against a 0.3 ms round trip
  assert.match(row("Conch", "latency"), /p99 8\.0x round trip/);
  // 1,000,000 of 4,000,000 msg/s
  assert.match(row("Conch", "HermitMQ"), /25\.0% exchange/);
  assert.match(row("Redis Streams", "HermitMQ"), /2\.5% exchange/);
});

test("workload 4b rows are read against the fsync rate and against 4b's own exchange without a disk", () => {
  const summaries = summarize([
    ok("conch", "durable-wait", 1, 15_000),
    ok("redis", "durable-wait", 1, 20_000),
  ]);
  const table = tableOf(summaries, ["durable-wait"], {
    disk: { sequentialMBps: 400, bytes: 1, syncWriteMedianUs: 400, syncSamples: 1, dir: "/tmp" },
    durableExchange: exchangeOf(16, 223, 40_000, 1),
  });
  const row = (system: string) =>
    table.split("\n").find((l) => l.includes(system) && l.includes("4b.")) ?? "";
  // 15,000 msg/s x 400 us = 6 fsyncs' worth a second; 15,000 of 40,000 exchanges a second
  assert.match(row("Conch"), /6\.00x fsync\/s, 37\.5% exchange/);
  assert.match(row("Redis Streams"), /8\.00x fsync\/s, 50\.0% exchange/);
});

test("workload 3 is read against the round trip measured right before each run, when there is one", () => {
  const lat = (p99: number) => ({ count: 10, p50: 500, p99, p999: 3000, max: 4000 });
  const summaries = summarize([
    // 2.4 / 0.3 = 8x, 2.0 / 0.5 = 4x, 3.0 / 0.5 = 6x: the median ratio is 6x, not 2.4 / 0.5.
    ok("conch", "latency", 1, 50_000, { latencyUs: lat(2400), roundTripP99Us: 300 }),
    ok("conch", "latency", 2, 50_000, { latencyUs: lat(2000), roundTripP99Us: 500 }),
    ok("conch", "latency", 3, 50_000, { latencyUs: lat(3000), roundTripP99Us: 500 }),
    ok("redis", "latency", 1, 50_000, { latencyUs: lat(9000) }),
  ]);
  const conch = summaries.find((s) => s.system === "conch")!;
  assert.equal(conch.roundTripP99Us, 500);
  assert.equal(conch.p99OverRoundTrip, 6);
  const table = renderTable({
    summaries,
    systemNames: NAMES,
    workloadTitles: TITLES,
    workloads: ["latency"],
    systems: ["conch", "redis"],
    roundTrip: { bytes: 1766, paceMs: 0.25, count: 10, p50Us: 150, p99Us: 300, p999Us: 900 },
    latencyRate: 50_000,
  });
  const row = (system: string) =>
    table.split("\n").find((l) => l.includes(system) && l.includes("latency")) ?? "";
  assert.match(row("Conch"), /p99 6\.0x round trip before it/);
  // Without its own, a run is read against the round trip of the run's start: 9 / 0.3.
  assert.match(row("Redis Streams"), /p99 30\.0x round trip +\|/);
});

test("workload 5's warm rate is the median of the runs', and its broker CPU counts every message sent", () => {
  const summaries = summarize([
    ok("conch", "hermit", 1, 1_000_000, { warmMsgsPerSec: 2_500_000, messagesSent: 4_000_000 }),
    ok("conch", "hermit", 2, 1_100_000, { warmMsgsPerSec: 2_700_000, messagesSent: 4_000_000 }),
    ok("conch", "hermit", 3, 1_200_000, { warmMsgsPerSec: 2_600_000, messagesSent: 4_000_000 }),
  ]);
  const s = summaries.find((x) => x.workload === "hermit")!;
  assert.equal(s.warmMsgsPerSec, 2_600_000);
  // 4 s of broker CPU over 4,000,000 messages sent; the client's 2 s over the 1,000,000 measured.
  assert.equal(s.brokerCpuPerMillion, 1);
  assert.equal(s.clientCpuPerMillion, 2);
  const table = renderTable({
    summaries,
    systemNames: NAMES,
    workloadTitles: TITLES,
    workloads: ["hermit"],
    systems: ["conch"],
    latencyRate: 50_000,
  });
  assert.match(table, /warm: 2,600,000 msgs\/s/);
});

test("workload 7 keeps the median of each run's share of the producer's rate alone", () => {
  const summaries = summarize([
    ok("conch", "connections-1k", 1, 900_000, { soloMsgsPerSec: 1_000_000 }),
    ok("conch", "connections-1k", 2, 500_000, { soloMsgsPerSec: 1_000_000 }),
    // The slowest run alone kept the most: the share is a median of ratios, not a ratio of medians.
    ok("conch", "connections-1k", 3, 400_000, { soloMsgsPerSec: 500_000 }),
  ]);
  const s = summaries.find((x) => x.workload === "connections-1k")!;
  assert.equal(s.soloMsgsPerSec, 1_000_000);
  assert.equal(s.soloShare, 0.8);
  const table = renderTable({
    summaries,
    systemNames: NAMES,
    workloadTitles: TITLES,
    workloads: ["connections-1k"],
    systems: ["conch"],
    latencyRate: 50_000,
  });
  assert.match(table, /80% of alone/);
  assert.match(table, /alone: 1,000,000 msgs\/s, 80% kept/);
});

test("workload 8 reads each run's producer p99 against its own p99 alone, and the reads against the cold disk", () => {
  const lat = (p99: number) => ({ count: 1, p50: p99 / 2, p99, p999: p99, max: p99 });
  const summaries = summarize([
    ok("conch", "cold-read", 1, 1_000_000, {
      latencyUs: lat(3_000),
      soloLatencyUs: lat(1_000),
      payloadMBps: 300,
    }),
    ok("conch", "cold-read", 2, 1_000_000, {
      latencyUs: lat(2_000),
      soloLatencyUs: lat(2_000),
      payloadMBps: 300,
    }),
    ok("conch", "cold-read", 3, 1_000_000, {
      latencyUs: lat(4_000),
      soloLatencyUs: lat(2_000),
      payloadMBps: 300,
    }),
  ]);
  const s = summaries.find((x) => x.workload === "cold-read")!;
  assert.equal(s.p99OverSolo, 2);
  assert.equal(s.soloLatencyUs?.p99, 2_000);
  const table = renderTable({
    summaries,
    systemNames: NAMES,
    workloadTitles: TITLES,
    workloads: ["cold-read"],
    systems: ["conch"],
    latencyRate: 50_000,
    disk: {
      sequentialMBps: 400,
      coldReadMBps: 400,
      bytes: 1,
      syncWriteMedianUs: 300,
      syncSamples: 1,
      dir: "/tmp",
    },
  });
  assert.match(table, /p99 beside the reads 2\.00x/);
  assert.match(table, /75% cold disk read/);
});

test("the chart is one SVG document with escaped text and a bar per measured system", () => {
  const summaries = summarize([
    ok("conch", "produce", 1, 200_000),
    ok("redis", "produce", 1, 50_000),
    { system: "nats", workload: "produce", run: 1, status: "skipped", reason: "needs <a> & b" },
  ]);
  const svg = renderChart({
    summaries,
    systems: ["conch", "nats", "redis"],
    systemNames: NAMES,
    workloads: ["produce"],
    workloadTitles: TITLES,
    subtitle: "test",
    latencyRate: 50_000,
  });
  assert.ok(svg.startsWith("<svg "));
  assert.equal(svg.match(/<svg /g)?.length, 1);
  assert.ok(svg.includes("needs &lt;a&gt; &amp; b"));
  assert.ok(!svg.includes("<a>"));
  assert.ok(svg.includes("200,000"));
  // background + 2 bars
  assert.equal(svg.match(/<rect /g)?.length, 3);
});
