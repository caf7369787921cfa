import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { after, before, test } from "node:test";
import { conchClient } from "../../bench/suite/conch-driver.js";
import { conchServer } from "../../bench/suite/conch-server.js";
import { KCAT } from "../../bench/suite/kcat.js";
import { processCpuSeconds } from "../../bench/suite/proc-cpu.js";
import type { ClientDriver, RunningServer } from "../../bench/suite/types.js";
import { runWorker } from "../../bench/suite/worker-run.js";
import { coldRead } from "../../bench/suite/workloads/cold-read.js";
import { connections1k } from "../../bench/suite/workloads/connections.js";
import { consume } from "../../bench/suite/workloads/consume.js";
import { durable, durableWait } from "../../bench/suite/workloads/durable.js";
import { kafkaConsume, kafkaProduce } from "../../bench/suite/workloads/kafka.js";
import { latency } from "../../bench/suite/workloads/latency.js";
import { partitions10k } from "../../bench/suite/workloads/partitions.js";
import { produce } from "../../bench/suite/workloads/produce.js";
import type { WorkerEnv } from "../../bench/suite/workloads/workload.js";

// The Conch side of the suite against a real broker process, at tiny scales: the workloads must
// deliver exactly what they sent, and the worker process must report or be killed on time.

const built = existsSync(new URL("../../src/cli/main.js", import.meta.url));
let server: RunningServer;
let driver: ClientDriver;

before(async () => {
  if (!built) return;
  server = await conchServer.start("interval");
  driver = await conchClient(server.endpoint);
});

/** The worker's view of the system under test. */
function env(): WorkerEnv {
  return { system: "conch", endpoint: server.endpoint };
}

after(async () => {
  if (!built) return;
  await driver.close();
  await server.stop();
  assert.equal(processCpuSeconds(server.pid), null, "the broker process is gone");
});

test("produce then consume reads back every message", { skip: !built }, async () => {
  const p = produce.params(0.0004); // 2,000 messages
  const wrote = await produce.run(driver, p, env());
  assert.equal(wrote.messages, 2_000);
  assert.equal(wrote.payloadBytes, 200_000);
  const read = await consume.run(driver, p, env());
  assert.equal(read.messages, 2_000);
  assert.equal(read.payloadBytes, 200_000);
});

const kcat = spawnSync(KCAT, ["-V"]).status === 0;

test("Kafka produce then Kafka consume move every message through kcat", {
  skip: !built || !kcat,
}, async () => {
  assert.ok(server.kafka, "the broker's Kafka listener is known");
  const p = kafkaProduce.params(0.0005); // 2,500 messages: two batches and a tail
  assert.equal(p.messagesPerProducer, 2_500);
  const endpoints = { ...env(), kafka: server.kafka };
  const wrote = await kafkaProduce.run(driver, p, endpoints);
  assert.equal(wrote.messages, 2_500);
  assert.ok(wrote.clientCpuSeconds > 0, "kcat's CPU is counted");
  const read = await kafkaConsume.run(driver, p, endpoints);
  assert.equal(read.messages, 2_500);
  // Asking for more than was written fails instead of waiting or passing.
  const more = { ...p, messagesPerProducer: 2_501 };
  await assert.rejects(kafkaConsume.run(driver, more, endpoints), /read 2,?500 of 2,?501/);
});

test("the broker reports its GC and CPU totals on request", { skip: !built }, async () => {
  const first = await server.gcSnapshot?.();
  await produce.run(driver, { ...produce.params(0.0004), stream: "bench_gc" }, env());
  const second = await server.gcSnapshot?.();
  assert.ok(first && second, "both snapshots answered");
  assert.ok(second.cpuMs > first.cpuMs);
  assert.ok(second.gcMs >= first.gcMs && second.gcCount >= first.gcCount);
});

test("latency records every message after the warm-up", { skip: !built }, async () => {
  const p = latency.params(0.01); // 5,500 messages at 50,000 msg/s
  const out = await latency.run(driver, p, env());
  assert.equal(out.messages, 5_500);
  assert.equal(out.latencyUs?.count, 5_500 - p.warmupMessages);
  assert.ok(out.latencyUs.p50 <= out.latencyUs.p99 && out.latencyUs.p99 <= out.latencyUs.p999);
});

test("durable producers are acknowledged for every message", { skip: !built }, async () => {
  const out = await durable.run(driver, durable.params(0.01), env()); // 16 x 500
  assert.equal(out.messages, 8_000);
  const wait = await durableWait.run(driver, durableWait.params(0.01), env()); // 16 x 50
  assert.equal(wait.messages, 800);
});

test("workload 6b waits until every acknowledged message is readable, and reports that rate too", {
  skip: !built,
}, async () => {
  // 16 x 5,000 keyed messages over 1,000 partitions (the suite's 10,000 open slowly in a test):
  // one record a partition per send call, so the SDK sends them as partitioned batches, whose
  // records the broker defers, and the last of them become readable only at their spill.
  const p = { ...partitions10k.params(0.05), stream: "keyed_1000", partitions: 1_000 };
  const out = await partitions10k.run(driver, p, env());
  assert.equal(out.messages, 80_000);
  assert.ok(out.readableMsgsPerSec !== undefined && out.readableMsgsPerSec > 0);
  assert.ok(out.readableMsgsPerSec <= out.messages / out.seconds, "readable no sooner than acknowledged");
  assert.equal(await driver.readable!("keyed_1000"), 80_000);
});

test("workload 7 measures its producer alone, then among a crowd in another process once it has warmed up", {
  skip: !built,
}, async () => {
  const p = { ...connections1k.params(0.01), connections: 40 }; // 10,000 messages, each round
  const out = await connections1k.run(driver, p, env());
  assert.equal(out.messages, 10_000);
  assert.ok(out.soloMsgsPerSec !== undefined && out.soloMsgsPerSec > 0);
  // Both rounds, and the crowd's sends: its two warm-up rounds ran before the measured one began.
  assert.ok(out.messagesSent !== undefined && out.messagesSent >= 20_000 + 2 * p.connections);
});

test("workload 8 reads every message written, its producer timed alone and beside the reads", {
  skip: !built || process.getuid?.() !== 0 ? "dropping the page cache needs root" : false,
}, async () => {
  const p = coldRead.params(0.0001); // 4 x 2,500 messages of 1 KiB; the producer 1 s alone
  const out = await coldRead.run(driver, p, env());
  assert.equal(out.messages, 10_000);
  assert.equal(out.payloadBytes, 10_000 * 1024);
  assert.ok(out.soloLatencyUs !== undefined && out.soloLatencyUs.count >= 9_000, "about 1 s at 10,000 msg/s");
  assert.ok(out.latencyUs !== undefined && out.latencyUs.count > 0);
});

test("a worker process reports its outcome", { skip: !built }, async () => {
  const result = await runWorker(
    { system: "conch", workload: "hermit", endpoint: server.endpoint, scale: 0.001 },
    60_000,
  );
  assert.ok(result.ok, result.ok ? "" : result.error);
  assert.equal(result.outcome.messages, 1_000);
  assert.ok((result.outcome.workerCpuSeconds ?? 0) > 0);
  // Workload 5 also runs warm: at least one more round after the measured one, all counted as sent.
  assert.ok((result.outcome.warmMsgsPerSec ?? 0) > 0);
  const sent = result.outcome.messagesSent ?? 0;
  assert.ok(sent >= 2_000 && sent % 1_000 === 0, `sent ${sent}`);
});

test("a worker past its time limit is killed and reported", { skip: !built }, async (t) => {
  // A listener that never answers: the worker's client waits for its handshake until killed,
  // however fast or slow the worker starts.
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  t.after(() => silent.close());
  const { port } = silent.address() as AddressInfo;
  const result = await runWorker(
    { system: "conch", workload: "produce", endpoint: { host: "127.0.0.1", port }, scale: 1 },
    300,
  );
  assert.deepEqual(result, { ok: false, error: "timed out after 0 s" });
});
