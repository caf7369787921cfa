import type { SystemId } from "../../bench/suite/clients.js";
import type { Measurement } from "../../bench/suite/results.js";
import type { WorkloadId } from "../../bench/suite/workloads/workload.js";

/** A successful run of 1,000,000 messages of 100 bytes at `msgsPerSec`, for the summary and table tests. */
export function ok(
  system: SystemId,
  workload: WorkloadId,
  run: number,
  msgsPerSec: number,
  extra: Partial<Measurement> = {},
) {
  const messages = 1_000_000;
  return {
    system,
    workload,
    run,
    status: "ok",
    messages,
    payloadBytes: messages * 100,
    seconds: messages / msgsPerSec,
    msgsPerSec,
    payloadMBps: (msgsPerSec * 100) / 1e6,
    clientCpuSeconds: 2,
    brokerCpuSeconds: 4,
    ...extra,
  } satisfies Measurement;
}
