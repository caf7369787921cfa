import { execFile } from "node:child_process";
import type { Dirent } from "node:fs";
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from "node:fs";
import { readdir, rm, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { sleep } from "./deadline.js";

// The data directories of stopped servers, emptied between runs rather than between workloads.
// Deleting the gigabyte that workloads 1 and 2 write disturbs the disk for several seconds on this
// machine (its file system discards freed blocks): a 4 KiB write + fdatasync that takes 0.5 ms took
// up to 74 ms in the 2 s after such a delete, 39 ms in the next 2 s, and was back to normal only
// after 6-8 s; a workload measured in that window (workload 3 right after 1 and 2) measured the
// harness's cleanup. So a stopped server's directory waits here, and `clearSpentData` empties them
// all at the end of a run, then waits for the disk to settle before the next run starts.
//
// Emptied, not removed, until the last run has ended: every file is truncated to nothing (its
// blocks freed), but no file or directory is unlinked. ext4 without a journal, as on this machine,
// avoids reusing an inode freed in the last 60 s, or 360 s while its inode table block is dirty
// (fs/ext4/ialloc.c, `recently_deleted`), and looks up every such inode on its way to a free one:
// after the tens of thousands of files of a run (10,000 partitions or streams) were removed,
// making a directory and two files took 240-870 µs of system time for minutes, against 45-49 µs
// otherwise, so a later run's workload that creates many files (6b) measured the previous run's
// cleanup (docs/performance/scale.md, "Workload 6b: the file system's freed inodes").
//
// That check looks only at inode table blocks still in memory (a block not cached "must have been
// written out"), so after the last run's removal, and before the first run of a sitting (whatever
// removed files before it: tests, an earlier sitting), the suite writes the file system back and
// drops the page cache (page-cache.ts), block buffers included. Measured here: 2,000 directories of two
// files each took 306-351 µs apiece right after 20,000 such were removed, with `sync` alone as
// well; after `sync` and dropping the page cache, 61-62 µs, as on a file system nothing was removed
// from (53 µs).

/** Stopped servers' directories, to be emptied at the end of their run. */
const spent: string[] = [];
/** Emptied directories, removed once no run follows. */
const emptied: string[] = [];

const PROBE_INTERVAL_MS = 200;
/** The disk counts as settled after this many probes in a row under SETTLED_PROBE_MS. */
const SETTLED_PROBES = 10;
const SETTLED_PROBE_MS = 5;
const SETTLE_LIMIT_MS = 30_000;

/** Keeps a stopped server's data directory until the end of the run. */
export function retire(dataDir: string): void {
  spent.push(dataDir);
}

/** Removes every retired and emptied directory now (exit and signal handlers). */
export function clearSpentDataSync(): void {
  for (const dir of [...spent.splice(0), ...emptied.splice(0)]) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
}

/**
 * Frees the data of every retired directory: empties them when another run follows
 * (`runFollows`), removes them (and those emptied before) after the last. Then waits (up to 30 s)
 * until a small write + fdatasync has taken under 5 ms ten times in a row, 200 ms apart. Resolves
 * with the milliseconds it waited.
 */
export async function clearSpentData(runFollows: boolean): Promise<number> {
  const started = performance.now();
  if (runFollows) {
    for (const dir of spent.splice(0)) {
      await emptyFiles(dir);
      emptied.push(dir);
    }
  } else {
    for (const dir of [...spent.splice(0), ...emptied.splice(0)])
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
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

/** Truncates every regular file under `dir` to nothing, unlinking none. */
async function emptyFiles(dir: string): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return; // gone already
  }
  for (const e of entries) {
    if (e.isFile()) await truncate(join(e.parentPath, e.name)).catch(() => {});
  }
}
