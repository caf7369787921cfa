/**
 * Prepares the next segment's file ahead of a roll, so that a roll is a rename: the file is
 * created under a name that is not a segment's, extended to segmentBytes with ftruncate and, ahead
 * of a roll, given real blocks for its first chunk with fallocate where possible (block-reserve.ts reserves the
 * rest as writes advance). A roll then renames it to `<base offset>.wal` and fsyncs the directory.
 */
import type { FileHandle } from "node:fs/promises";
import { open, rename, unlink } from "node:fs/promises";
import { reserveChunk } from "./block-reserve.js";
import { childPath } from "./child-path.js";
import { type FileOps, syncDir } from "./file-ops.js";
import { PREPARED_NAME } from "./segment-name.js";

export interface PreparedFile {
  file: FileHandle;
  size: number;
  /** Bytes from the start with blocks reserved: 0 when none yet, `size` when none is to be tried. */
  reserved: number;
}

export class SegmentPreparer {
  readonly #dir: string;
  readonly #path: string;
  readonly #ops: FileOps;
  #pending: Promise<PreparedFile> | null = null;
  /** Withdraws the pending file's reservation while it waits its turn (block-reserve.ts). */
  #withdraw: AbortController | null = null;

  constructor(dir: string, ops: FileOps) {
    this.#dir = dir;
    this.#path = childPath(dir, PREPARED_NAME);
    this.#ops = ops;
  }

  /**
   * Starts preparing a file of `bytes` unless one is already on its way; `reserve` false leaves it
   * without blocks (the segment a log cut back to nothing starts over with, log-truncation.ts).
   */
  prepare(bytes: number, reserve = true): void {
    if (this.#pending !== null) return;
    this.#withdraw = new AbortController();
    this.#pending = this.#create(bytes, reserve, this.#withdraw.signal);
    this.#pending.catch(() => {}); // surfaces in take()
  }

  /**
   * The prepared file (waiting for it if needed), renamed to `target` with the directory synced. A
   * roll does not wait for a reservation still queued behind other logs': it goes without one.
   */
  async take(bytes: number, target: string, reserve = true): Promise<PreparedFile> {
    this.prepare(bytes, reserve);
    const pending = this.#pending!;
    this.#pending = null;
    this.#withdraw?.abort();
    const prepared = await pending;
    try {
      if (prepared.size !== bytes) {
        await this.#ops.truncate(prepared.file, bytes);
        prepared.size = bytes;
        prepared.reserved = Math.min(prepared.reserved, bytes);
      }
      await rename(this.#path, target);
      await syncDir(this.#dir);
    } catch (err) {
      await prepared.file.close().catch(() => {});
      throw err;
    }
    return prepared;
  }

  /** Closes and removes a prepared file nobody took. */
  async discard(): Promise<void> {
    const pending = this.#pending;
    this.#pending = null;
    if (pending === null) return;
    this.#withdraw?.abort();
    try {
      const prepared = await pending;
      await prepared.file.close();
    } catch {
      // nothing was created, or it is gone already
    }
    await unlink(this.#path).catch(() => {});
  }

  async #create(bytes: number, reserve: boolean, withdraw: AbortSignal): Promise<PreparedFile> {
    const file = await createSegmentFile(this.#path, bytes, this.#ops);
    try {
      if (!reserve) return { file, size: bytes, reserved: 0 };
      const chunk = reserveChunk(bytes);
      const ok = await this.#ops.preallocate(this.#path, chunk, 0, withdraw);
      // Withdrawn: none yet, reserved as writes advance; refused: none to be tried.
      return { file, size: bytes, reserved: ok ? chunk : withdraw.aborted ? 0 : bytes };
    } catch (err) {
      await file.close().catch(() => {});
      throw err;
    }
  }
}

/** A new segment file of `bytes` (sparse), opened for reading and writing. */
export async function createSegmentFile(path: string, bytes: number, ops: FileOps): Promise<FileHandle> {
  const file = await open(path, "w+");
  try {
    if (ops.truncateSync !== undefined) ops.truncateSync(file, bytes);
    else await ops.truncate(file, bytes);
  } catch (err) {
    await file.close().catch(() => {});
    throw err;
  }
  return file;
}
