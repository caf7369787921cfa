import type { SystemId } from "./clients.js";
import { thousands, usToMs } from "./format-number.js";
import { kafkaCpuRatio } from "./kafka-targets.js";
import type { Summary } from "./results.js";
import type { WorkloadId } from "./workloads/workload.js";

// A plain SVG bar chart, written by hand: one panel per workload, one bar per system, each panel on
// its own scale (the workloads differ by orders of magnitude). The latency panel draws p50, p99 and
// p99.9 per system on a log scale.

export interface ChartInput {
  summaries: readonly Summary[];
  systems: readonly SystemId[];
  systemNames: Record<SystemId, string>;
  workloads: readonly WorkloadId[];
  workloadTitles: Record<WorkloadId, string>;
  subtitle: string;
  /** The latency workload's target rate; a system that fell short is marked as such. */
  latencyRate: number;
}

const COLORS: Record<SystemId, string> = { conch: "#2563eb", nats: "#16a34a", redis: "#dc2626" };
const WIDTH = 820;
const LABEL_W = 170;
const BAR_MAX = 480;
const BAR_H = 18;
const GAP = 6;
const PANEL_GAP = 22;
const TITLE_H = 22;

export function renderChart(input: ChartInput): string {
  const parts: string[] = [];
  let y = 56;
  for (const workload of input.workloads) {
    const rows = input.systems.map((system) => ({
      system,
      s: input.summaries.find((x) => x.system === system && x.workload === workload),
    }));
    const title = input.workloadTitles[workload] + panelUnit(workload) + kafkaNote(input.summaries, workload);
    parts.push(text(16, y + 14, title, 14, "bold"));
    y += TITLE_H;
    if (workload === "latency") y = latencyPanel(parts, rows, input, y);
    else y = throughputPanel(parts, rows, input, y);
    y += PANEL_GAP;
  }
  const height = y + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    text(16, 24, "Conch vs NATS JetStream vs Redis Streams", 18, "bold"),
    text(16, 42, input.subtitle, 12, "normal", "#555555"),
    ...parts,
    "</svg>",
    "",
  ].join("\n");
}

type Row = { system: SystemId; s: Summary | undefined };

function panelUnit(workload: WorkloadId): string {
  return workload === "latency"
    ? " — ms from scheduled send to receipt at 50,000 msg/s (log scale)"
    : " — messages per second";
}

/** For the Kafka workloads: Conch's broker CPU per message over the native path's, in the same run. */
function kafkaNote(summaries: readonly Summary[], workload: WorkloadId): string {
  const ratio = kafkaCpuRatio(summaries, workload);
  return ratio === undefined
    ? ""
    : ` (Conch's broker CPU per message ${ratio.toFixed(2)}x the native path's)`;
}

function throughputPanel(parts: string[], rows: Row[], input: ChartInput, y0: number): number {
  let y = y0;
  const max = Math.max(1, ...rows.map((r) => (r.s?.status === "ok" ? (r.s.msgsPerSec ?? 0) : 0)));
  for (const { system, s } of rows) {
    parts.push(text(16, y + 13, input.systemNames[system], 12));
    if (s?.status === "ok" && s.msgsPerSec !== undefined) {
      const w = Math.max(1, (s.msgsPerSec / max) * BAR_MAX);
      parts.push(rect(LABEL_W, y, w, BAR_H, COLORS[system]));
      parts.push(text(LABEL_W + w + 6, y + 13, `${thousands(s.msgsPerSec)}`, 12));
    } else {
      parts.push(text(LABEL_W, y + 13, notRun(s), 11, "normal", "#888888"));
    }
    y += BAR_H + GAP;
  }
  return y;
}

function latencyPanel(parts: string[], rows: Row[], input: ChartInput, y0: number): number {
  let y = y0;
  const values = rows.flatMap((r) =>
    r.s?.latencyUs ? [r.s.latencyUs.p50, r.s.latencyUs.p99, r.s.latencyUs.p999] : [],
  );
  const lo = Math.log10(Math.max(1, Math.min(...values, 100) / 2));
  const hi = Math.log10(Math.max(...values, 1000) * 1.2);
  const scale = (us: number) => Math.max(1, ((Math.log10(Math.max(us, 1)) - lo) / (hi - lo)) * BAR_MAX);
  const shades = [1, 0.7, 0.45];
  for (const { system, s } of rows) {
    const lat = s?.status === "ok" ? s.latencyUs : undefined;
    if (!lat) {
      parts.push(text(16, y + 13, input.systemNames[system], 12));
      parts.push(text(LABEL_W, y + 13, notRun(s), 11, "normal", "#888888"));
      y += BAR_H + GAP;
      continue;
    }
    const labels = ["p50", "p99", "p99.9"];
    [lat.p50, lat.p99, lat.p999].forEach((us, i) => {
      const w = scale(us);
      parts.push(text(16, y + 12, i === 0 ? input.systemNames[system] : "", 12));
      parts.push(text(LABEL_W - 36, y + 12, labels[i]!, 10, "normal", "#555555"));
      parts.push(rect(LABEL_W, y, w, BAR_H - 4, COLORS[system], shades[i]!));
      parts.push(text(LABEL_W + w + 6, y + 12, `${usToMs(us)} ms`, 11));
      y += BAR_H - 2;
    });
    const rate = s?.msgsPerSec ?? 0;
    if (rate < input.latencyRate * 0.95) {
      const note = `sustained only ${thousands(rate)} msg/s: the latency is a growing queue`;
      parts.push(text(LABEL_W, y + 11, note, 11, "normal", "#888888"));
      y += BAR_H - 2;
    }
    y += GAP;
  }
  return y;
}

function notRun(s: Summary | undefined): string {
  const reason = s?.reason ?? "not measured";
  return `${s?.status === "failed" ? "failed" : "not run"}: ${reason.length > 90 ? `${reason.slice(0, 87)}...` : reason}`;
}

function rect(x: number, y: number, w: number, h: number, fill: string, opacity = 1): string {
  return `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${h}" fill="${fill}" fill-opacity="${opacity}"/>`;
}

function text(
  x: number,
  y: number,
  content: string,
  size: number,
  weight = "normal",
  fill = "#111111",
): string {
  return `<text x="${x.toFixed(1)}" y="${y}" font-size="${size}" font-weight="${weight}" fill="${fill}">${escapeXml(content)}</text>`;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
