/**
 * The producer snapshot file (docs/format.md, "The producer snapshot"): a partition's producer
 * table as of a log offset, written at a clean close and after each segment roll, so that opening
 * the log reads it and replays only the batches after its offset instead of the whole log.
 *
 *   0  u32  magic "CPS1"
 *   4  u32  CRC32C of everything after this field
 *   8  u64  offset: the snapshot holds every batch below it
 *  16  u32  producer count, then per producer, least recently used first:
 *       u64 producer id, u16 epoch, u16 batch count (1..5), u64 last use (ms since the epoch),
 *       then per batch, oldest first: u32 first sequence, u32 last sequence, u64 base offset,
 *       u64 last offset
 */

import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { crc32c } from "@node-rs/crc32";
import { MAX_PRODUCER_EPOCH, MAX_SEQUENCE } from "../../format/layout.js";
import { MAX_PRODUCER_ID } from "../../format/producer-fields.js";
import { readU16, readU32, readU64Safe, writeU16, writeU32, writeU64 } from "../../format/u64.js";
import { type StagedFile, stageFile } from "../file-ops.js";
import { ProducerEntry, REMEMBERED_BATCHES } from "./producer-entry.js";
import type { ProducerTable } from "./producer-table.js";

export const PRODUCER_SNAPSHOT_FILE = "producers.snapshot";
const MAGIC = 0x43505331; // "CPS1"
const HEADER_BYTES = 20;
const PRODUCER_BYTES = 20;
const BATCH_BYTES = 24;

export interface ProducerSnapshot {
  offset: number;
  producers: Array<[number, ProducerEntry]>;
}

export function encodeProducerSnapshot(table: ProducerTable, offset: number): Buffer {
  let size = HEADER_BYTES;
  for (const [, entry] of table.entries()) size += PRODUCER_BYTES + entry.batchCount * BATCH_BYTES;
  const out = Buffer.alloc(size);
  writeU32(out, 0, MAGIC);
  writeU64(out, 8, offset);
  writeU32(out, 16, table.size);
  let p = HEADER_BYTES;
  for (const [id, entry] of table.entries()) {
    writeU64(out, p, id);
    writeU16(out, p + 8, entry.epoch);
    writeU16(out, p + 10, entry.batchCount);
    writeU64(out, p + 12, Math.max(0, Math.floor(entry.lastUsedMs)));
    p += PRODUCER_BYTES;
    for (let i = 0; i < entry.batchCount; i++) {
      writeU32(out, p, entry.field(i, 0));
      writeU32(out, p + 4, entry.field(i, 1));
      writeU64(out, p + 8, entry.field(i, 2));
      writeU64(out, p + 16, entry.field(i, 3));
      p += BATCH_BYTES;
    }
  }
  writeU32(out, 4, crc32c(out.subarray(8)));
  return out;
}

/**
 * The snapshot in `buf`, or null when it is not one this version wrote whole (a torn or damaged
 * file is rebuilt from the log instead). Every count and value is checked before it is used.
 */
export function decodeProducerSnapshot(buf: Buffer): ProducerSnapshot | null {
  if (buf.length < HEADER_BYTES || readU32(buf, 0) !== MAGIC) return null;
  if (readU32(buf, 4) !== crc32c(buf.subarray(8))) return null;
  const offset = readU64Safe(buf, 8);
  const count = readU32(buf, 16);
  if (offset < 0 || count > (buf.length - HEADER_BYTES) / PRODUCER_BYTES) return null;
  const producers: Array<[number, ProducerEntry]> = [];
  let p = HEADER_BYTES;
  for (let n = 0; n < count; n++) {
    if (buf.length - p < PRODUCER_BYTES) return null;
    const id = readU64Safe(buf, p);
    const epoch = readU16(buf, p + 8);
    const batches = readU16(buf, p + 10);
    const lastUsedMs = readU64Safe(buf, p + 12);
    p += PRODUCER_BYTES;
    if (id < 0 || id > MAX_PRODUCER_ID || epoch > MAX_PRODUCER_EPOCH || lastUsedMs < 0) return null;
    if (batches < 1 || batches > REMEMBERED_BATCHES || buf.length - p < batches * BATCH_BYTES) return null;
    const entry = new ProducerEntry(epoch, lastUsedMs);
    for (let i = 0; i < batches; i++) {
      const first = readU32(buf, p);
      const last = readU32(buf, p + 4);
      const base = readU64Safe(buf, p + 8);
      const lastOffset = readU64Safe(buf, p + 16);
      p += BATCH_BYTES;
      if (first > MAX_SEQUENCE || last > MAX_SEQUENCE || base < 0 || lastOffset < base) return null;
      entry.add(first, last, base, lastOffset);
    }
    producers.push([id, entry]);
  }
  return p === buf.length ? { offset, producers } : null;
}

/**
 * Reads the snapshot of the log in `dir`; null when there is none, or it is unusable or larger
 * than a table of `maxProducers` can be (checked before it is read).
 */
export async function readProducerSnapshot(
  dir: string,
  maxProducers: number,
): Promise<ProducerSnapshot | null> {
  const path = join(dir, PRODUCER_SNAPSHOT_FILE);
  try {
    const { size } = await stat(path);
    if (size > HEADER_BYTES + maxProducers * (PRODUCER_BYTES + REMEMBERED_BATCHES * BATCH_BYTES)) return null;
    return decodeProducerSnapshot(await readFile(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/**
 * Written whole under a temporary name (fsynced with `sync`), renamed by the caller (`commit`), the
 * directory not fsynced: a crash that loses the rename leaves the snapshot before, and the open
 * replays the log from its offset. Without `sync` the caller makes the file durable before the
 * rename (a stop's one syncfs, stop-sync.ts).
 */
export function stageProducerSnapshot(
  dir: string,
  table: ProducerTable,
  offset: number,
  sync: boolean,
): Promise<StagedFile> {
  return stageFile(join(dir, PRODUCER_SNAPSHOT_FILE), encodeProducerSnapshot(table, offset), sync);
}
