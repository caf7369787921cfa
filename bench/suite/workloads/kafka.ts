import { startClockWithChildren } from "../clock.js";
import { type KcatInput, type KcatRun, runKcat } from "../kcat.js";
import { KCAT_LENGTH_FORMAT, LengthLineCounter } from "../kcat-output.js";
import type { Endpoint } from "../types.js";
import { produce } from "./produce.js";
import { totalMessages, type Workload, type WorkloadParams } from "./workload.js";

// Workloads 1 and 2 through the Kafka listener, with librdkafka (kcat) as the client: the same
// messages, the same record batches of 1,000 with 4 produce requests in flight, the same acks and
// flush policy, so that the broker's CPU per message on the two paths can be set side by side.

/** librdkafka settings that give workload 1's shape; the rest are librdkafka 2.0's defaults. */
export const KAFKA_PRODUCER_SETTINGS = [
  // acks=leader: acknowledged once written to the OS, as workload 1.
  "acks=1",
  // One record batch per 1,000 messages, as a send call of workload 1 becomes.
  "batch.num.messages=1000",
  "linger.ms=5",
  "max.in.flight.requests.per.connection=4",
  "compression.codec=none",
];

/** Workload 2's fetch size; librdkafka's long poll is 500 ms like the SDK's. */
export const KAFKA_CONSUMER_SETTINGS = [
  "fetch.max.bytes=52428800",
  "max.partition.fetch.bytes=1048576",
  "fetch.wait.max.ms=500",
];

function params(scale: number): WorkloadParams {
  return { ...produce.params(scale), stream: "bench_kafka" };
}

function needKafka(endpoint: Endpoint | undefined): string {
  if (!endpoint) throw new Error("the broker has no Kafka listener");
  return `${endpoint.host}:${endpoint.port}`;
}

function settings(list: readonly string[]): string[] {
  return list.flatMap((s) => ["-X", s]);
}

/** kcat -P reads one message per line: payloads of random bytes other than the newline. */
export function kcatInput(payloadBytes: number, perBlock: number, total: number): KcatInput {
  const line = Buffer.alloc(payloadBytes + 1);
  for (let i = 0; i < payloadBytes; i++) {
    const b = (Math.random() * 255) | 0;
    line[i] = b >= 0x0a ? b + 1 : b;
  }
  line[payloadBytes] = 0x0a;
  const lines = (n: number) => Buffer.concat(new Array<Buffer>(n).fill(line));
  return { block: lines(perBlock), repeat: Math.floor(total / perBlock), tail: lines(total % perBlock) };
}

/** K1. Workload 1 produced through the Kafka listener by kcat -P. */
export const kafkaProduce: Workload = {
  id: "kafka-produce",
  title: "K1. Kafka produce",
  method:
    "kcat -P (librdkafka) on the Kafka listener: 5,000,000 messages of 100 bytes from a pipe, " +
    "batch.num.messages=1000, linger.ms=5, 4 requests in flight, acks=1 (acks before fsync), no compression; " +
    "timed from kcat's start to its exit",
  durability: "interval",
  needsKafka: true,
  params,
  async run(driver, p, env) {
    const bootstrap = needKafka(env.kafka);
    // Created like workload 1's topic (same configs), so only the front-end differs.
    await driver.createStream(p.stream, 1);
    const total = totalMessages(p);
    const input = kcatInput(p.payloadBytes, p.batch, total);
    const args = ["-b", bootstrap, "-t", p.stream, "-p", "0", "-P", ...settings(KAFKA_PRODUCER_SETTINGS)];
    const span = await runKcat(args, input, null);
    // kcat exits 1 when a delivery failed; a warning on an exit of 0 is a failure too.
    if (/fail|error/i.test(span.stderr)) throw new Error(`kcat: ${span.stderr.split("\n")[0]}`);
    return {
      messages: total,
      payloadBytes: total * p.payloadBytes,
      seconds: span.seconds,
      clientCpuSeconds: span.cpuSeconds,
    };
  },
};

/** kcat -C's arguments for `count` messages of partition 0 from `offset`, printing their lengths. */
function consumeArgs(
  bootstrap: string,
  stream: string,
  offset: number | "beginning",
  count: number,
): string[] {
  return [
    "-b",
    bootstrap,
    "-t",
    stream,
    "-p",
    "0",
    "-C",
    "-o",
    String(offset),
    "-c",
    String(count),
    // Stop at the end of the partition rather than wait for messages that will not come.
    "-e",
    "-q",
    "-f",
    KCAT_LENGTH_FORMAT,
    ...settings(KAFKA_CONSUMER_SETTINGS),
  ];
}

/** One kcat -C over `count` messages from `offset`, every message counted and its size checked. */
async function consumeRange(
  bootstrap: string,
  p: WorkloadParams,
  offset: number | "beginning",
  count: number,
): Promise<KcatRun> {
  const counter = new LengthLineCounter(p.payloadBytes);
  const span = await runKcat(consumeArgs(bootstrap, p.stream, offset, count), null, (chunk) =>
    counter.push(chunk),
  );
  if (counter.messages !== count || counter.wrongSize > 0 || counter.partial) {
    throw new Error(`read ${counter.messages} of ${count} messages, ${counter.wrongSize} of the wrong size`);
  }
  return span;
}

/** K2. What K1 wrote, read from the first message through the Kafka listener by kcat -C. */
export const kafkaConsume: Workload = {
  id: "kafka-consume",
  title: "K2. Kafka consume",
  method:
    "kcat -C (librdkafka) on the Kafka listener reading the 5,000,000 messages of K1 from offset 0, " +
    "1 MiB per partition per fetch, printing only each payload's length; timed from kcat's start to its exit",
  durability: "interval",
  after: "kafka-produce",
  needsKafka: true,
  params,
  async run(_driver, p, env) {
    const expected = totalMessages(p);
    const span = await consumeRange(needKafka(env.kafka), p, "beginning", expected);
    return {
      messages: expected,
      payloadBytes: expected * p.payloadBytes,
      seconds: span.seconds,
      clientCpuSeconds: span.cpuSeconds,
    };
  },
};

/**
 * K2b. The same messages read by two kcat -C at once, each over one half of the partition: one
 * librdkafka consumer spends about a core of its own on this machine parsing and printing what it
 * reads, so one client bounds K2 before the listener does; two show what the listener serves.
 */
export const kafkaConsumeTwo: Workload = {
  id: "kafka-consume-2",
  title: "K2b. Kafka consume, two clients",
  method:
    "two kcat -C (librdkafka) at once on the Kafka listener, one reading the first half of K1's 5,000,000 " +
    "messages from offset 0, the other the second half from its first offset, 1 MiB per partition per " +
    "fetch, printing only each payload's length; timed from the first start to the last exit",
  durability: "interval",
  after: "kafka-produce",
  needsKafka: true,
  params,
  async run(_driver, p, env) {
    const bootstrap = needKafka(env.kafka);
    const expected = totalMessages(p);
    const half = Math.floor(expected / 2);
    const clock = startClockWithChildren();
    await Promise.all([
      consumeRange(bootstrap, p, "beginning", half),
      consumeRange(bootstrap, p, half, expected - half),
    ]);
    // The two spans overlap, so the client's CPU is counted once over both: this process and both
    // kcat processes, reaped by now.
    const span = clock();
    return {
      messages: expected,
      payloadBytes: expected * p.payloadBytes,
      seconds: span.seconds,
      clientCpuSeconds: span.cpuSeconds,
    };
  },
};
