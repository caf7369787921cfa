import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { StepTimeout, withDeadline } from "../../bench/suite/deadline.js";
import { measureDurableExchange, measureLoopback } from "../../bench/suite/exchange-ceiling.js";
import { sessions } from "../../bench/suite/measure.js";
import { parseOptions } from "../../bench/suite/options.js";
import { machineBusySeconds, processCpuSeconds } from "../../bench/suite/proc-cpu.js";
import { clearSpentData, clearSpentDataSync, retire } from "../../bench/suite/spent-data.js";
import type { Producer } from "../../bench/suite/types.js";
import { WORKLOADS } from "../../bench/suite/workloads/index.js";
import { payloadBatch, sendAll } from "../../bench/suite/workloads/send-loop.js";
import { scaled, totalMessages } from "../../bench/suite/workloads/workload.js";

test("consume shares produce's server; every other workload gets its own", () => {
  const ids = sessions(WORKLOADS).map((s) => s.map((w) => w.id));
  assert.deepEqual(ids, [
    ["produce", "consume"],
    ["kafka-produce", "kafka-consume", "kafka-consume-2"],
    ["latency"],
    ["durable"],
    ["durable-wait"],
    ["hermit"],
    ["hermit-pipelined"],
    ["partitions-1"],
    ["partitions-10k"],
    ["connections-1k"],
    ["cold-read"],
  ]);
});

test("workload parameters at full scale are the ones the method states", () => {
  const byId = Object.fromEntries(WORKLOADS.map((w) => [w.id, w.params(1)]));
  assert.equal(totalMessages(byId.produce!), 5_000_000);
  assert.equal(byId.produce!.payloadBytes, 100);
  assert.equal(totalMessages(byId.hermit!), 1_000_000);
  assert.equal(byId.hermit!.producers, 10);
  assert.equal(byId.hermit!.batch, 100);
  assert.equal(byId.hermit!.payloadBytes, 28);
  assert.equal(byId.hermit!.inFlight, 1);
  for (const id of ["partitions-1", "partitions-10k"]) {
    assert.equal(totalMessages(byId[id]!), 1_600_000);
    assert.equal(byId[id]!.producers, 16);
  }
  assert.equal(byId["partitions-10k"]!.partitions, 10_000);
  assert.equal(byId["connections-1k"]!.connections, 1_000);
  assert.equal(byId["connections-1k"]!.producers, 1);
  // 4 x 2,441,406 messages of 1 KiB: the 10 GB the method states.
  assert.equal(totalMessages(byId["cold-read"]!) * byId["cold-read"]!.payloadBytes, 9_999_998_976);
  assert.equal(totalMessages(byId["hermit-pipelined"]!), 1_000_000);
  assert.equal(byId["hermit-pipelined"]!.batch, 100);
  assert.equal(byId["hermit-pipelined"]!.inFlight, 4);
  assert.equal(byId.durable!.producers, 16);
  assert.equal(byId.durable!.batch, 1);
  assert.equal(byId.durable!.inFlight, 256);
  assert.equal(totalMessages(byId.durable!), 800_000);
  assert.equal(byId["durable-wait"]!.producers, 16);
  assert.equal(byId["durable-wait"]!.inFlight, 1);
  assert.equal(byId.latency!.rate, 50_000);
  assert.equal(scaled(5_000_000, 0.001, 1_000), 5_000);
  assert.equal(scaled(10, 0.001, 1_000), 1_000);
});

test("the loopback and 4b exchange ceilings run against a reply server in another process", async () => {
  // 64 MiB acknowledged a byte per MiB: the measurement ends only once the other process has read
  // every chunk.
  const loopback = await measureLoopback(64 * 1024 * 1024);
  assert.equal(loopback.bytes, 64 * 1024 * 1024);
  assert.ok(loopback.MBps > 0);
  const x = await measureDurableExchange(320);
  assert.equal(x.connections, 16);
  assert.equal(x.requests, 320);
  assert.equal(x.msgsPerSec, x.requestsPerSec); // one message a request
  assert.ok(x.requestBytes > 100 && x.replyBytes > 0);
  assert.ok(x.clientCpuUsPerRequest > 0);
});

test("options reject unknown systems and out-of-range numbers", () => {
  assert.throws(() => parseOptions(["--systems", "kafka"]), /unknown kafka/);
  assert.throws(() => parseOptions(["--scale", "0"]), /--scale/);
  assert.throws(() => parseOptions(["--runs", "1.5"]), /--runs/);
  const o = parseOptions(["--systems", "redis,conch", "--scale", "0.1", "--no-install"]);
  assert.deepEqual(o.systems, ["conch", "redis"]);
  assert.equal(o.scale, 0.1);
  assert.equal(o.install, false);
});

test("withDeadline rejects with StepTimeout when the work is slower", async () => {
  const never = new Promise<never>(() => {});
  await assert.rejects(withDeadline("step", 20, never), StepTimeout);
  assert.equal(await withDeadline("step", 1_000, Promise.resolve(7)), 7);
});

test("CPU readings from /proc grow as this process works", { skip: process.platform !== "linux" }, () => {
  const before = processCpuSeconds(process.pid);
  const busy = machineBusySeconds();
  assert.ok(before !== null && busy !== null);
  const until = Date.now() + 50;
  let x = 0;
  while (Date.now() < until) x += Math.sqrt(x + 1);
  assert.ok(x > 0);
  assert.ok(processCpuSeconds(process.pid)! >= before);
  assert.ok(machineBusySeconds()! >= busy);
  assert.equal(processCpuSeconds(2 ** 30), null);
});

/** A producer that records concurrency and acknowledges on demand. */
class FakeProducer implements Producer {
  inFlight = 0;
  maxInFlight = 0;
  sent = 0;
  calls: Array<() => void> = [];
  failAt = -1;

  sendBatch(payloads: readonly Buffer[]): Promise<void> {
    const index = this.calls.length;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.sent += payloads.length;
    return new Promise((resolve, reject) => {
      this.calls.push(() => {
        this.inFlight--;
        if (index === this.failAt) reject(new Error("broker said no"));
        else resolve();
      });
      // Acknowledge asynchronously, as a network would.
      setImmediate(() => this.calls[index]!());
    });
  }

  async close(): Promise<void> {}
}

test("sendAll sends exactly the total and never exceeds the window", async () => {
  const p = new FakeProducer();
  await sendAll(p, 1_050, payloadBatch(10, 100), 3);
  assert.equal(p.sent, 1_050);
  assert.equal(p.calls.length, 11);
  assert.equal(p.maxInFlight, 3);
  assert.equal(p.inFlight, 0);
});

test("sendAll stops and rejects after a failed call", async () => {
  const p = new FakeProducer();
  p.failAt = 2;
  await assert.rejects(sendAll(p, 10_000, payloadBatch(10, 100), 2), /broker said no/);
  assert.ok(p.calls.length < 100);
});

test("a stopped server's data waits until the end of its run, is emptied while runs follow, and goes after the last", async () => {
  const a = mkdtempSync(join(tmpdir(), "conch-spent-"));
  const b = mkdtempSync(join(tmpdir(), "conch-spent-"));
  mkdirSync(join(a, "t-0"));
  writeFileSync(join(a, "t-0", "0.wal"), "x".repeat(10_000));
  writeFileSync(join(b, "data"), "y");
  retire(a);
  retire(b);
  assert.ok(existsSync(a) && existsSync(b), "retiring removes nothing");
  // Another run follows: every file is emptied, none unlinked (no inode freed).
  const waited = await clearSpentData(true);
  assert.equal(statSync(join(a, "t-0", "0.wal")).size, 0);
  assert.equal(statSync(join(b, "data")).size, 0);
  // At least ten probes 200 ms apart; at most the 30 s limit plus the last probe's sleep.
  assert.ok(waited >= 1_800 && waited < 31_000, `waited ${waited} ms`);
  // After the last run, the emptied directories go with the run's own.
  const c = mkdtempSync(join(tmpdir(), "conch-spent-"));
  retire(c);
  await clearSpentData(false);
  assert.ok(!existsSync(a) && !existsSync(b) && !existsSync(c));
  const d = mkdtempSync(join(tmpdir(), "conch-spent-"));
  retire(d);
  await clearSpentData(true);
  assert.ok(existsSync(d));
  clearSpentDataSync();
  assert.ok(!existsSync(d), "the exit handler's form removes emptied ones too");
});
