import { runProducers } from "./produce-run.js";
import { scaled, type Workload, type WorkloadParams } from "./workload.js";

/** Seconds the broker is left idle after the 10,000-partition run, its CPU counted. */
const IDLE_SECONDS = 10;

function params(stream: string, partitions: number, scale: number): WorkloadParams {
  return {
    stream,
    producers: 16,
    messagesPerProducer: scaled(100_000, scale, 1_000),
    payloadBytes: 100,
    batch: 1_000,
    inFlight: 4,
    rate: 0,
    warmupMessages: 0,
    partitions,
  };
}

const METHOD =
  "16 producers, 100-byte payloads with keys taken in turn, 100,000 messages each, 1,000 messages per send call, 4 calls in flight, acks before fsync";

/** 6a. The baseline of 6b: the same keyed producers, all into one partition. */
export const partitions1: Workload = {
  id: "partitions-1",
  title: "6a. keyed, 1 partition",
  method: `${METHOD}; 1 partition (stream)`,
  durability: "interval",
  params: (scale) => params("bench_keyed_1", 1, scale),
  run: (driver, p) => runProducers(driver, p, "interval"),
};

/**
 * 6b. Many partitions on one broker: the keys spread the messages over 10,000 partitions, so each
 * send call touches about a thousand of them. Then the broker is left idle with them all.
 */
export const partitions10k: Workload = {
  id: "partitions-10k",
  title: "6b. keyed, 10,000 partitions",
  method: `${METHOD}; 10,000 partitions (Redis: streams; NATS: subjects of one stream); the rate until every message was readable beside it (Conch: the partitions' high watermarks; the peers' acknowledged messages are readable at once), then ${IDLE_SECONDS} s idle`,
  durability: "interval",
  idleSeconds: IDLE_SECONDS,
  params: (scale) => params("bench_keyed_10k", 10_000, scale),
  run: (driver, p) => runProducers(driver, p, "interval", true),
};
