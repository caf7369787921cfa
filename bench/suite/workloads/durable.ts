import { runProducers } from "./produce-run.js";
import { scaled, type Workload } from "./workload.js";

/** 4. Every message acknowledged only after an fsync covers it; 16 producers so group commit can help. */
export const durable: Workload = {
  id: "durable",
  title: "4. durable",
  method:
    "16 producers on 16 connections, each sending one 100-byte message and waiting for its fsync-backed ack before the next; 5,000 messages each",
  durability: "durable",
  params: (scale) => ({
    stream: "bench_durable",
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
