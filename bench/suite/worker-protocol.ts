import type { SystemId } from "./clients.js";
import type { Endpoint, WorkloadOutcome } from "./types.js";
import type { WorkloadId } from "./workloads/workload.js";

/** What the parent asks a worker process to run (passed as one JSON argument). */
export interface WorkerRequest {
  system: SystemId;
  workload: WorkloadId;
  endpoint: Endpoint;
  /** The broker's Kafka listener, when it has one. */
  kafka?: Endpoint;
  scale: number;
}

export type WorkerResult = { ok: true; outcome: WorkloadOutcome } | { ok: false; error: string };

/** The worker prints its result on one stdout line starting with this. */
export const RESULT_PREFIX = "RESULT ";

/** What workload 7's worker asks its crowd process to do (slow-clients.ts; one JSON argument). */
export interface SlowClientsRequest {
  system: SystemId;
  endpoint: Endpoint;
  stream: string;
  connections: number;
  /** Each connection sends one message this often. */
  intervalMs: number;
  payloadBytes: number;
}

/** What workload 8's worker asks its paced producer's process to do (paced-client.ts; one JSON argument). */
export interface PacedClientRequest {
  system: SystemId;
  endpoint: Endpoint;
  stream: string;
  /** Messages a second, sent as what fell due every millisecond. */
  rate: number;
  payloadBytes: number;
}
