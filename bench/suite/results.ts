import type { SystemId } from "./clients.js";
import type { LatencySummary } from "./types.js";
import type { WorkloadId } from "./workloads/workload.js";

/** One workload run against one system. */
export interface Measurement {
  system: SystemId;
  workload: WorkloadId;
  run: number;
  status: "ok" | "skipped" | "failed";
  reason?: string;
  messages?: number;
  payloadBytes?: number;
  seconds?: number;
  msgsPerSec?: number;
  /** Payload bytes only (what the application handed over), in MB/s (10^6 bytes). */
  payloadMBps?: number;
  clientCpuSeconds?: number;
  /** Broker process CPU (user + system) between the worker's start and its end; null if unreadable. */
  brokerCpuSeconds?: number | null;
  /**
   * Share of the machine's CPU capacity (all cores) used by processes other than the broker and the
   * benchmark client while this measurement ran: the machine is shared, and this says how much.
   */
  otherCpuShare?: number | null;
  /** Times the harness's idle timer fired 50 ms or more late during the run (stall-watch.ts). */
  machineStalls?: number;
  /** The latest it fired, in ms. */
  machineStallLongestMs?: number;
  latencyUs?: LatencySummary;
  transferUs?: LatencySummary;
  /** Workload 5: the rate of a round after the server and client warmed up (WorkloadOutcome). */
  warmMsgsPerSec?: number;
  /** Workload 6b: the rate until every message was readable (WorkloadOutcome). */
  readableMsgsPerSec?: number;
  /** Workload 7: the measured producer's rate alone, just before the measured round. */
  soloMsgsPerSec?: number;
  /** Workload 8: the paced producer's latency alone, before the measured round. */
  soloLatencyUs?: LatencySummary;
  /**
   * Workload 3: the p99 of a bare round trip between two Node processes at the workload's pace,
   * measured right before this run's server started (the machine drifts within a suite run).
   */
  roundTripP99Us?: number;
  /** Every message sent while the broker's CPU was counted, when more than `messages`. */
  messagesSent?: number;
  /** Workloads with an idle span: the broker's CPU over it, as a share of one core. */
  idleCpuShare?: number;
  /**
   * The broker's GC pauses (wall time) over its CPU time across the workload, for brokers that
   * report them; on a loaded machine a pause also counts the time the broker waited for a core.
   */
  brokerGcShare?: number;
  /** The collections behind brokerGcShare. */
  brokerGcCount?: number;
  /** Workloads with an idle span: the broker's resident memory at its end. */
  brokerRssBytes?: number;
}

/** The medians over the runs of one (system, workload) pair. */
export interface Summary {
  system: SystemId;
  workload: WorkloadId;
  status: "ok" | "skipped" | "failed";
  reason?: string;
  runsOk: number;
  runs: number;
  msgsPerSec?: number;
  payloadMBps?: number;
  brokerCpuPerMillion?: number;
  clientCpuPerMillion?: number;
  /** Median share of the machine other processes used during the runs. */
  otherCpuShare?: number;
  latencyUs?: LatencySummary;
  transferUs?: LatencySummary;
  warmMsgsPerSec?: number;
  readableMsgsPerSec?: number;
  /** Workload 7: the median rate alone, and the median over the runs of each run's rate over it. */
  soloMsgsPerSec?: number;
  soloShare?: number;
  /** Workload 8: the median latency alone, and the median over the runs of each run's p99 over it. */
  soloLatencyUs?: LatencySummary;
  p99OverSolo?: number;
  /** Workload 3: the median of the bare round trips' p99 measured before the runs. */
  roundTripP99Us?: number;
  /** Workload 3: the median over the runs of each run's p99 divided by the round trip's before it. */
  p99OverRoundTrip?: number;
  idleCpuShare?: number;
  brokerRssBytes?: number;
  brokerGcShare?: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(measurements: readonly Measurement[]): Summary[] {
  const groups = new Map<string, Measurement[]>();
  for (const m of measurements) {
    const key = `${m.system}/${m.workload}`;
    const list = groups.get(key) ?? [];
    list.push(m);
    groups.set(key, list);
  }
  const out: Summary[] = [];
  for (const list of groups.values()) {
    const first = list[0]!;
    const ok = list.filter((m) => m.status === "ok");
    const base = { system: first.system, workload: first.workload, runsOk: ok.length, runs: list.length };
    if (ok.length === 0) {
      const failed = list.find((m) => m.status === "failed");
      const shown = failed ?? first;
      out.push({ ...base, status: shown.status, ...(shown.reason ? { reason: shown.reason } : {}) });
      continue;
    }
    /** The median of `pick` over the runs that have it (a number), else undefined. */
    const medianOf = (pick: (m: Measurement) => number | null | undefined): number | undefined => {
      const values = ok.flatMap((m) => {
        const v = pick(m);
        return typeof v === "number" ? [v] : [];
      });
      return values.length > 0 ? median(values) : undefined;
    };
    const perMillion = (
      cpu: (m: Measurement) => number | null | undefined,
      count: (m: Measurement) => number | undefined = (m) => m.messages,
    ) => {
      const values = ok.flatMap((m) => {
        const c = cpu(m);
        const n = count(m);
        return typeof c === "number" && n ? [(c / n) * 1e6] : [];
      });
      return values.length > 0 ? median(values) : undefined;
    };
    const summary: Summary = {
      ...base,
      status: "ok",
      msgsPerSec: median(ok.map((m) => m.msgsPerSec ?? 0)),
      payloadMBps: median(ok.map((m) => m.payloadMBps ?? 0)),
    };
    // The broker's CPU is counted over the whole worker: per every message sent meanwhile.
    const broker = perMillion(
      (m) => m.brokerCpuSeconds,
      (m) => m.messagesSent ?? m.messages,
    );
    const client = perMillion((m) => m.clientCpuSeconds);
    if (broker !== undefined) summary.brokerCpuPerMillion = broker;
    if (client !== undefined) summary.clientCpuPerMillion = client;
    const others = medianOf((m) => m.otherCpuShare);
    if (others !== undefined) summary.otherCpuShare = others;
    const latency = medianLatency(ok.flatMap((m) => (m.latencyUs ? [m.latencyUs] : [])));
    if (latency !== undefined) summary.latencyUs = latency;
    const transfer = medianLatency(ok.flatMap((m) => (m.transferUs ? [m.transferUs] : [])));
    if (transfer !== undefined) summary.transferUs = transfer;
    const warm = medianOf((m) => m.warmMsgsPerSec);
    if (warm !== undefined) summary.warmMsgsPerSec = warm;
    const readable = medianOf((m) => m.readableMsgsPerSec);
    if (readable !== undefined) summary.readableMsgsPerSec = readable;
    const solo = ok.filter((m) => m.soloMsgsPerSec !== undefined && m.msgsPerSec !== undefined);
    if (solo.length > 0) {
      summary.soloMsgsPerSec = median(solo.map((m) => m.soloMsgsPerSec!));
      summary.soloShare = median(solo.map((m) => m.msgsPerSec! / m.soloMsgsPerSec!));
    }
    const idle = medianOf((m) => m.idleCpuShare);
    if (idle !== undefined) summary.idleCpuShare = idle;
    const gc = medianOf((m) => m.brokerGcShare);
    if (gc !== undefined) summary.brokerGcShare = gc;
    const rss = medianOf((m) => m.brokerRssBytes);
    if (rss !== undefined) summary.brokerRssBytes = rss;
    const alone = ok.filter((m) => m.soloLatencyUs !== undefined && m.latencyUs !== undefined);
    if (alone.length > 0) {
      summary.soloLatencyUs = medianLatency(alone.map((m) => m.soloLatencyUs!))!;
      summary.p99OverSolo = median(alone.map((m) => m.latencyUs!.p99 / m.soloLatencyUs!.p99));
    }
    const paired = ok.filter((m) => m.roundTripP99Us !== undefined && m.latencyUs !== undefined);
    if (paired.length > 0) {
      summary.roundTripP99Us = median(paired.map((m) => m.roundTripP99Us!));
      summary.p99OverRoundTrip = median(paired.map((m) => m.latencyUs!.p99 / m.roundTripP99Us!));
    }
    if (ok.length < list.length) {
      const failed = list.find((m) => m.status !== "ok");
      if (failed?.reason) summary.reason = `${list.length - ok.length} run(s) failed: ${failed.reason}`;
    }
    out.push(summary);
  }
  return out;
}

/** Medians per column, so one summary's p50 and p99 may come from different runs. */
function medianLatency(lat: readonly LatencySummary[]): LatencySummary | undefined {
  if (lat.length === 0) return undefined;
  return {
    count: median(lat.map((l) => l.count)),
    p50: median(lat.map((l) => l.p50)),
    p99: median(lat.map((l) => l.p99)),
    p999: median(lat.map((l) => l.p999)),
    max: median(lat.map((l) => l.max)),
  };
}
