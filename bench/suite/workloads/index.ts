import { coldRead } from "./cold-read.js";
import { connections1k } from "./connections.js";
import { consume } from "./consume.js";
import { durable, durableWait } from "./durable.js";
import { hermit, hermitPipelined } from "./hermit.js";
import { kafkaConsume, kafkaConsumeTwo, kafkaProduce } from "./kafka.js";
import { latency } from "./latency.js";
import { partitions1, partitions10k } from "./partitions.js";
import { produce } from "./produce.js";
import type { Workload, WorkloadId } from "./workload.js";

/**
 * The workloads in the order they run (consume reads what produce wrote, on the same server; the
 * Kafka pair follows the native pair so that the two are measured minutes apart).
 */
export const WORKLOADS: readonly Workload[] = [
  produce,
  consume,
  kafkaProduce,
  kafkaConsume,
  kafkaConsumeTwo,
  latency,
  durable,
  durableWait,
  hermit,
  hermitPipelined,
  partitions1,
  partitions10k,
  connections1k,
  coldRead,
];

export function workloadById(id: WorkloadId): Workload {
  const found = WORKLOADS.find((w) => w.id === id);
  if (!found) throw new Error(`unknown workload ${id}`);
  return found;
}
