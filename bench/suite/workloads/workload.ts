import type { ClientDriver, Durability, Endpoint, WorkloadOutcome } from "../types.js";

export type WorkloadId =
  | "produce"
  | "consume"
  | "kafka-produce"
  | "kafka-consume"
  | "latency"
  | "durable"
  | "durable-wait"
  | "hermit"
  | "hermit-pipelined"
  | "partitions-1"
  | "partitions-10k";

/** The numbers that define a workload; the same for every system. */
export interface WorkloadParams {
  /** Stream (topic) the workload writes or reads. */
  stream: string;
  producers: number;
  messagesPerProducer: number;
  payloadBytes: number;
  /** Messages per sendBatch call. */
  batch: number;
  /** sendBatch calls a producer keeps in flight before it waits for the oldest acknowledgement. */
  inFlight: number;
  /** Fixed publishing rate for the latency workload (messages per second); 0 = as fast as acknowledged. */
  rate: number;
  /** Messages at the start of the latency workload left out of the histogram. */
  warmupMessages: number;
  /**
   * Workload 5: after the measured round, seconds of the same workload run again, unmeasured, before
   * one more round measured as the warm figure; 0 for none.
   */
  warmUpSeconds?: number;
  /** Partitions (streams) the messages are spread over by key; 1 when absent. */
  partitions?: number;
}

export interface Workload {
  readonly id: WorkloadId;
  readonly title: string;
  /** One line on how it is run, for the report. */
  readonly method: string;
  readonly durability: Durability;
  /** Another workload whose data this one reads, run just before it on the same server. */
  readonly after?: WorkloadId;
  /**
   * Seconds the broker is left idle after the workload while its CPU is counted, with its resident
   * memory read at the end (the idle cost of what the workload created); absent for none.
   */
  readonly idleSeconds?: number;
  /** Runs through the broker's Kafka listener: systems without one get "not run". */
  readonly needsKafka?: boolean;
  params(scale: number): WorkloadParams;
  run(driver: ClientDriver, params: WorkloadParams, endpoints?: WorkloadEndpoints): Promise<WorkloadOutcome>;
}

/** The broker's listeners besides the one the driver connects to. */
export interface WorkloadEndpoints {
  kafka?: Endpoint;
}

/** Counts shrink with --scale for quick runs, but never to nothing. */
export function scaled(count: number, scale: number, minimum = 1): number {
  return Math.max(minimum, Math.round(count * scale));
}

export function totalMessages(p: WorkloadParams): number {
  return p.producers * p.messagesPerProducer;
}
