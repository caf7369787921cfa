import type { ClientDriver, WorkloadOutcome } from "../types.js";
import { runProducers } from "./produce-run.js";
import { scaled, type Workload, type WorkloadParams } from "./workload.js";

/**
 * 5. The workload behind HermitMQ's published figure: 10 producers x 100,000 messages of 28 bytes in
 * batches of 100, one partition, no fsync on the ack path. HermitMQ's producers are stop-and-wait,
 * so each producer here waits for a batch's acknowledgement before sending the next.
 *
 * The measured round runs first, on a fresh server and client, as always. A round of a second or
 * less is then mostly start-up for a JIT-compiled server and client, so the same workload runs
 * again on the same server and client for `warmUpSeconds`, unmeasured, and one more round gives a
 * second figure, the warm rate (each round on a stream of its own). Every system gets the same.
 */
export const hermit: Workload = {
  id: "hermit",
  title: "5. HermitMQ",
  method:
    "10 producers on 10 connections x 100,000 messages of 28 bytes, batches of 100, stop-and-wait per batch, one partition, acks before fsync; measured on a fresh server and client, then again (warm) after 2 s more of the same, unmeasured",
  durability: "interval",
  params: (scale) => ({
    stream: "bench_hermit",
    producers: 10,
    messagesPerProducer: scaled(100_000, scale, 100),
    payloadBytes: 28,
    batch: 100,
    inFlight: 1,
    rate: 0,
    warmupMessages: 0,
    warmUpSeconds: 2 * scale,
  }),
  run: coldThenWarm,
};

async function coldThenWarm(driver: ClientDriver, p: WorkloadParams): Promise<WorkloadOutcome> {
  const cold = await runProducers(driver, p, "interval");
  let sent = cold.messages;
  let round = 0;
  const until = performance.now() + (p.warmUpSeconds ?? 0) * 1000;
  while (performance.now() < until) {
    sent += (await runProducers(driver, { ...p, stream: `${p.stream}_${++round}` }, "interval")).messages;
  }
  const warm = await runProducers(driver, { ...p, stream: `${p.stream}_${++round}` }, "interval");
  return { ...cold, warmMsgsPerSec: warm.messages / warm.seconds, messagesSent: sent + warm.messages };
}

/** Batches each producer of workload 5b keeps unacknowledged. */
const PIPELINED_IN_FLIGHT = 4;

/**
 * 5b. The same messages and batches with the producers pipelining, as Conch's SDK does by
 * default: each keeps up to 4 batches of 100 unacknowledged, every batch still its own request.
 */
export const hermitPipelined: Workload = {
  id: "hermit-pipelined",
  title: "5b. HermitMQ, pipelined",
  method: `10 producers on 10 connections x 100,000 messages of 28 bytes, batches of 100, up to ${PIPELINED_IN_FLIGHT} batches in flight per producer, one partition, acks before fsync`,
  durability: "interval",
  params: (scale) => ({
    ...hermit.params(scale),
    stream: "bench_hermit_pipelined",
    inFlight: PIPELINED_IN_FLIGHT,
    warmUpSeconds: 0,
  }),
  run: (driver, p) => runProducers(driver, p, "interval"),
};
