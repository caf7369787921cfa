import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { renderChart } from "../../bench/suite/chart.js";
import { gcShare, lastGcSnapshot } from "../../bench/suite/gc-snapshot.js";
import { kafkaTargets, renderKafkaTargets } from "../../bench/suite/kafka-targets.js";
import { LengthLineCounter } from "../../bench/suite/kcat-output.js";
import { NO_KAFKA, runSession, sessions } from "../../bench/suite/measure.js";
import { parseOptions } from "../../bench/suite/options.js";
import { type Measurement, summarize } from "../../bench/suite/results.js";
import { renderTable } from "../../bench/suite/table.js";
import type { ServerSpec } from "../../bench/suite/types.js";
import { WORKLOADS } from "../../bench/suite/workloads/index.js";
import { kafkaConsume, kafkaConsumeTwo, kafkaProduce, kcatInput } from "../../bench/suite/workloads/kafka.js";
import { totalMessages, type WorkloadId } from "../../bench/suite/workloads/workload.js";
import { ok } from "./measurements.js";

// The Kafka workloads' pieces that need no broker: kcat's output and input, the targets, the rows.

function lengths(values: readonly string[]): Buffer {
  return Buffer.from(values.map((v) => `${v}\n`).join(""));
}

test("kcat's length lines are counted, and wrong or non-numeric lengths are caught", () => {
  const c = new LengthLineCounter(100);
  c.push(lengths(["100", "100", "99", "1000", "", "1x0", "100"]));
  assert.equal(c.messages, 7);
  assert.equal(c.wrongSize, 4);
  assert.equal(c.partial, false);
  c.push(Buffer.from("10"));
  assert.equal(c.partial, true, "a line without its newline is output cut short");
});

test("kcat's length lines give the same counts however the pipe splits them", () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constant("100"), fc.constant("0"), fc.constant("1001"), fc.constant("abc")), {
        maxLength: 60,
      }),
      fc.array(fc.nat(), { maxLength: 8 }),
      (values, cuts) => {
        const bytes = lengths(values);
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const c = new LengthLineCounter(100);
        let from = 0;
        for (const p of [...points, bytes.length]) {
          c.push(bytes.subarray(from, p));
          from = p;
        }
        assert.equal(c.messages, values.length);
        assert.equal(c.wrongSize, values.filter((v) => v !== "100").length);
        assert.equal(c.partial, false);
      },
    ),
  );
});

test("kcat's input holds exactly the messages asked for, each of the payload size, no newline inside", () => {
  const input = kcatInput(100, 1_000, 2_345);
  assert.equal(input.repeat, 2);
  const all = Buffer.concat([...new Array<Buffer>(input.repeat).fill(input.block), input.tail]);
  assert.equal(all.length, 2_345 * 101);
  const lines = all.toString("latin1").split("\n");
  assert.equal(lines.pop(), "", "the input ends with a newline");
  assert.equal(lines.length, 2_345);
  for (const line of lines) assert.equal(line.length, 100);
});

test("the Kafka pair shares a server after the native pair, with workload 1's numbers", () => {
  const ids = sessions(WORKLOADS).map((s) => s.map((w) => w.id));
  assert.deepEqual(ids.slice(0, 2), [
    ["produce", "consume"],
    ["kafka-produce", "kafka-consume", "kafka-consume-2"],
  ]);
  const native = WORKLOADS.find((w) => w.id === "produce")!.params(1);
  const kafka = kafkaProduce.params(1);
  assert.equal(totalMessages(kafka), totalMessages(native));
  assert.equal(kafka.payloadBytes, 100);
  assert.equal(kafka.batch, 1_000);
  assert.deepEqual(kafkaConsume.params(0.3), kafkaProduce.params(0.3));
  assert.deepEqual(kafkaConsumeTwo.params(0.3), kafkaProduce.params(0.3));
  assert.notEqual(kafka.stream, native.stream);
  const o = parseOptions(["--workloads", "kafka-consume,kafka-produce"]);
  assert.deepEqual(o.workloads, ["kafka-produce", "kafka-consume"]);
});

test("a system without a Kafka listener gets 'not run: no Kafka protocol' and is never started", async () => {
  let started = 0;
  const spec: ServerSpec = {
    name: "Peer",
    probe: async () => ({ ok: true, version: "1", client: "c" }),
    unsupported: () => null,
    describe: () => "",
    start: async () => {
      started++;
      throw new Error("must not start");
    },
  };
  const session = sessions(WORKLOADS).find((s) => s[0]!.id === "kafka-produce")!;
  const out = await runSession({ system: "nats", spec, run: 1, scale: 0.01, log: () => {} }, session);
  assert.equal(started, 0);
  assert.deepEqual(
    out.map((m) => [m.workload, m.status, m.reason]),
    [
      ["kafka-produce", "skipped", NO_KAFKA],
      ["kafka-consume", "skipped", NO_KAFKA],
      ["kafka-consume-2", "skipped", NO_KAFKA],
    ],
  );
});

const measured = [
  ok("conch", "produce", 1, 900_000, { brokerCpuSeconds: 2, brokerGcShare: 0.042 }),
  ok("conch", "consume", 1, 2_000_000, { brokerCpuSeconds: 1, brokerGcShare: 0.042 }),
  ok("conch", "kafka-produce", 1, 1_200_000, { brokerCpuSeconds: 2.5, brokerGcShare: 0.042 }),
  ok("conch", "kafka-consume", 1, 1_000_000, { brokerCpuSeconds: 2, brokerGcShare: 0.042 }),
  { system: "nats", workload: "kafka-produce", run: 1, status: "skipped", reason: NO_KAFKA },
] satisfies Measurement[];

test("the targets compare the Kafka rates and the broker's CPU per message with the native path's", () => {
  const ids: WorkloadId[] = ["produce", "consume", "kafka-produce", "kafka-consume"];
  const targets = kafkaTargets(summarize(measured), ids);
  assert.deepEqual(
    targets.map((t) => [t.value, t.met]),
    [
      [1_200_000, true],
      [1.25, true],
      [1_000_000, false],
      [2, false],
    ],
  );
  const text = renderKafkaTargets(targets);
  assert.match(text, /kafka-produce\): 1,200,000 \(target >= 1,000,000: met\)/);
  assert.match(text, /kafka-consume \/ consume: 2\.00x \(target <= 1\.5x: NOT met\)/);
  // Without the native twin in the run, the ratio is unknown rather than made up.
  const alone = kafkaTargets(summarize(measured.filter((m) => m.workload !== "produce")), ["kafka-produce"]);
  assert.deepEqual(
    alone.map((t) => t.met),
    [true, null],
  );
  assert.equal(renderKafkaTargets(kafkaTargets(summarize(measured), ["produce"])), "");
});

test("two clients' consume rate is held to the consume target, its CPU to the native consume's", () => {
  const both = [
    ...measured,
    ok("conch", "kafka-consume-2", 1, 1_800_000, { brokerCpuSeconds: 1.2, brokerGcShare: 0.01 }),
  ] satisfies Measurement[];
  const targets = kafkaTargets(summarize(both), ["consume", "kafka-consume", "kafka-consume-2"]);
  assert.deepEqual(
    targets.map((t) => [t.what, t.value, t.met]),
    [
      ["msg/s consumed through the Kafka listener (kafka-consume)", 1_000_000, false],
      ["broker CPU per message, kafka-consume / consume", 2, false],
      ["msg/s consumed by two clients through the Kafka listener (kafka-consume-2)", 1_800_000, true],
      ["broker CPU per message, kafka-consume-2 / consume", 1.2, true],
    ],
  );
});

test("the table's Kafka rows carry the CPU ratio and GC share, and peers say why they did not run", () => {
  const table = renderTable({
    summaries: summarize(measured),
    systemNames: { conch: "Conch", nats: "NATS JetStream", redis: "Redis Streams" },
    workloadTitles: Object.fromEntries(WORKLOADS.map((w) => [w.id, w.title])) as Record<WorkloadId, string>,
    workloads: ["produce", "kafka-produce"],
    systems: ["conch", "nats"],
    latencyRate: 50_000,
  });
  const row = (system: string, workload: string) =>
    table.split("\n").find((l) => l.includes(system) && l.includes(workload)) ?? "";
  assert.match(row("Conch", "Kafka produce"), /broker CPU\/msg 1\.25x produce's/);
  assert.match(row("Conch", "Kafka produce"), /broker GC 4\.2%/);
  assert.match(row("Conch", "1. produce"), /broker GC 4\.2%/);
  assert.doesNotMatch(row("Conch", "1. produce"), /CPU\/msg/);
  assert.match(row("NATS JetStream", "Kafka produce"), /not run: no Kafka protocol/);
});

test("the chart's Kafka panels name the broker's CPU per message against the native path's", () => {
  const svg = renderChart({
    summaries: summarize(measured),
    systems: ["conch", "nats"],
    systemNames: { conch: "Conch", nats: "NATS JetStream", redis: "Redis Streams" },
    workloads: ["produce", "kafka-produce"],
    workloadTitles: Object.fromEntries(WORKLOADS.map((w) => [w.id, w.title])) as Record<WorkloadId, string>,
    subtitle: "test",
    latencyRate: 50_000,
  });
  assert.ok(svg.includes("K1. Kafka produce — messages per second (Conch's broker CPU per message 1.25x"));
  assert.ok(svg.includes("not run: no Kafka protocol"));
});

test("a GC snapshot is read from the last gc-share line, and the share is GC over CPU between two", () => {
  const log = [
    '{"level":40,"msg":"x"}',
    'gc-share {"wallMs":1,"cpuMs":100,"gcMs":5,"gcCount":2}',
    'gc-share {"wallMs":2,"cpuMs":300,"gcMs":25,"gcCount":9}',
    "",
  ].join("\n");
  const last = lastGcSnapshot(log);
  assert.deepEqual(last, { cpuMs: 300, gcMs: 25, gcCount: 9 });
  assert.equal(gcShare({ cpuMs: 100, gcMs: 5, gcCount: 2 }, last!), 0.1);
  assert.equal(gcShare(last!, last!), null);
  // A line still being written, or not a snapshot, gives nothing.
  assert.equal(lastGcSnapshot('gc-share {"wallMs":1,"cpuMs":1'), null);
  assert.equal(lastGcSnapshot('gc-share {"wallMs":1}\n'), null);
});
