/**
 * The file operations whose outcome decides what a log acknowledges: writes, data syncs,
 * truncation and preallocation. They go through this small interface so that tests can count
 * fsyncs, hold them back, or make a write fail part-way, and watch the log keep its promises.
 */

import { fdatasync, writevSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { open, rename, unlink } from "node:fs/promises";
import { fallocate } from "./fallocate.js";

export interface FileOps {
  /** Writes `buffers` at `position`; resolves with the bytes written (short on a full disk). */
  writev(file: FileHandle, buffers: Buffer[], position: number): Promise<number>;
  /**
   * The same write, done on the calling thread; throws on failure. Optional: a log uses it, when
   * present, for writes while no fsync of the log runs (see log-writer.ts).
   */
  writevSync?(file: FileHandle, buffers: Buffer[], position: number): number;
  /** fdatasync: the data, and the metadata needed to read it back, are on stable storage. */
  datasync(file: FileHandle): Promise<void>;
  /**
   * The same on a bare descriptor, told by callback. Optional: the group commit uses it when
   * present, as it costs the event loop less than the file handle's promise; the descriptor's
   * owner must keep it open until `done` is called (Segment.syncStarted).
   */
  datasyncFd?(fd: number, done: (err: Error | null) => void): void;
  truncate(file: FileHandle, length: number): Promise<void>;
  /**
   * Tries to reserve disk blocks for bytes [offset, bytes) of the file at `path` (already that
   * long; offset defaults to 0). Resolves true when blocks were reserved; never rejects.
   */
  preallocate(path: string, bytes: number, offset?: number): Promise<boolean>;
  /**
   * fsync of a directory, for the entries a log's first open makes (its directory, its first
   * segment), which its first fsync makes durable. Optional: the shared one (shared-dir-sync.ts).
   */
  syncDir?(dir: string): Promise<void>;
}

/**
 * Below this, reserving blocks is not worth a process spawn: the file is only extended with
 * ftruncate (a sparse file, blocks allocated as written).
 */
export const PREALLOCATE_MIN_BYTES = 4 * 1024 * 1024;

/** Reserves blocks for segments from PREALLOCATE_MIN_BYTES up (see fallocate.ts). */
function preallocate(path: string, bytes: number, offset = 0): Promise<boolean> {
  return bytes < PREALLOCATE_MIN_BYTES ? Promise.resolve(false) : fallocate(path, bytes, offset);
}

export const defaultFileOps: FileOps = {
  async writev(file, buffers, position) {
    const { bytesWritten } = await file.writev(buffers, position);
    return bytesWritten;
  },
  writevSync: (file, buffers, position) => writevSync(file.fd, buffers, position),
  datasync: (file) => file.datasync(),
  datasyncFd: fdatasync,
  truncate: (file, length) => file.truncate(length),
  preallocate,
};

/** Reads up to `length` bytes at file `position` into `buf[0..]`; resolves with the bytes read (short at the end). */
export async function readFully(
  file: FileHandle,
  buf: Buffer,
  length: number,
  position: number,
): Promise<number> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await file.read(buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

/** fsync of a directory, so that a create, rename or unlink in it survives a crash. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces the file at `path` with `data` so that a crash leaves either the old file or the new
 * one, never a mix: write a temporary file, fsync it, rename it over, fsync the directory. Without
 * `durableName` the directory is not fsynced: a crash may then leave the old file, for callers to
 * which an older file is only a longer replay.
 */
export async function writeFileAtomically(
  path: string,
  dir: string,
  data: Uint8Array,
  durableName = true,
): Promise<void> {
  const tmp = `${path}.tmp`;
  const handle = await open(tmp, "w");
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await handle.close();
  await rename(tmp, path);
  if (durableName) await syncDir(dir);
}
