/**
 * The clean-stop manifest, `<dataDir>/clean-stop`: written by a broker that closed every partition
 * log without error, it holds each partition's offsets and size as the close left them. The next
 * open reads it, removes it (durably, before anything can be appended), and opens no log of a
 * topic it covers: describe, metadata and list-offsets answer from the manifest until a partition
 * is first used or the background opener reaches it (docs/design.md, start-up). A missing,
 * damaged or mismatched manifest only means the topic's logs are opened at once, as after a crash.
 *
 * Layout (big-endian; docs/design.md has the same table):
 *
 *   0   4  magic "CSTP"
 *   4   4  version (1)
 *   8   4  topic count
 *   then per topic: name length (2), name (UTF-8), partition count (4), and per partition
 *           logStartOffset (8, float64), logEndOffset (8, float64), sizeBytes (8, float64),
 *           segmentCount (4)
 *   end 4  CRC32C of every byte before it
 */

import { open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { crc32c } from "@node-rs/crc32";
import { syncDir, writeFileAtomically } from "../storage/file-ops.js";
import { PartitionSummary } from "./partition-view.js";

export const CLEAN_STOP_FILE = "clean-stop";
const MAGIC = 0x43535450; // "CSTP"
const VERSION = 1;
const HEADER_BYTES = 12;
const PARTITION_BYTES = 28;
const CRC_BYTES = 4;
/** A topic's name is at most this long (format/topic-name.ts allows 249 characters). */
const MAX_NAME_BYTES = 1024;

/** Topic name -> the summary of each of its partitions, in partition order. */
export type CleanStop = Map<string, PartitionSummary[]>;

/** The manifest's bytes for `topics` (each topic's partitions in order). */
export function encodeCleanStop(topics: ReadonlyMap<string, readonly PartitionSummary[]>): Buffer {
  let size = HEADER_BYTES + CRC_BYTES;
  for (const [name, parts] of topics)
    size += 2 + Buffer.byteLength(name) + 4 + parts.length * PARTITION_BYTES;
  const buf = Buffer.alloc(size);
  buf.writeUInt32BE(MAGIC, 0);
  buf.writeUInt32BE(VERSION, 4);
  buf.writeUInt32BE(topics.size, 8);
  let at = HEADER_BYTES;
  for (const [name, parts] of topics) {
    const len = buf.write(name, at + 2);
    buf.writeUInt16BE(len, at);
    at += 2 + len;
    buf.writeUInt32BE(parts.length, at);
    at += 4;
    for (const p of parts) {
      buf.writeDoubleBE(p.logStartOffset, at);
      buf.writeDoubleBE(p.logEndOffset, at + 8);
      buf.writeDoubleBE(p.sizeBytes, at + 16);
      buf.writeUInt32BE(p.segmentCount, at + 24);
      at += PARTITION_BYTES;
    }
  }
  buf.writeUInt32BE(crc32c(buf.subarray(0, at)), at);
  return buf;
}

/**
 * Decodes a manifest, or returns null when it is not one this version wrote whole (wrong magic or
 * version, a length that does not add up, a bad CRC, offsets that are not offsets).
 */
export function decodeCleanStop(buf: Buffer): CleanStop | null {
  if (buf.length < HEADER_BYTES + CRC_BYTES) return null;
  if (buf.readUInt32BE(0) !== MAGIC || buf.readUInt32BE(4) !== VERSION) return null;
  const end = buf.length - CRC_BYTES;
  if (buf.readUInt32BE(end) !== crc32c(buf.subarray(0, end))) return null;
  const topics: CleanStop = new Map();
  const count = buf.readUInt32BE(8);
  let at = HEADER_BYTES;
  for (let t = 0; t < count; t++) {
    if (at + 2 > end) return null;
    const len = buf.readUInt16BE(at);
    if (len > MAX_NAME_BYTES || at + 2 + len + 4 > end) return null;
    const name = buf.toString("utf8", at + 2, at + 2 + len);
    at += 2 + len;
    const n = buf.readUInt32BE(at);
    at += 4;
    if (n > (end - at) / PARTITION_BYTES) return null;
    const parts: PartitionSummary[] = new Array(n);
    for (let p = 0; p < n; p++) {
      const start = buf.readDoubleBE(at);
      const logEnd = buf.readDoubleBE(at + 8);
      const size = buf.readDoubleBE(at + 16);
      if (!isCount(start) || !isCount(logEnd) || !isCount(size) || start > logEnd) return null;
      parts[p] = new PartitionSummary(start, logEnd, size, buf.readUInt32BE(at + 24));
      at += PARTITION_BYTES;
    }
    if (topics.has(name)) return null;
    topics.set(name, parts);
  }
  return at === end ? topics : null;
}

/**
 * Reads and removes the manifest of `dataDir`: null when there is none, or when it is longer than
 * `maxPartitions` partitions could make it, or damaged. The removal is made durable before this
 * returns, so a crash from here on never finds a manifest that no longer describes the logs.
 */
export async function takeCleanStop(dataDir: string, maxPartitions: number): Promise<CleanStop | null> {
  const path = join(dataDir, CLEAN_STOP_FILE);
  let bytes: Buffer;
  try {
    const file = await open(path, "r");
    try {
      const size = (await file.stat()).size;
      // Every topic has a partition: a longer file was not written for this broker's limit.
      const max = HEADER_BYTES + CRC_BYTES + maxPartitions * (PARTITION_BYTES + 2 + MAX_NAME_BYTES + 4);
      if (size > max) bytes = Buffer.alloc(0);
      else {
        bytes = Buffer.allocUnsafe(size);
        const { bytesRead } = await file.read(bytes, 0, size, 0);
        if (bytesRead !== size) bytes = Buffer.alloc(0);
      }
    } finally {
      await file.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  await unlink(path);
  await syncDir(dataDir);
  return decodeCleanStop(bytes);
}

/** Writes the manifest for `topics` (atomically, fsynced): called once every log is closed. */
export async function writeCleanStop(
  dataDir: string,
  topics: ReadonlyMap<string, readonly PartitionSummary[]>,
): Promise<void> {
  await writeFileAtomically(join(dataDir, CLEAN_STOP_FILE), dataDir, encodeCleanStop(topics));
}

function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}
