/**
 * The file operations whose outcome decides what a log acknowledges: writes, data syncs,
 * truncation and preallocation. They go through this small interface so that tests can count
 * fsyncs, hold them back, or make a write fail part-way, and watch the log keep its promises.
 */

import {
  close,
  constants,
  fdatasync,
  ftruncate,
  ftruncateSync,
  open as openFd,
  write,
  writevSync,
} from "node:fs";
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
   * The same cut or extension, done on the calling thread; throws on failure. Optional: a new
   * segment file is extended with it when present (segment-preparer.ts), as the thread pool's
   * hand-off costs the event loop more than the ftruncate of a sparse file.
   */
  truncateSync?(file: FileHandle, length: number): void;
  /**
   * Tries to reserve disk blocks for bytes [offset, bytes) of the file at `path` (already that
   * long; offset defaults to 0). Resolves true when blocks were reserved; never rejects. A
   * `signal` aborted while the request waits its turn withdraws it (resolves false at once).
   */
  preallocate(path: string, bytes: number, offset?: number, signal?: AbortSignal): Promise<boolean>;
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
function preallocate(path: string, bytes: number, offset = 0, signal?: AbortSignal): Promise<boolean> {
  return bytes < PREALLOCATE_MIN_BYTES ? Promise.resolve(false) : fallocate(path, bytes, offset, signal);
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
  truncateSync: (file, length) => ftruncateSync(file.fd, length),
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
 * one, never a mix: write a temporary file, fsync it, rename it over, fsync the directory.
 */
export async function writeFileAtomically(path: string, dir: string, data: Uint8Array): Promise<void> {
  await (await stageFile(path, data, true)).commit();
  await syncDir(dir);
}

/** A file written under a temporary name, to be renamed over its own (`commit`) or removed (`discard`). */
export interface StagedFile {
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * Writes `data` to `<path>.tmp`, fsynced with `sync`; nothing reads that name. Without `sync` the
 * caller makes the file durable some other way (a stop's one syncfs, stop-sync.ts) before `commit`.
 */
export async function stageFile(path: string, data: Uint8Array, sync: boolean): Promise<StagedFile> {
  const tmp = `${path}.tmp`;
  const discard = () => unlink(tmp).catch(() => {});
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC;
  await writeAt(tmp, data, 0, flags, -1, sync).catch(async (err: unknown) => {
    await discard();
    throw err;
  });
  return { commit: () => rename(tmp, path), discard };
}

/**
 * `bytes` written at `position` of the file at `path` (opened with `flags`: by default it must
 * exist), which is then cut to `length` bytes when that is given, and fsynced with `sync`. With
 * the callback API: fs/promises makes a FileHandle (an event emitter), an abort check and a
 * promise per step, which cost the event loop more than the write when many small files are
 * written at once (index checkpoints, a stop's files: docs/performance/scale.md).
 */
export function writeAt(
  path: string,
  bytes: Uint8Array,
  position: number,
  flags: number = constants.O_WRONLY,
  length = -1,
  sync = false,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    openFd(path, flags, (openErr, fd) => {
      if (openErr) return reject(openErr);
      const done = (err: Error | null): void =>
        close(fd, (closeErr) => {
          const failure = err ?? closeErr;
          if (failure) reject(failure);
          else resolve();
        });
      const synced = (err: Error | null): void => (err || !sync ? done(err) : fdatasync(fd, done));
      write(fd, bytes, 0, bytes.length, position, (writeErr: Error | null, written: number) => {
        if (writeErr) return done(writeErr);
        if (written !== bytes.length)
          return done(new Error(`short write to ${path}: ${written} of ${bytes.length}`));
        if (length < 0) return synced(null);
        ftruncate(fd, length, synced);
      });
    });
  });
}
