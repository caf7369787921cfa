/**
 * The security stores' files: read with a size bound before anything is allocated for them, and
 * replaced so that a crash leaves the old file or the new one, never half of either (temporary
 * file, fsync, rename over, fsync of the directory). The steps go through `DurableFileOps` so a
 * test can fail any one of them and check what is left. (storage/file-ops.ts does the same for
 * the log's small files; this layer may not import storage.)
 */
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { ConchError, ErrorCode } from "../format/errors.js";

export interface DurableFileOps {
  /** Creates or truncates `path`, writes `data` and fsyncs it. */
  writeSynced(path: string, data: Uint8Array): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** fsync of a directory, so that a rename in it survives a crash. */
  syncDir(dir: string): Promise<void>;
}

export const defaultDurableFileOps: DurableFileOps = {
  async writeSynced(path, data) {
    const handle = await open(path, "w", 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  rename,
  async syncDir(dir) {
    const handle = await open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/** The temporary name a replacement is written under; a leftover one is never read. */
export function temporaryPath(path: string): string {
  return `${path}.tmp`;
}

export async function replaceFileDurably(
  path: string,
  data: Uint8Array,
  ops: DurableFileOps = defaultDurableFileOps,
): Promise<void> {
  const tmp = temporaryPath(path);
  try {
    await ops.writeSynced(tmp, data);
    await ops.rename(tmp, path);
    await ops.syncDir(dirname(path));
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw new ConchError(ErrorCode.STORAGE_ERROR, `Could not write ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * The bytes of `path`, or null when it does not exist. A file over `maxBytes` is refused before
 * it is read (INVALID_CONFIG naming `what`, e.g. "--tls-cert"), as is anything but a regular file.
 */
export async function readBoundedFile(path: string, maxBytes: number, what: string): Promise<Buffer | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    throw new ConchError(ErrorCode.INVALID_CONFIG, `Cannot read ${what} ${path}: ${(err as Error).message}`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile())
      throw new ConchError(ErrorCode.INVALID_CONFIG, `${what} ${path} is not a regular file`);
    if (stat.size > maxBytes) {
      throw new ConchError(
        ErrorCode.INVALID_CONFIG,
        `${what} ${path} is ${stat.size} bytes; the limit is ${maxBytes}`,
      );
    }
    // Read one byte past the bound, in case the file grew since stat.
    const buf = Buffer.allocUnsafe(stat.size + 1);
    let done = 0;
    while (done < buf.length) {
      const { bytesRead } = await handle.read(buf, done, buf.length - done, done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    if (done > stat.size)
      throw new ConchError(ErrorCode.INVALID_CONFIG, `${what} ${path} changed while it was read`);
    return buf.subarray(0, done);
  } finally {
    await handle.close();
  }
}
