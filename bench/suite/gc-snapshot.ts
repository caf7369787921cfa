import { open, stat } from "node:fs/promises";
import { sleep } from "./deadline.js";
import type { GcSnapshot } from "./types.js";

// The broker's GC share, taken the way the rounds in docs/performance/ took it by hand: the broker runs
// with `--import scripts/gc-share.mjs`, which prints its CPU and GC totals on SIGUSR2 to its log; a
// snapshot before and after a workload give the share of the broker's CPU that went to GC.

const PREFIX = "gc-share ";
const ANSWER_MS = 3_000;

/** The last gc-share line in `text`, or null when there is none (or it does not parse). */
export function lastGcSnapshot(text: string): GcSnapshot | null {
  const at = text.lastIndexOf(PREFIX);
  if (at < 0) return null;
  const end = text.indexOf("\n", at);
  if (end < 0) return null;
  try {
    const v = JSON.parse(text.slice(at + PREFIX.length, end)) as Partial<GcSnapshot>;
    return typeof v.cpuMs === "number" && typeof v.gcMs === "number" && typeof v.gcCount === "number"
      ? { cpuMs: v.cpuMs, gcMs: v.gcMs, gcCount: v.gcCount }
      : null;
  } catch {
    return null;
  }
}

/** GC time over CPU time between two snapshots; null when no CPU time passed. */
export function gcShare(before: GcSnapshot, after: GcSnapshot): number | null {
  const cpu = after.cpuMs - before.cpuMs;
  return cpu > 0 ? Math.max(0, after.gcMs - before.gcMs) / cpu : null;
}

/**
 * Signals the broker and waits for the line it appends to its log; null when it did not answer in
 * time (a broker started without the preload ignores nothing: SIGUSR2 would end it, so callers
 * only ask brokers they started with it).
 */
export async function requestGcSnapshot(pid: number, logPath: string): Promise<GcSnapshot | null> {
  const from = (await stat(logPath)).size;
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + ANSWER_MS;
  while (Date.now() < deadline) {
    const snapshot = lastGcSnapshot(await readFrom(logPath, from));
    if (snapshot) return snapshot;
    await sleep(10);
  }
  return null;
}

async function readFrom(path: string, offset: number): Promise<string> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    const length = Math.min(size - offset, 1 << 20);
    if (length <= 0) return "";
    const buf = Buffer.alloc(length);
    const { bytesRead } = await file.read(buf, 0, length, offset);
    return buf.toString("utf8", 0, bytesRead);
  } finally {
    await file.close();
  }
}
