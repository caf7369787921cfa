import { startClock } from "../clock.js";
import { sleep } from "../deadline.js";
import type { ClientDriver, WorkloadOutcome } from "../types.js";
import { payloadBatch, sendAll } from "./send-loop.js";
import { totalMessages, type Workload, type WorkloadParams } from "./workload.js";

/** How often, and how long at most, a run waits for its messages to be readable. */
const READABLE_POLL_MS = 50;
const READABLE_WAIT_MS = 120_000;

/**
 * Runs `producers` producers side by side, each on its own connection, until all are acknowledged.
 * With `untilReadable` (and a driver that can tell), the run then waits until every message is
 * readable too, and reports that rate beside the acknowledged one; the broker's CPU is counted
 * over the wait as well.
 */
export async function runProducers(
  driver: ClientDriver,
  p: WorkloadParams,
  durability: Workload["durability"],
  untilReadable = false,
): Promise<WorkloadOutcome> {
  await driver.createStream(p.stream, p.partitions);
  const producers = await Promise.all(
    Array.from({ length: p.producers }, () => driver.openProducer(p.stream, durability, p.partitions)),
  );
  const batch = payloadBatch(p.payloadBytes, p.batch);
  const stop = startClock();
  try {
    await Promise.all(
      producers.map((producer) => sendAll(producer, p.messagesPerProducer, batch, p.inFlight)),
    );
  } finally {
    await Promise.allSettled(producers.map((producer) => producer.close()));
  }
  const span = stop();
  const messages = totalMessages(p);
  const readableSeconds =
    untilReadable && driver.readable !== undefined
      ? await untilAllReadable(driver.readable.bind(driver), p.stream, messages, stop)
      : undefined;
  return {
    messages,
    payloadBytes: messages * p.payloadBytes,
    seconds: span.seconds,
    clientCpuSeconds: span.cpuSeconds,
    ...(readableSeconds !== undefined ? { readableMsgsPerSec: messages / readableSeconds } : {}),
  };
}

/** Seconds on `clock` once `readable` counts `messages`; fails past READABLE_WAIT_MS. */
async function untilAllReadable(
  readable: (stream: string) => Promise<number>,
  stream: string,
  messages: number,
  clock: () => { seconds: number },
): Promise<number> {
  const deadline = performance.now() + READABLE_WAIT_MS;
  for (;;) {
    if ((await readable(stream)) >= messages) return clock().seconds;
    if (performance.now() > deadline) {
      throw new Error(`${stream}: not every acknowledged message was readable within ${READABLE_WAIT_MS} ms`);
    }
    await sleep(READABLE_POLL_MS);
  }
}
