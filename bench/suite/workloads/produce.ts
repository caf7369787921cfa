import { runProducers } from "./produce-run.js";
import { scaled, type Workload } from "./workload.js";

/** 1. One producer publishing 100-byte messages as fast as it is acknowledged, pipelined. */
export const produce: Workload = {
  id: "produce",
  title: "1. produce",
  method:
    "1 producer, 100-byte payloads, 5,000,000 messages, 1,000 messages per send call, 4 calls in flight, acks before fsync",
  durability: "interval",
  params: (scale) => ({
    stream: "bench_produce",
    producers: 1,
    messagesPerProducer: scaled(5_000_000, scale, 1_000),
    payloadBytes: 100,
    batch: 1_000,
    inFlight: 4,
    rate: 0,
    warmupMessages: 0,
  }),
  run: (driver, p) => runProducers(driver, p, "interval"),
};
