/**
 * What `conch top` prints: a table of topics (partitions, messages stored, rates in and out) and
 * one of groups (state, members, lag and how fast it changes), from the event feed's snapshot and
 * the admin API's topic list. Plain text; the command decides whether to redraw a screen.
 */
import type { Snapshot } from "./top-feed.js";

export interface TopicRow {
  name: string;
  internal: boolean;
  partitions: number;
  messages: number;
}

export interface TopView {
  snapshot: Snapshot;
  topics: readonly TopicRow[];
  /** Each group's lag in the previous snapshot and when, for the trend column. */
  previousLag: ReadonlyMap<string, { lag: number; atMs: number }>;
}

const whole = new Intl.NumberFormat("en");

function bytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

/** Rows of cells as aligned lines: the first column left-aligned, the others right-aligned. */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) widths[i] = Math.max(widths[i] ?? 0, row[i]!.length);
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

/** The lines of one view; at most `maxTopics` topic rows (the busiest first). */
export function topLines(view: TopView, maxTopics = Number.POSITIVE_INFINITY): string[] {
  const rates = new Map(view.snapshot.topics.map((t) => [t.topic, t]));
  const topics = view.topics
    .filter((t) => !t.internal)
    .map((t) => ({ row: t, rate: rates.get(t.name) }))
    .sort(
      (a, b) =>
        (b.rate?.messagesInPerSec ?? 0) +
          (b.rate?.messagesOutPerSec ?? 0) -
          ((a.rate?.messagesInPerSec ?? 0) + (a.rate?.messagesOutPerSec ?? 0)) ||
        a.row.name.localeCompare(b.row.name),
    );
  const shown = topics.slice(0, maxTopics);
  const topicTable = alignColumns([
    ["TOPIC", "PARTITIONS", "MESSAGES", "IN MSG/S", "OUT MSG/S", "IN B/S", "OUT B/S"],
    ...shown.map(({ row, rate }) => [
      row.name,
      String(row.partitions),
      whole.format(row.messages),
      whole.format(rate?.messagesInPerSec ?? 0),
      whole.format(rate?.messagesOutPerSec ?? 0),
      bytes(rate?.bytesInPerSec ?? 0),
      bytes(rate?.bytesOutPerSec ?? 0),
    ]),
  ]);
  if (shown.length < topics.length) topicTable.push(`… and ${topics.length - shown.length} more topics`);
  const groups = [...view.snapshot.groups].sort((a, b) => b.lag - a.lag || a.group.localeCompare(b.group));
  const groupTable = alignColumns([
    ["GROUP", "STATE", "MEMBERS", "LAG", "LAG CHANGE/S"],
    ...groups.map((g) => [
      g.group,
      g.state,
      String(g.members),
      whole.format(g.lag),
      trend(view, g.group, g.lag),
    ]),
  ]);
  return [
    ...topicTable,
    ...(topics.length === 0 ? ["(no topics)"] : []),
    "",
    ...groupTable,
    ...(groups.length === 0 ? ["(no consumer groups)"] : []),
  ];
}

function trend(view: TopView, group: string, lag: number): string {
  const before = view.previousLag.get(group);
  const seconds = before === undefined ? 0 : (view.snapshot.timeMs - before.atMs) / 1000;
  if (before === undefined || seconds <= 0) return "-";
  const change = Math.round((lag - before.lag) / seconds);
  return change > 0 ? `+${whole.format(change)}` : whole.format(change);
}
