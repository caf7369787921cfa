import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { startClock } from "../clock.js";
import { dropPageCache } from "../page-cache.js";
import { startSideProcess } from "../side-process.js";
import type { LatencySummary } from "../types.js";
import type { PacedClientRequest } from "../worker-protocol.js";
import { runProducers } from "./produce-run.js";
import { scaled, totalMessages, type WorkerEnv, type Workload, type WorkloadParams } from "./workload.js";

/** The paced producer's rate, message size and solo span. */
const PACED_RATE = 10_000;
const PACED_BYTES = 100;
const SOLO_SECONDS = 10;
/** How long the paced producer's process may take to start and connect. */
const PACED_READY_MS = 30_000;

const PACED_CLIENT = fileURLToPath(new URL("../paced-client.js", import.meta.url));

/**
 * 8. Old data read from disk while a producer runs: 10 GB of 1 KiB messages are written, the page
 * cache is dropped, and a producer at a fixed 10,000 msg/s runs alone for 10 s (its acknowledgement
 * latency is the baseline); the page cache is dropped again and one consumer reads all 10 GB from
 * the start while the same producer runs on. The figure is the consumer's read rate; the latency
 * columns are the producer's meanwhile, and the note gives its latency alone. The paced producer
 * runs in a process of its own (paced-client.ts), both times: in the worker's process it shared an
 * event loop with the consumer, whose own work then counted as the broker's delay.
 */
export const coldRead: Workload = {
  id: "cold-read",
  title: "8. cold read",
  method: `10 GB of 1 KiB messages written by 4 producers (100 per send call, 4 in flight), the page cache dropped; a producer (a process of its own) at ${PACED_RATE.toLocaleString("en-US")} msg/s of ${PACED_BYTES} bytes alone for ${SOLO_SECONDS} s, then again while 1 consumer (another process) reads the 10 GB from the start (page cache dropped again); latency from each message's scheduled send to its acknowledgement, acks before fsync`,
  durability: "interval",
  notFor: {
    redis: "Redis keeps every stream in memory: there is no data on disk to read cold",
  },
  params: (scale): WorkloadParams => ({
    stream: "bench_cold",
    producers: 4,
    messagesPerProducer: scaled(2_441_406, scale, 2_500), // 4 x 2,441,406 x 1 KiB = 10 GB
    payloadBytes: 1024,
    batch: 100,
    inFlight: 4,
    rate: PACED_RATE,
    warmupMessages: 0,
    soloSeconds: Math.max(1, SOLO_SECONDS * Math.min(1, scale)),
  }),
  async run(driver, p, env) {
    const fill = await runProducers(driver, p, "interval");
    dropCacheOrFail();
    await driver.createStream(`${p.stream}_solo`);
    const soloRun = await startPacedClient(env, `${p.stream}_solo`);
    await sleep((p.soloSeconds ?? SOLO_SECONDS) * 1000);
    const solo = await soloRun.stop();

    await driver.createStream(`${p.stream}_beside`);
    dropCacheOrFail();
    const consumer = await driver.openConsumer(p.stream);
    const expected = totalMessages(p);
    let messages = 0;
    let payloadBytes = 0;
    const paced = await startPacedClient(env, `${p.stream}_beside`);
    const stop = startClock();
    try {
      await consumer.run((_bytes, start, end) => {
        messages++;
        payloadBytes += end - start;
        return messages < expected;
      }, new AbortController().signal);
    } finally {
      await consumer.close();
    }
    const span = stop();
    const beside = await paced.stop();
    if (messages !== expected) throw new Error(`read ${messages} of ${expected} messages`);
    return {
      messages,
      payloadBytes,
      seconds: span.seconds,
      clientCpuSeconds: span.cpuSeconds,
      latencyUs: beside.latencyUs,
      soloLatencyUs: solo.latencyUs,
      messagesSent: fill.messages + solo.sent + beside.sent + messages,
    };
  },
};

/** Starts the paced producer's process on `stream`; resolves once it sends. */
function startPacedClient(env: WorkerEnv, stream: string) {
  const request: PacedClientRequest = {
    system: env.system,
    endpoint: env.endpoint,
    stream,
    rate: PACED_RATE,
    payloadBytes: PACED_BYTES,
  };
  return startSideProcess<{ sent: number; latencyUs: LatencySummary }>(
    PACED_CLIENT,
    request,
    "the paced producer",
    PACED_READY_MS,
  );
}

/** Drops the page cache, so that what is read next comes from the disk; fails the workload if it cannot. */
function dropCacheOrFail(): void {
  if (!dropPageCache()) throw new Error("cannot drop the page cache (needs root)");
}
