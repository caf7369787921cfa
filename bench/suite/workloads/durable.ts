import { runProducers } from "./produce-run.js";
import { scaled, type Workload } from "./workload.js";

/** Set by `--durable-in-flight` (bench/run.ts) for the worker processes. */
export const DURABLE_IN_FLIGHT_ENV = "CONCH_BENCH_DURABLE_IN_FLIGHT";

/** Send calls each producer keeps unacknowledged: 1 (stop-and-wait) unless the option says more. */
function inFlight(): number {
  const n = Number(process.env[DURABLE_IN_FLIGHT_ENV] ?? "1");
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** 4. Every message acknowledged only after an fsync covers it; 16 producers so group commit can help. */
export const durable: Workload = {
  id: "durable",
  title: "4. durable",
  get method() {
    const n = inFlight();
    return n === 1
      ? "16 producers on 16 connections, each sending one 100-byte message and waiting for its fsync-backed ack before the next; 5,000 messages each"
      : `16 producers on 16 connections, each sending one 100-byte message per call with up to ${n} calls awaiting their fsync-backed acks; 5,000 messages each`;
  },
  durability: "durable",
  params: (scale) => ({
    stream: "bench_durable",
    producers: 16,
    messagesPerProducer: scaled(5_000, scale, 50),
    payloadBytes: 100,
    batch: 1,
    inFlight: inFlight(),
    rate: 0,
    warmupMessages: 0,
  }),
  run: (driver, p) => runProducers(driver, p, "durable"),
};
