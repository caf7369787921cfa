/**
 * A partition log's directory as its open finds it or makes it. A new partition's directory and
 * first segment are made by its first open (its first produce, fetch or offset lookup); their
 * entries are made durable by fsyncs of the parent and of the directory that the log's first
 * fsync of data waits for (partition-log.ts, log-writer.ts), not by the open.
 */
import { mkdirSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import type { FileOps } from "./file-ops.js";
import { syncDirShared } from "./shared-dir-sync.js";

/**
 * The names in `dir`, or null when there was no `dir` and it was made now (its entry is not durable
 * yet: the log's first fsync makes it so). `likelyNew` tries the make first, which saves a failed
 * listing where the directory is expected not to exist (a partition never written).
 */
export async function listOrCreate(dir: string, likelyNew: boolean): Promise<string[] | null> {
  if (likelyNew && makeDir(dir)) return null;
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    await mkdir(dir, { recursive: true });
    return null;
  }
}

/** The directory fsync of `ops`, or the shared one. */
export function dirSync(ops: FileOps): (dir: string) => Promise<void> {
  return ops.syncDir === undefined ? syncDirShared : (dir) => ops.syncDir!(dir);
}

/**
 * Makes `dir` (its parent must exist); false when it exists already or its parent does not. On the
 * calling thread: the first produce to a new topic of 10,000 partitions makes 10,000 directories,
 * and the thread pool's hand-off of each cost the event loop more than the mkdir itself
 * (docs/performance/scale.md, "Workload 6b: a new partition's first open, second round").
 */
function makeDir(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOENT") return false;
    throw err;
  }
}
