import { startClock } from "../clock.js";
import type { ClientDriver, WorkloadOutcome } from "../types.js";
import { payloadBatch, sendAll } from "./send-loop.js";
import { totalMessages, type Workload, type WorkloadParams } from "./workload.js";

/** Runs `producers` producers side by side, each on its own connection, until all are acknowledged. */
export async function runProducers(
  driver: ClientDriver,
  p: WorkloadParams,
  durability: Workload["durability"],
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
  return {
    messages,
    payloadBytes: messages * p.payloadBytes,
    seconds: span.seconds,
    clientCpuSeconds: span.cpuSeconds,
  };
}
