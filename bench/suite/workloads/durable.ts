import { runProducers } from "./produce-run.js";
import { scaled, type Workload } from "./workload.js";

/** Set by `--durable-in-flight` (bench/run.ts) for the worker processes. */
export const DURABLE_IN_FLIGHT_ENV = "CONCH_BENCH_DURABLE_IN_FLIGHT";
/** One-message calls each pipelined durable producer keeps awaiting their acks, by default. */
export const DEFAULT_DURABLE_IN_FLIGHT = 256;

/** Calls each producer of workload 4 keeps unacknowledged: the option's value, else the default. */
function inFlight(): number {
  const n = Number(process.env[DURABLE_IN_FLIGHT_ENV] ?? DEFAULT_DURABLE_IN_FLIGHT);
  return Number.isInteger(n) && n >= 1 ? n : DEFAULT_DURABLE_IN_FLIGHT;
}

/**
 * 4. Every message acknowledged only after an fsync covers it; 16 producers, each publishing one
 * message per call and keeping many calls in flight (how an application publishes durably at
 * speed: it does not wait for one message's fsync before sending the next), so group commit and
 * the client's batching can help.
 */
export const durable: Workload = {
  id: "durable",
  title: "4. durable",
  get method() {
    return `16 producers on 16 connections, each sending one 100-byte message per call with up to ${inFlight()} calls awaiting their fsync-backed acks; 50,000 messages each`;
  },
  durability: "durable",
  params: (scale) => ({
    stream: "bench_durable",
    producers: 16,
    messagesPerProducer: scaled(50_000, scale, 50),
    payloadBytes: 100,
    batch: 1,
    inFlight: inFlight(),
    rate: 0,
    warmupMessages: 0,
  }),
  run: (driver, p) => runProducers(driver, p, "durable"),
};

/**
 * 4b. The same with stop-and-wait producers: each waits for its message's fsync-backed ack before
 * sending the next, so at most 16 messages can share an fsync. Bounded by fsync latency.
 */
export const durableWait: Workload = {
  id: "durable-wait",
  title: "4b. durable, stop-and-wait",
  method:
    "16 producers on 16 connections, each sending one 100-byte message and waiting for its fsync-backed ack before the next; 5,000 messages each",
  durability: "durable",
  params: (scale) => ({
    stream: "bench_durable_wait",
    producers: 16,
    messagesPerProducer: scaled(5_000, scale, 50),
    payloadBytes: 100,
    batch: 1,
    inFlight: 1,
    rate: 0,
    warmupMessages: 0,
  }),
  run: (driver, p) => runProducers(driver, p, "durable"),
};
