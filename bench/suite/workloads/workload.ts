import type { SystemId } from "../clients.js";
import type { ClientDriver, Durability, Endpoint, WorkloadOutcome } from "../types.js";

export type WorkloadId =
  | "produce"
  | "consume"
  | "kafka-produce"
  | "kafka-consume"
  | "kafka-consume-2"
  | "latency"
  | "durable"
  | "durable-wait"
  | "hermit"
  | "hermit-pipelined"
  | "partitions-1"
  | "partitions-10k"
  | "connections-1k"
  | "cold-read";

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
  /** Workload 8: seconds the paced producer runs alone. */
  soloSeconds?: number;
  /** Workload 7: the slow connections beside the measured producer. */
  connections?: number;
}

/** Which system and broker the worker runs against, for a workload that starts processes of its own. */
export interface WorkerEnv {
  system: SystemId;
  endpoint: Endpoint;
  /** The broker's Kafka listener, when it has one. */
  kafka?: Endpoint;
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
  /** Systems that cannot do the workload at all, with the reason printed in their rows. */
  readonly notFor?: Partial<Record<SystemId, string>>;
  /** Runs through the broker's Kafka listener: systems without one get "not run". */
  readonly needsKafka?: boolean;
  params(scale: number): WorkloadParams;
  run(driver: ClientDriver, params: WorkloadParams, env: WorkerEnv): Promise<WorkloadOutcome>;
}

/** Counts shrink with --scale for quick runs, but never to nothing. */
export function scaled(count: number, scale: number, minimum = 1): number {
  return Math.max(minimum, Math.round(count * scale));
}

export function totalMessages(p: WorkloadParams): number {
  return p.producers * p.messagesPerProducer;
}
