import { readFileSync } from "node:fs";

// Linux reports process CPU time in clock ticks; USER_HZ is 100 on every mainstream architecture
// (it is a kernel ABI constant, independent of CONFIG_HZ).
const TICKS_PER_SECOND = 100;

/**
 * User + system CPU seconds a process has used so far, from /proc/<pid>/stat, or null when the
 * process is gone or /proc is unavailable. Includes reaped children (cutime/cstime), which is
 * where a server's background helpers (Redis's fork for an AOF rewrite) are accounted.
 */
export function processCpuSeconds(pid: number): number | null {
  return statSeconds(pid, [11, 12, 13, 14]);
}

/**
 * CPU seconds of this process's children that have exited and been reaped (cutime + cstime), or
 * null where unreadable: what a worker that runs a client program (kcat) spent outside Node.
 */
export function reapedChildrenCpuSeconds(): number | null {
  return statSeconds(process.pid, [13, 14]);
}

/** The sum of some of /proc/<pid>/stat's clock-tick fields, in seconds. */
function statSeconds(pid: number, fieldIndexes: readonly number[]): number | null {
  const text = readProc(`/proc/${pid}/stat`);
  if (text === null) return null;
  // The command name (field 2) is in parentheses and may hold spaces: parse after the last ')'.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // After the name, field 3 (state) is index 0, so utime (14) is index 11 and cutime (16) 13.
  const ticks = fieldIndexes.reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return ticks / TICKS_PER_SECOND;
}

/** A process's resident memory in bytes, from /proc/<pid>/status, or null where unreadable. */
export function processRssBytes(pid: number): number | null {
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(readProc(`/proc/${pid}/status`) ?? "")?.[1];
  return kib === undefined ? null : Number(kib) * 1024;
}

/**
 * CPU seconds the whole machine has spent busy (all cores, everything but idle and iowait), from
 * /proc/stat, or null where unavailable. The suite subtracts the broker's and the client's share to
 * tell how much of the machine other processes took during a measurement.
 */
export function machineBusySeconds(): number | null {
  const text = readProc("/proc/stat");
  if (text === null) return null;
  const line = text.slice(0, text.indexOf("\n"));
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user/nice)
  const busy = ticks.slice(0, 8).reduce((sum, t, i) => (i === 3 || i === 4 ? sum : sum + t), 0);
  return busy / TICKS_PER_SECOND;
}

/** A /proc file's text, or null when the process is gone or /proc is unavailable. */
function readProc(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}
