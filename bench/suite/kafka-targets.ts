import { thousands } from "./format-number.js";
import type { Summary } from "./results.js";
import type { WorkloadId } from "./workloads/workload.js";

// What the Kafka listener is held to on this machine: its rates, and the broker's CPU per message
// on the Kafka path against the native path measured in the same run.

export const KAFKA_PRODUCE_TARGET = 1_000_000;
export const KAFKA_CONSUME_TARGET = 1_500_000;
/** The most broker CPU per message the Kafka path may cost, as a multiple of the native path's. */
export const KAFKA_CPU_RATIO_TARGET = 1.5;

/** Each Kafka workload with the native workload of the same shape. */
export const NATIVE_TWIN: Partial<Record<WorkloadId, WorkloadId>> = {
  "kafka-produce": "produce",
  "kafka-consume": "consume",
  "kafka-consume-2": "consume",
};

export interface KafkaTarget {
  /** What is measured, in words. */
  what: string;
  /** The measured value; null when a run it needs is missing. */
  value: number | null;
  unit: "msg/s" | "ratio";
  /** The target, in words. */
  target: string;
  met: boolean | null;
}

/** Conch's broker CPU per message on a Kafka workload over its native twin's; undefined when unknown. */
export function kafkaCpuRatio(summaries: readonly Summary[], workload: WorkloadId): number | undefined {
  const twin = NATIVE_TWIN[workload];
  if (!twin) return undefined;
  const find = (id: WorkloadId) =>
    summaries.find((s) => s.system === "conch" && s.workload === id && s.status === "ok");
  const kafka = find(workload)?.brokerCpuPerMillion;
  const native = find(twin)?.brokerCpuPerMillion;
  return kafka !== undefined && native ? kafka / native : undefined;
}

/** The targets for the Kafka workloads among `workloads` (none when neither ran). */
export function kafkaTargets(summaries: readonly Summary[], workloads: readonly WorkloadId[]): KafkaTarget[] {
  const out: KafkaTarget[] = [];
  const rates: Array<[WorkloadId, number, string]> = [
    ["kafka-produce", KAFKA_PRODUCE_TARGET, "produced"],
    ["kafka-consume", KAFKA_CONSUME_TARGET, "consumed"],
    ["kafka-consume-2", KAFKA_CONSUME_TARGET, "consumed by two clients"],
  ];
  for (const [id, target, verb] of rates) {
    if (!workloads.includes(id)) continue;
    const s = summaries.find((x) => x.system === "conch" && x.workload === id && x.status === "ok");
    const rate = s?.msgsPerSec ?? null;
    out.push({
      what: `msg/s ${verb} through the Kafka listener (${id})`,
      value: rate,
      unit: "msg/s",
      target: `>= ${thousands(target)}`,
      met: rate === null ? null : rate >= target,
    });
    const ratio = kafkaCpuRatio(summaries, id) ?? null;
    out.push({
      what: `broker CPU per message, ${id} / ${NATIVE_TWIN[id]}`,
      value: ratio,
      unit: "ratio",
      target: `<= ${KAFKA_CPU_RATIO_TARGET}x`,
      met: ratio === null ? null : ratio <= KAFKA_CPU_RATIO_TARGET,
    });
  }
  return out;
}

/** The targets as lines for the terminal and the results file; empty when there are none. */
export function renderKafkaTargets(targets: readonly KafkaTarget[]): string {
  if (targets.length === 0) return "";
  const lines = targets.map((t) => {
    const value =
      t.value === null ? "not measured" : t.unit === "msg/s" ? thousands(t.value) : `${t.value.toFixed(2)}x`;
    const verdict = t.met === null ? "?" : t.met ? "met" : "NOT met";
    return `- ${t.what}: ${value} (target ${t.target}: ${verdict})`;
  });
  return ["Kafka listener targets (Conch):", ...lines].join("\n");
}
