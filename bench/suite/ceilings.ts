import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { newAlignedBuffer } from "../../src/format/aligned-buffers.js";

// The disk's limits, measured in the same run as the brokers so every figure can be read as a
// fraction of what the disk can do at all from Node (the loopback interface's and the exchanges'
// are in exchange-ceiling.ts).

const MiB = 1024 * 1024;
const execFileAsync = promisify(execFile);

export interface DiskCeiling {
  /** Sequential write of `bytes` in 1 MiB chunks followed by one fdatasync, in MB/s (10^6 bytes). */
  sequentialMBps: number;
  /**
   * The same file read back in 1 MiB reads after its pages were dropped from the page cache, in
   * MB/s; absent when they could not be dropped (then a read would measure memory, not the disk).
   */
  coldReadMBps?: number;
  /** The same cold read with direct I/O (O_DIRECT, no page cache), as the broker reads old segments. */
  coldReadDirectMBps?: number;
  bytes: number;
  /** One 4 KiB write + fdatasync, median of `syncSamples`, in microseconds. */
  syncWriteMedianUs: number;
  syncSamples: number;
  dir: string;
}

export async function measureDisk(bytes = 1024 * MiB, syncSamples = 200): Promise<DiskCeiling> {
  const dir = await mkdtemp(join(tmpdir(), "conch-bench-disk-"));
  try {
    const chunk = Buffer.alloc(MiB, 0x5a);
    const file = await open(join(dir, "seq"), "w");
    const start = performance.now();
    try {
      for (let written = 0; written < bytes; written += MiB) await file.write(chunk, 0, MiB);
      await file.datasync();
    } finally {
      await file.close();
    }
    const seconds = (performance.now() - start) / 1000;
    const coldReadMBps = await measureColdRead(join(dir, "seq"), bytes);
    const coldReadDirectMBps = await measureColdReadDirect(join(dir, "seq"), bytes);

    const small = Buffer.alloc(4096, 0x33);
    const syncFile = await open(join(dir, "sync"), "w");
    const samples: number[] = [];
    try {
      for (let i = 0; i < syncSamples; i++) {
        const t = performance.now();
        await syncFile.write(small, 0, small.length, i * small.length);
        await syncFile.datasync();
        samples.push((performance.now() - t) * 1000);
      }
    } finally {
      await syncFile.close();
    }
    samples.sort((a, b) => a - b);
    return {
      sequentialMBps: bytes / 1e6 / seconds,
      ...(coldReadMBps === null ? {} : { coldReadMBps }),
      ...(coldReadDirectMBps === null ? {} : { coldReadDirectMBps }),
      bytes,
      syncWriteMedianUs: samples[samples.length >> 1] ?? 0,
      syncSamples,
      dir: tmpdir(),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Reads a written, synced file after dropping its pages from the page cache: GNU dd's
 * `iflag=nocache count=0` asks the kernel to drop the whole file's clean pages (posix_fadvise
 * DONTNEED), with no privilege needed. Null when dd is missing or refuses.
 */
async function measureColdRead(path: string, bytes: number): Promise<number | null> {
  try {
    await execFileAsync("dd", [`if=${path}`, "iflag=nocache", "count=0", "status=none"]);
  } catch {
    return null;
  }
  return readRate(await open(path, "r"), Buffer.allocUnsafe(MiB), bytes);
}

/**
 * The cold read with direct I/O: the file opened with O_DIRECT, 1 MiB reads into a page-aligned
 * buffer. Null where there is no O_DIRECT or no aligned buffer.
 */
async function measureColdReadDirect(path: string, bytes: number): Promise<number | null> {
  const chunk = newAlignedBuffer(MiB);
  if (chunk === null || constants.O_DIRECT === undefined) return null;
  let file: FileHandle;
  try {
    file = await open(path, constants.O_RDONLY | constants.O_DIRECT);
  } catch {
    return null;
  }
  return readRate(file, chunk, bytes);
}

/** Reads `bytes` of `file` from its start in 1 MiB reads into `chunk`, closes it; MB/s (10^6 bytes). */
async function readRate(file: FileHandle, chunk: Buffer, bytes: number): Promise<number> {
  const start = performance.now();
  try {
    for (let read = 0; read < bytes; read += MiB) await file.read(chunk, 0, MiB, read);
  } finally {
    await file.close();
  }
  return bytes / 1e6 / ((performance.now() - start) / 1000);
}
