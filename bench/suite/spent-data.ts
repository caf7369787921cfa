import { execFile } from "node:child_process";
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { sleep } from "./deadline.js";

// The data directories of stopped servers, removed between runs rather than between workloads.
// Deleting the gigabyte that workloads 1 and 2 write disturbs the disk for several seconds on this
// machine (its file system discards freed blocks): a 4 KiB write + fdatasync that takes 0.5 ms took
// up to 74 ms in the 2 s after such a delete, 39 ms in the next 2 s, and was back to normal only
// after 6-8 s; a workload measured in that window (workload 3 right after 1 and 2) measured the
// harness's cleanup. So a stopped server's directory waits here, and `clearSpentData` removes them
// all at the end of a run, then waits for the disk to settle before the next run starts.

const spent: string[] = [];

const PROBE_INTERVAL_MS = 200;
/** The disk counts as settled after this many probes in a row under SETTLED_PROBE_MS. */
const SETTLED_PROBES = 10;
const SETTLED_PROBE_MS = 5;
const SETTLE_LIMIT_MS = 30_000;

/** Keeps a stopped server's data directory until the end of the run. */
export function retire(dataDir: string): void {
  spent.push(dataDir);
}

/** Removes every retired directory now (exit and signal handlers). */
export function clearSpentDataSync(): void {
  for (const dir of spent.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
}

/**
 * Removes every retired directory, then waits (up to 30 s) until a small write + fdatasync has
 * taken under 5 ms ten times in a row, 200 ms apart. Resolves with the milliseconds it waited.
 */
export async function clearSpentData(): Promise<number> {
  const started = performance.now();
  for (const dir of spent.splice(0)) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  await promisify(execFile)("sync").catch(() => {});
  const probePath = join(tmpdir(), `conch-bench-settle-${process.pid}`);
  const fd = openSync(probePath, "w");
  const block = Buffer.alloc(4096, 1);
  try {
    let quiet = 0;
    while (quiet < SETTLED_PROBES && performance.now() - started < SETTLE_LIMIT_MS) {
      const t = performance.now();
      writeSync(fd, block, 0, block.length, 0);
      fdatasyncSync(fd);
      quiet = performance.now() - t < SETTLED_PROBE_MS ? quiet + 1 : 0;
      await sleep(PROBE_INTERVAL_MS);
    }
  } finally {
    closeSync(fd);
    rmSync(probePath, { force: true });
  }
  return performance.now() - started;
}
