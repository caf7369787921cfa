import type { DiskCeiling } from "./ceilings.js";
import type { SystemId } from "./clients.js";
import type { ExchangeCeiling, LoopbackCeiling, RoundTripCeiling } from "./exchange-ceiling.js";
import { fixed, thousands, usToMs } from "./format-number.js";
import { kafkaCpuRatio, NATIVE_TWIN } from "./kafka-targets.js";
import type { Summary } from "./results.js";
import type { WorkloadId } from "./workloads/workload.js";

export interface TableInput {
  summaries: readonly Summary[];
  systemNames: Record<SystemId, string>;
  workloadTitles: Record<WorkloadId, string>;
  workloads: readonly WorkloadId[];
  systems: readonly SystemId[];
  disk?: DiskCeiling | undefined;
  loopback?: LoopbackCeiling | undefined;
  roundTrip?: RoundTripCeiling | undefined;
  exchange?: ExchangeCeiling | undefined;
  durableExchange?: ExchangeCeiling | undefined;
  /** The latency workload's target rate; a system that fell short is marked as such. */
  latencyRate: number;
}

const HEADER = [
  "workload",
  "system",
  "msgs/s",
  "MB/s",
  "p50 ms",
  "p99 ms",
  "p99.9 ms",
  "broker CPU s/M msgs",
  "client CPU s/M msgs",
  "vs Conch",
  "of ceiling",
  "note",
];

/**
 * The results as a Markdown table (readable in a terminal, pasteable into docs). "vs Conch" is the
 * system's throughput divided by Conch's (above 1 = faster than Conch); for the latency workload it
 * is the system's p99 divided by Conch's (above 1 = slower than Conch). "of ceiling" relates payload
 * MB/s to the disk's sequential write rate (writes) or to loopback TCP (reads); for the durable
 * workload it is msgs/s divided by the rate of one writer doing 4 KiB write + fdatasync in a loop;
 * for the latency workload the p99 as a multiple of a plain round trip's p99 at the same pace; for
 * workloads 5 and 4b msgs/s as a share of the same stop-and-wait exchange between two bare Node
 * processes (4b: its one-message requests, no disk), after 4b's multiple of the fsync rate.
 */
export function renderTable(input: TableInput): string {
  const rows: string[][] = [];
  for (const workload of input.workloads) {
    const conch = input.summaries.find((s) => s.system === "conch" && s.workload === workload);
    for (const system of input.systems) {
      const s = input.summaries.find((x) => x.system === system && x.workload === workload);
      const name = input.systemNames[system];
      const title = input.workloadTitles[workload];
      if (s?.status !== "ok") {
        const what = s?.status === "failed" ? "failed" : "not run";
        rows.push([
          title,
          name,
          "–",
          "–",
          "–",
          "–",
          "–",
          "–",
          "–",
          "–",
          "–",
          `${what}: ${s?.reason ?? "not measured"}`,
        ]);
        continue;
      }
      const lat = s.latencyUs;
      rows.push([
        title,
        name,
        thousands(s.msgsPerSec ?? 0),
        fixed(s.payloadMBps, 1),
        lat ? usToMs(lat.p50) : "–",
        lat ? usToMs(lat.p99) : "–",
        lat ? usToMs(lat.p999) : "–",
        fixed(s.brokerCpuPerMillion, 2),
        fixed(s.clientCpuPerMillion, 2),
        ratio(s, conch, workload),
        ceiling(s, workload, input),
        note(s, workload === "latency" ? input.latencyRate : 0) +
          transferNote(s) +
          warmNote(s) +
          readableNote(s) +
          soloNote(s) +
          soloLatencyNote(s) +
          idleNote(s) +
          gcNote(s) +
          kafkaNote(input.summaries, s),
      ]);
    }
  }
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(HEADER), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

function ratio(s: Summary, conch: Summary | undefined, workload: WorkloadId): string {
  if (conch?.status !== "ok") return "–";
  if (workload === "latency") {
    const mine = s.latencyUs?.p99;
    const theirs = conch.latencyUs?.p99;
    return mine && theirs ? `p99 ${(mine / theirs).toFixed(2)}x` : "–";
  }
  const mine = s.msgsPerSec;
  const theirs = conch.msgsPerSec;
  return mine && theirs ? `${(mine / theirs).toFixed(2)}x` : "–";
}

function ceiling(s: Summary, workload: WorkloadId, input: TableInput): string {
  const mbps = s.payloadMBps ?? 0;
  switch (workload) {
    case "produce":
    case "kafka-produce":
    case "hermit-pipelined":
      return input.disk ? `${((mbps / input.disk.sequentialMBps) * 100).toFixed(1)}% disk` : "–";
    case "hermit":
      return exchangeShare(s, input.exchange) ?? "–";
    case "consume":
    case "kafka-consume":
    case "kafka-consume-2":
      return input.loopback ? `${((mbps / input.loopback.MBps) * 100).toFixed(1)}% loopback` : "–";
    case "durable":
      return fsyncMultiple(s, input);
    case "durable-wait": {
      const share = exchangeShare(s, input.durableExchange);
      return share === null ? fsyncMultiple(s, input) : `${fsyncMultiple(s, input)}, ${share}`;
    }
    case "latency":
      // Against the round trip measured right before each run, when there is one.
      if (s.p99OverRoundTrip !== undefined)
        return `p99 ${s.p99OverRoundTrip.toFixed(1)}x round trip before it`;
      return input.roundTrip && s.latencyUs
        ? `p99 ${(s.latencyUs.p99 / input.roundTrip.p99Us).toFixed(1)}x round trip`
        : "–";
    case "partitions-1":
      return "–";
    case "partitions-10k": {
      // Against the same system's rate with every key in one partition, in the same run.
      const one = input.summaries.find((x) => x.system === s.system && x.workload === "partitions-1");
      return one?.msgsPerSec && s.msgsPerSec
        ? `${((s.msgsPerSec / one.msgsPerSec) * 100).toFixed(0)}% of 1 partition`
        : "–";
    }
    case "cold-read": {
      // Against both ways of reading the disk: through the page cache, and with direct I/O.
      const cached = input.disk?.coldReadMBps;
      const direct = input.disk?.coldReadDirectMBps;
      if (!cached) return "–";
      const share = (ceiling: number) => `${((mbps / ceiling) * 100).toFixed(0)}%`;
      return direct
        ? `${share(cached)} cold disk read, ${share(direct)} direct`
        : `${share(cached)} cold disk read`;
    }
    case "connections-1k":
      // Against the same producer alone, just before, on the same server.
      return s.soloShare === undefined ? "–" : `${(s.soloShare * 100).toFixed(0)}% of alone`;
  }
}

/** msgs/s as a multiple of one writer doing 4 KiB write + fdatasync in a loop. */
function fsyncMultiple(s: Summary, input: TableInput): string {
  return input.disk && s.msgsPerSec
    ? `${((s.msgsPerSec * input.disk.syncWriteMedianUs) / 1e6).toFixed(2)}x fsync/s`
    : "–";
}

/** msgs/s as a share of a bare stop-and-wait exchange's, or null without one. */
function exchangeShare(s: Summary, exchange: ExchangeCeiling | undefined): string | null {
  return exchange && s.msgsPerSec
    ? `${((s.msgsPerSec / exchange.msgsPerSec) * 100).toFixed(1)}% exchange`
    : null;
}

/** For brokers that report it: the share of their CPU that went to GC. */
function gcNote(s: Summary): string {
  return s.brokerGcShare === undefined ? "" : `; broker GC ${(s.brokerGcShare * 100).toFixed(1)}%`;
}

/** For Conch's Kafka workloads: the broker's CPU per message over the native path's in the same run. */
function kafkaNote(summaries: readonly Summary[], s: Summary): string {
  const twin = NATIVE_TWIN[s.workload];
  if (s.system !== "conch" || !twin) return "";
  const ratio = kafkaCpuRatio(summaries, s.workload);
  return ratio === undefined ? "" : `; broker CPU/msg ${ratio.toFixed(2)}x ${twin}'s`;
}

/** For workloads with an idle span: the idle broker's CPU and resident memory. */
function idleNote(s: Summary): string {
  if (s.idleCpuShare === undefined && s.brokerRssBytes === undefined) return "";
  const cpu = s.idleCpuShare === undefined ? "?" : `${(s.idleCpuShare * 100).toFixed(2)}%`;
  const rss = s.brokerRssBytes === undefined ? "?" : `${(s.brokerRssBytes / 2 ** 20).toFixed(0)} MiB`;
  return `; idle: CPU ${cpu} of a core, RSS ${rss}`;
}

/** For workload 5: the rate once the server and client are warm. */
function warmNote(s: Summary): string {
  return s.warmMsgsPerSec === undefined ? "" : `; warm: ${thousands(s.warmMsgsPerSec)} msgs/s`;
}

/** For workload 6b: the rate until every acknowledged message was readable. */
function readableNote(s: Summary): string {
  return s.readableMsgsPerSec === undefined ? "" : `; readable: ${thousands(s.readableMsgsPerSec)} msgs/s`;
}

/** For workload 7: the producer's rate alone, and the share of it it kept among the crowd. */
function soloNote(s: Summary): string {
  if (s.soloMsgsPerSec === undefined || s.soloShare === undefined) return "";
  return `; alone: ${thousands(s.soloMsgsPerSec)} msgs/s, ${(s.soloShare * 100).toFixed(0)}% kept`;
}

/** For workload 8: the producer's latency alone, and how many times its p99 grew beside the reads. */
function soloLatencyNote(s: Summary): string {
  const alone = s.soloLatencyUs;
  if (alone === undefined || s.p99OverSolo === undefined) return "";
  return `; producer alone p50 / p99 ${usToMs(alone.p50)} / ${usToMs(alone.p99)} ms, p99 beside the reads ${s.p99OverSolo.toFixed(2)}x`;
}

/** For the latency workload: the part of the latency after the producer's send call. */
function transferNote(s: Summary): string {
  const t = s.transferUs;
  return t ? `; send call to receipt p50 / p99 ${usToMs(t.p50)} / ${usToMs(t.p99)} ms` : "";
}

function note(s: Summary, targetRate: number): string {
  const runs =
    s.runsOk < s.runs ? `${s.runsOk}/${s.runs} runs ok (${s.reason ?? ""})` : `median of ${s.runs}`;
  const others =
    s.otherCpuShare === undefined ? "" : `; others used ${(s.otherCpuShare * 100).toFixed(0)}% CPU`;
  const short =
    (s.msgsPerSec ?? 0) < targetRate * 0.95
      ? `; fell behind ${thousands(targetRate)} msg/s (latency = queue)`
      : "";
  return runs + others + short;
}
