import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";

/**
 * Writes dirty pages back (`sync`) and drops the page cache (clean pages, the file system's cached
 * blocks included) machine-wide. Returns false when the cache could not be dropped: it needs root.
 * Workload 8 drops it so that old data is read from the disk; the suite drops it around a sitting so
 * that no recently freed inode is left for ext4 to step over (spent-data.ts).
 */
export function dropPageCache(): boolean {
  execFileSync("sync");
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "1");
    return true;
  } catch {
    return false;
  }
}
