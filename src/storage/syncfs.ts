/**
 * syncfs(2) of the file system holding a directory: every byte written to it, by any file, and
 * its metadata, on stable storage when the call returns. Node has no binding: coreutils' `sync -f`
 * makes the call, run by the storage layer's shell helper (line-helper.ts), one directory a line.
 *
 * What it reports: a write-back error on the file system (Linux 5.8 and later) that no other
 * caller of syncfs has seen already; one seen (and so cleared) by another program's syncfs in
 * between is missed, and the data it lost is found by the reads' checksums instead. It also writes
 * back other programs' dirty data on the same file system, and waits for it.
 */
import { stat } from "node:fs/promises";
import { LineHelper } from "./line-helper.js";

/** syncfs(2) of the file system holding `dir`; rejects when it fails. */
export type SyncFs = (dir: string) => Promise<void>;

const helper = new LineHelper(
  'while IFS= read -r path; do if sync -f -- "$path" 2>/dev/null; then echo ok; else echo no; fi; done',
);

/** `sync -f -- <dir>` through the helper. */
export const syncFileSystem: SyncFs = async (dir) => {
  if (!(await helper.ask(dir))) throw new Error(`sync -f ${dir} failed (or there is no sync -f here)`);
};

const orAllHelper = new LineHelper(
  'while IFS= read -r path; do if sync -f -- "$path" 2>/dev/null || sync; then echo ok; else echo no; fi; done',
);

/**
 * `syncFileSystem`, or where `sync -f` is missing or fails, sync(2) of every file system (plain
 * `sync`): for what must become durable whatever the platform offers (the shared log's retirement,
 * shared-log/shared-log.ts), at the cost of writing back other file systems too.
 */
export const syncFileSystemOrAll: SyncFs = async (dir) => {
  if (!(await orAllHelper.ask(dir))) throw new Error(`neither sync -f ${dir} nor sync succeeded`);
};

/** One of `dirs` for each device they are on (a directory that cannot be read counts as its own). */
async function onePerDevice(dirs: Iterable<string>): Promise<string[]> {
  const list = [...dirs];
  const byDevice = new Map<number | string, string>();
  const stats = await Promise.all(list.map((d) => stat(d).catch(() => null)));
  list.forEach((dir, i) => {
    const key = stats[i]?.dev ?? dir;
    if (!byDevice.has(key)) byDevice.set(key, dir);
  });
  return [...byDevice.values()];
}

/** syncfs of every file system that one of `dirs` is on. */
export async function syncFileSystems(
  dirs: Iterable<string>,
  syncfs: SyncFs = syncFileSystem,
): Promise<void> {
  for (const dir of await onePerDevice(dirs)) await syncfs(dir);
}
